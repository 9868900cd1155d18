import { expect } from 'vitest';
import { createRole, createUser, type TestUser } from '../platform/helpers';
import { createDoctype, type DoctypeDef } from '../support/doctypes';
import type { CallResult, TestServer, TestTenant } from '../support/server';

/**
 * The small domain the list-work tests (bulk delete, bulk edit, export, list settings, sidebar
 * counts) run on, made at runtime in a fresh tenant:
 *
 * - `Project` (hash names): title, status (Select Open/Done), note, budget (Currency at permlevel 1),
 *   parent_project (a Link to Project). System Manager may do everything at both levels; `Project
 *   Owner` may do everything but only to their own Projects and only at level 0; `Project Viewer`
 *   may read and report, nothing else (no export, no write, no delete).
 * - `Project Task`: a Link to Project (a linked Project cannot be deleted).
 * - `Expense` (submittable): title.
 */

export const OWNER_ROLE = 'Project Owner';
export const VIEWER_ROLE = 'Project Viewer';

const NONE = { read: 0, write: 0, create: 0, delete: 0, report: 0, export: 0, share: 0, print: 0, email: 0 };

export const PROJECT: DoctypeDef = {
  name: 'Project',
  autoname: 'hash',
  fields: [
    { fieldname: 'title', label: 'Title', fieldtype: 'Data' },
    { fieldname: 'status', label: 'Status', fieldtype: 'Select', options: 'Open\nDone', default: 'Open' },
    { fieldname: 'note', label: 'Note', fieldtype: 'Small Text' },
    { fieldname: 'budget', label: 'Budget', fieldtype: 'Currency', permlevel: 1 },
    { fieldname: 'parent_project', label: 'Parent Project', fieldtype: 'Link', options: 'Project' },
  ],
  permissions: [
    { role: 'System Manager', read: 1, write: 1, create: 1, delete: 1, report: 1, export: 1 },
    { role: 'System Manager', permlevel: 1, read: 1, write: 1 },
    { ...NONE, role: OWNER_ROLE, if_owner: 1, read: 1, write: 1, create: 1, delete: 1, report: 1, export: 1 },
    { ...NONE, role: VIEWER_ROLE, read: 1, report: 1 },
  ],
};

export const PROJECT_TASK: DoctypeDef = {
  name: 'Project Task',
  autoname: 'hash',
  fields: [
    { fieldname: 'subject', label: 'Subject', fieldtype: 'Data' },
    { fieldname: 'project', label: 'Project', fieldtype: 'Link', options: 'Project' },
  ],
};

export const EXPENSE: DoctypeDef = {
  name: 'Expense',
  autoname: 'hash',
  is_submittable: 1,
  fields: [{ fieldname: 'title', label: 'Title', fieldtype: 'Data' }],
  permissions: [{ role: 'System Manager', read: 1, write: 1, create: 1, delete: 1, submit: 1, cancel: 1, amend: 1, report: 1, export: 1 }],
};

export interface ListWorkTenant {
  t: TestTenant;
  /** Has Project Owner (own Projects only, level 0). */
  owner: TestUser;
  /** Has Project Viewer (read and report only). */
  viewer: TestUser;
}

/** A fresh tenant with the domain and its two users (emails made unique per tenant). */
export async function listWorkTenant(server: TestServer, prefix = 'lw'): Promise<ListWorkTenant> {
  const t = await server.tenant(prefix);
  await createRole(t, OWNER_ROLE);
  await createRole(t, VIEWER_ROLE);
  for (const def of [PROJECT, PROJECT_TASK, EXPENSE]) await createDoctype(t, def);
  const owner = await createUser(server, t, `owner@${t.name}.test`, [OWNER_ROLE]);
  const viewer = await createUser(server, t, `viewer@${t.name}.test`, [VIEWER_ROLE]);
  return { t, owner, viewer };
}

/** Inserts a document (as `auth`, the Administrator by default); answers its name. */
export async function make(t: TestTenant, doctype: string, values: Record<string, unknown>, auth?: string): Promise<string> {
  const res = await t.call('POST', `/api/resource/${encodeURIComponent(doctype)}`, { json: values, ...(auth ? { auth } : {}) });
  expect(res.status, res.text).toBe(200);
  return String(res.body.data.name);
}

/** The names of a DocType's documents (as the Administrator), sorted. */
export async function names(t: TestTenant, doctype: string): Promise<string[]> {
  const res = await t.call('GET', `/api/resource/${encodeURIComponent(doctype)}`, { query: { limit_page_length: 0 } });
  expect(res.status, res.text).toBe(200);
  return (res.body.data as Array<{ name: string }>).map((r) => r.name).sort();
}

/** Calls a method with form arguments (the query string for GET), each not a text as its JSON. */
export function callMethod(t: TestTenant, verb: string, method: string, args: Record<string, unknown>, auth?: string): Promise<CallResult> {
  const form = Object.fromEntries(Object.entries(args).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  const sent = verb === 'GET' ? { query: form } : { form };
  return t.call(verb, `/api/method/${method}`, { ...sent, ...(auth ? { auth } : {}) });
}
