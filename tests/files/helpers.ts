import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseJson } from '../support/json';
import type { CallResult, TestTenant } from '../support/server';

/** Helpers for the file upload / download tests: raw multipart uploads, downloads, the store on disk. */

export type Upload = CallResult;

export interface UploadOptions {
  /** `token key:secret`; the tenant's Administrator when omitted; `null` for Guest. */
  auth?: string | null;
  fields?: Record<string, string>;
  /** Multipart part name; `file` unless given. */
  partName?: string;
  contentType?: string;
  path?: string;
  method?: string;
}

/** POST /api/method/upload_file as a browser would: FormData through fetch. */
export async function upload(
  url: string,
  t: TestTenant,
  content: Uint8Array<ArrayBuffer> | string | undefined,
  filename: string,
  o: UploadOptions = {},
): Promise<Upload> {
  const form = new FormData();
  if (content !== undefined) {
    const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content;
    form.append(o.partName ?? 'file', new Blob([bytes], { type: o.contentType ?? 'application/octet-stream' }), filename);
  }
  for (const [k, v] of Object.entries(o.fields ?? {})) form.append(k, v);
  const headers: Record<string, string> = { 'X-Frappe-Site-Name': t.name, Accept: 'application/json' };
  const auth = o.auth === undefined ? t.auth : o.auth;
  if (auth) headers.Authorization = auth;
  const res = await fetch(new URL(o.path ?? '/api/method/upload_file', url), { method: o.method ?? 'POST', headers, body: form });
  const text = await res.text();
  return { status: res.status, body: parseJson(text), text, headers: res.headers };
}

export interface Download {
  status: number;
  bytes: Buffer;
  headers: Headers;
  body: any;
}

/** GET a file URL of a tenant (as its Administrator unless `auth` is given; `null` for Guest). */
export async function download(
  url: string,
  t: TestTenant,
  fileUrl: string,
  auth: string | null = t.auth,
  headers: Record<string, string> = {},
): Promise<Download> {
  const h: Record<string, string> = { 'X-Frappe-Site-Name': t.name, ...headers };
  if (auth) h.Authorization = auth;
  const res = await fetch(new URL(fileUrl, url), { headers: h });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, bytes, headers: res.headers, body: parseJson(bytes.toString('utf8')) };
}

/**
 * Where a tenant's file would be on disk: the test servers keep their stores in
 * `<tmp>/quire-files-*`; tenant schemas are unique, so the path names one file of one server.
 */
export function pathsOnDisk(schema: string, isPrivate: boolean, name: string): string[] {
  const tmp = os.tmpdir();
  return fs
    .readdirSync(tmp)
    .filter((d) => d.startsWith('quire-files-'))
    .map((d) => path.join(tmp, d, schema, isPrivate ? 'private' : 'public', 'files', name))
    .filter((p) => fs.existsSync(p));
}

export function randomBytes(n: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 7919 + (i >> 3) * 31 + 17) & 0xff;
  return out;
}

/** A download as the shape expectError takes. */
export function asResult(d: Download): CallResult {
  return { status: d.status, body: d.body, text: d.bytes.toString('utf8'), headers: d.headers };
}
