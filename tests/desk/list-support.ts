import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { createUser } from '../oauth/support';
import type { TestTenant } from '../support/server';

/** The list suites' shared parts: runtime DocTypes and ToDos made through the API, the list's rows read from the page. */

export const ALL_RIGHTS = { role: 'System Manager', read: 1, write: 1, create: 1, delete: 1, submit: 1, cancel: 1, amend: 1, report: 1, export: 1 };

export async function createDoctype(t: TestTenant, def: Record<string, unknown>): Promise<void> {
  const res = await t.call('POST', '/api/resource/DocType', { json: { module: 'Custom', permissions: [ALL_RIGHTS], ...def } });
  expect(res.status, res.text).toBe(200);
}

export async function insert(t: TestTenant, doctype: string, values: Record<string, unknown>, auth?: string): Promise<string> {
  const res = await t.call('POST', `/api/resource/${doctype}`, { json: values, ...(auth ? { auth } : {}) });
  expect(res.status, res.text).toBe(200);
  return res.body.data.name as string;
}

/** The body rows of the list table. */
export function listRows(page: Page) {
  return page.locator('table.list tbody tr');
}

/** The names of the rows shown, in order. */
export function shownNames(page: Page): Promise<string[]> {
  return listRows(page).evaluateAll((rows) => rows.map((r) => r.getAttribute('data-name') ?? ''));
}

/** The checkbox of the row of document `name`. */
export function rowBox(page: Page, name: string) {
  return page.locator(`table.list tbody tr[data-name="${name}"] input[type="checkbox"]`);
}

/** The selection bar (a region named "Selection"). */
export function selectionBar(page: Page) {
  return page.getByRole('region', { name: 'Selection' });
}

/** Another System Manager, with API keys of their own: `Authorization` for calls made as them. */
export async function otherUser(t: TestTenant, email: string, roles?: string[]): Promise<string> {
  await createUser(t, email, roles);
  const keys = await t.call('POST', '/api/method/frappe.core.doctype.user.user.generate_keys', { json: { user: email } });
  expect(keys.status, keys.text).toBe(200);
  const key = (await t.call('GET', `/api/resource/User/${email}`)).body.data.api_key as string;
  return `token ${key}:${keys.body.message.api_secret as string}`;
}
