import { expect } from 'vitest';
import type { CallResult, TestServer, TestTenant } from '../support/server';

/**
 * Shared helpers for the record API behaviour tests (/api/resource/<DocType>[/<name>]); the DocTypes
 * they create, and createDoctype, are in ../support/doctypes.
 */

/** `YYYY-MM-DD HH:MM:SS[.ffffff]` — Python's str(datetime). */
export const DATETIME_RE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{6})?$/;
export const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
export const HASH_RE = /^[0-9a-v]{10}$/;
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Standard keys every /api/resource document carries (frappe.model.default_fields). */
export const DEFAULT_FIELDS = ['name', 'owner', 'creation', 'modified', 'modified_by', 'docstatus', 'idx', 'doctype'] as const;

export function path(doctype: string, name?: string | number, prefix = '/api/resource'): string {
  const base = `${prefix}/${encodeURIComponent(doctype)}`;
  return name === undefined ? base : `${base}/${encodeURIComponent(String(name))}`;
}

/** POST a document; asserts 200 and returns `data`. */
export async function insert(t: TestTenant, doctype: string, doc: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await t.call('POST', path(doctype), { json: doc });
  if (res.status !== 200) throw new Error(`insert into ${doctype} failed: ${res.status} ${res.text}`);
  return res.body.data;
}

/** GET a document; asserts 200 and returns `data`. */
export async function fetchDoc(t: TestTenant, doctype: string, name: string | number): Promise<Record<string, any>> {
  const res = await t.call('GET', path(doctype, name));
  if (res.status !== 200) throw new Error(`get ${doctype} ${name} failed: ${res.status} ${res.text}`);
  return res.body.data;
}

/** Every name of a (parent) DocType, through the list endpoint. */
export async function listNames(t: TestTenant, doctype: string): Promise<Array<string | number>> {
  const res = await t.call('GET', path(doctype), { query: { fields: '["name"]', limit_page_length: 0 } });
  if (res.status !== 200) throw new Error(`list ${doctype} failed: ${res.status} ${res.text}`);
  return (res.body.data as Array<{ name: string | number }>).map((r) => r.name);
}

/** Row count of a DocType's table straight from Postgres (catches orphaned child rows). */
export async function tableCount(server: TestServer, t: TestTenant, doctype: string): Promise<number> {
  const { rows } = await server.db.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM "${t.schema.replace(/"/g, '""')}"."tab${doctype.replace(/"/g, '""')}"`,
  );
  return Number(rows[0]!.n);
}

/** The message texts of `_server_messages` (a JSON string of JSON strings). */
export function serverMessages(body: any): string[] {
  if (body?._server_messages === undefined) return [];
  expect(typeof body._server_messages).toBe('string');
  const outer = JSON.parse(body._server_messages) as unknown[];
  expect(Array.isArray(outer)).toBe(true);
  return outer.map((inner) => {
    expect(typeof inner).toBe('string');
    return (JSON.parse(inner as string) as { message: string }).message;
  });
}

/** Frappe's v1 error envelope: `exc_type`; `exc` a JSON string of a list of strings; `_server_messages` well formed. */
export function expectEnvelope(res: CallResult): void {
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  expect(res.body).toBeTypeOf('object');
  expect(typeof res.body.exc_type).toBe('string');
  if (res.status !== 404) {
    expect(typeof res.body.exc).toBe('string');
    const exc = JSON.parse(res.body.exc) as unknown;
    expect(Array.isArray(exc)).toBe(true);
    for (const line of exc as unknown[]) expect(typeof line).toBe('string');
  }
  serverMessages(res.body);
}

/** Asserts a refusal: status, exc_type and a well-formed envelope. */
export function expectError(res: CallResult, status: number, excType: string): void {
  if (res.status !== status || res.body?.exc_type !== excType) {
    throw new Error(`expected ${status} ${excType}, got ${res.status} ${res.text.slice(0, 600)}`);
  }
  expectEnvelope(res);
}

/** Removes the volatile standard fields so two reads of one document can be compared. */
export function stable(doc: Record<string, any>): Record<string, any> {
  const { modified: _m, ...rest } = doc;
  return rest;
}
