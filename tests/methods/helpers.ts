import type { CallOptions, CallResult, TestTenant } from '../support/server';
import { insert } from '../record-api/helpers';
import { createDoctype, LIBRARY } from '../support/doctypes';

/**
 * Shared set-up for the frappe.client / frappe.desk.search method tests: the small library domain
 * (LIBRARY in ../support/doctypes) created at runtime in a fresh tenant.
 */

export function method(t: TestTenant, verb: string, name: string, options: CallOptions = {}): Promise<CallResult> {
  return t.call(verb, `/api/method/${name}`, options);
}

/** The Python client's legacy RPC: `POST /` with form fields `cmd=<method>&…`. */
export function legacyPost(t: TestTenant, cmd: string, form: Record<string, string>, auth?: string): Promise<CallResult> {
  return t.call('POST', '/', { form: { cmd, ...form }, ...(auth ? { auth } : {}) });
}

/** The Python client's `GET /?cmd=<method>&…`. */
export function legacyGet(t: TestTenant, cmd: string, query: Record<string, string>, auth?: string): Promise<CallResult> {
  return t.call('GET', '/', { query: { cmd, ...query }, ...(auth ? { auth } : {}) });
}

/** A fresh tenant (made by `create`) with the library's DocTypes. */
export async function libraryTenant(create: () => Promise<TestTenant>): Promise<TestTenant> {
  const t = await create();
  for (const def of LIBRARY) await createDoctype(t, def);
  return t;
}

export async function genre(t: TestTenant, name: string, description?: string): Promise<string> {
  const doc = await insert(t, 'Genre', { genre_name: name, ...(description ? { description } : {}) });
  return String(doc.name);
}

export async function book(t: TestTenant, values: Record<string, unknown>): Promise<Record<string, any>> {
  return insert(t, 'Book', values);
}

/** A DocPerm row that only reads (DocPerm's defaults grant write, create and delete too, as in Frappe). */
export function readOnly(role: string): Record<string, unknown> {
  return { role, read: 1, write: 0, create: 0, delete: 0 };
}
