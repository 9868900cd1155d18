// One iteration of each scenario. The tenant is picked round-robin by the scenario's iteration
// number across the whole test (exec.scenario.iterationInTest), so every tenant gets an equal
// share whatever the VU count (the fairness script's iterations each load their one tenant).
// State that k6 keeps per VU (module variables live once per VU there) is keyed by VU id here, so
// the Node runner, which runs every VU in one module instance, behaves the same.
import { check } from 'k6';
import encoding from 'k6/encoding';
import exec from 'k6/execution';
import type { RefinedResponse } from 'k6/http';
import { HEAVY_LIST_QUERY, LIST_QUERY, METHOD_CALLS } from '../scenarios.js';
import { call, field, jsonOf, query, type TenantTarget } from './api.ts';
import { floodRefused, listRows, tokenFetches } from './metrics.ts';
import type { SetupData } from './setup.ts';

const LIST_PATH = `/api/resource/ToDo?${query(LIST_QUERY)}`;
const HEAVY_LIST_PATH = `/api/resource/ToDo?${query(HEAVY_LIST_QUERY)}`;

function pick<T>(items: readonly T[], n: number): T {
  const item = items[n % items.length];
  if (item === undefined) throw new Error('nothing to pick from');
  return item;
}

function tenantFor(data: SetupData): { tenant: TenantTarget; n: number } {
  const n = exec.scenario.iterationInTest;
  return { tenant: pick(data.tenants, n), n };
}

/** A seeded ToDo of the tenant, spread so consecutive iterations read different rows. */
function todoOf(tenant: TenantTarget, n: number): string {
  return pick(tenant.todos, Math.floor(n / 7) * 7919 + n);
}

function ok(res: RefinedResponse<'text'>, name: string, extra?: (res: RefinedResponse<'text'>) => boolean): boolean {
  return check(res, { [`${name}: 200`]: (r) => r.status === 200, ...(extra ? { [`${name}: body`]: extra } : {}) });
}

function listOk(res: RefinedResponse<'text'>, name: string): void {
  const rows = field(res, 'data');
  const count = Array.isArray(rows) ? rows.length : 0;
  if (res.status === 200) listRows.add(count);
  ok(res, name, () => count === 20);
}

async function readPair(tenant: TenantTarget, n: number, auth: string | undefined, prefix: string): Promise<RefinedResponse<'text'>> {
  const name = todoOf(tenant, n);
  const one = await call(tenant, 'GET', `/api/resource/ToDo/${encodeURIComponent(name)}`, { name: `${prefix}todo_get`, ...(auth ? { auth } : {}) });
  ok(one, `${prefix}todo_get`, (r) => {
    const doc = field(r, 'data');
    return typeof doc === 'object' && doc !== null && (doc as Record<string, unknown>).name === name;
  });
  const list = await call(tenant, 'GET', LIST_PATH, { name: `${prefix}todo_list`, ...(auth ? { auth } : {}) });
  listOk(list, `${prefix}todo_list`);
  return list;
}

/** reads: GET one ToDo, then the list of 20. */
export async function reads(data: SetupData): Promise<void> {
  const { tenant, n } = tenantFor(data);
  await readPair(tenant, n, undefined, '');
}

/** writes: POST a ToDo, PUT an update, then DELETE it (unless WRITE_CLEANUP=0). */
export async function writes(data: SetupData): Promise<void> {
  const { tenant, n } = tenantFor(data);
  const description = `load-write ${exec.vu.idInTest}-${exec.vu.iterationInScenario}`;
  const created = await call(tenant, 'POST', '/api/resource/ToDo', {
    name: 'todo_create',
    json: { description, status: 'Open', priority: pick(['High', 'Medium', 'Low'], n), date: '2026-06-15' },
  });
  const doc = field(created, 'data');
  const name = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>).name : undefined;
  if (!ok(created, 'todo_create', () => typeof name === 'string') || typeof name !== 'string') return;
  const path = `/api/resource/ToDo/${encodeURIComponent(name)}`;
  const updated = await call(tenant, 'PUT', path, { name: 'todo_update', json: { status: 'Closed', description: `${description} (closed)` } });
  ok(updated, 'todo_update', (r) => {
    const d = field(r, 'data');
    return typeof d === 'object' && d !== null && (d as Record<string, unknown>).status === 'Closed';
  });
  if (data.writeCleanup) {
    const deleted = await call(tenant, 'DELETE', path, { name: 'todo_delete', expected: [202] });
    check(deleted, { 'todo_delete: 202': (r) => r.status === 202 });
  }
}

/** methods: each of METHOD_CALLS once, in order. */
export async function methods(data: SetupData): Promise<void> {
  const { tenant, n } = tenantFor(data);
  const todo = todoOf(tenant, n);
  for (const m of METHOD_CALLS) {
    const args: Record<string, string> = {};
    for (const [k, v] of Object.entries(m.args)) args[k] = v.split('{todo}').join(todo);
    const qs = query(args);
    const res = await call(tenant, 'GET', `/api/method/${m.method}${qs ? `?${qs}` : ''}`, { name: `method:${m.name}` });
    ok(res, `method:${m.name}`, (r) => field(r, 'message') !== undefined);
  }
}

export interface Token {
  value: string;
  /** ms since the epoch after which it is renewed (a minute before it expires). */
  renewAt: number;
}

/** Tokens this VU renewed itself (keyed by VU and tenant: one module instance serves every VU in the Node runner). */
const renewed = new Map<string, Token>();

/** A client_credentials token of the tenant's OAuth client, from the auth service. */
export async function fetchToken(tenant: TenantTarget, name: string): Promise<{ res: RefinedResponse<'text'>; token?: Token }> {
  const res = await call(tenant, 'POST', '/oauth/token', {
    name,
    auth: `Basic ${encoding.b64encode(`${tenant.clientId}:${tenant.clientSecret}`)}`,
    form: { grant_type: 'client_credentials' },
    authService: true,
  });
  const body = jsonOf(res);
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const value = record.access_token;
  const expiresIn = typeof record.expires_in === 'number' ? record.expires_in : 300;
  check(res, { [`${name}: 200`]: (r) => r.status === 200, [`${name}: access_token`]: () => typeof value === 'string' });
  return typeof value === 'string' ? { res, token: { value, renewAt: Date.now() + Math.max(expiresIn - 60, expiresIn / 2) * 1000 } } : { res };
}

/** tokens: one client_credentials token from the auth service (what a machine client does on start and on expiry). */
export async function tokens(data: SetupData): Promise<void> {
  const { tenant } = tenantFor(data);
  await fetchToken(tenant, 'oauth_token');
}

/**
 * bearer_reads: GET one + the list with a Bearer token, as a machine client holding one does.
 * setup() fetched a token per tenant; a VU renews it when it is about to expire (or was refused).
 */
export async function bearerReads(data: SetupData): Promise<void> {
  const { tenant, n } = tenantFor(data);
  const key = `${exec.vu.idInTest}:${tenant.name}`;
  let token = renewed.get(key) ?? tenant.bearer;
  if (!token || token.renewAt <= Date.now()) {
    token = (await fetchToken(tenant, 'oauth_token_renew')).token;
    tokenFetches.add(1);
    if (!token) return;
    renewed.set(key, token);
  }
  const last = await readPair(tenant, n, `Bearer ${token.value}`, 'bearer_');
  if (last.status === 401) renewed.set(key, { value: token.value, renewAt: 0 });
}

/** Where the fairness script's tenants are in setup()'s data: TENANTS_FILE's order, the first floods. */
const FAIRNESS_ROLES = { flood: 0, quiet: 1 } as const;

function fairnessTenant(data: SetupData, role: keyof typeof FAIRNESS_ROLES): TenantTarget {
  const tenant = data.tenants[FAIRNESS_ROLES[role]];
  if (!tenant) throw new Error(`no ${role} tenant in setup()'s data (the fairness script needs two)`);
  return tenant;
}

/** quiet_alone, quiet_under_flood: the quiet tenant's list of 20 (the reads' list). */
export async function quietList(data: SetupData): Promise<void> {
  const res = await call(fairnessTenant(data, 'quiet'), 'GET', LIST_PATH, { name: 'quiet_list' });
  listOk(res, 'quiet_list');
}

/**
 * flood: the flooding tenant's heavy list, again as soon as it is answered (Retry-After ignored:
 * the worst client). A 429 is the platform making the flood wait its turn (its queue full or too
 * old, or its rate limit spent): counted in flood_refused and expected, so it fails neither
 * http_req_failed nor the check. The body is not parsed: 500 rows each time would load the client.
 */
export async function floodList(data: SetupData): Promise<void> {
  const res = await call(fairnessTenant(data, 'flood'), 'GET', HEAVY_LIST_PATH, { name: 'flood_list', expected: [{ min: 200, max: 399 }, 429] });
  if (res.status === 429) floodRefused.add(1);
  check(res, { 'flood_list: 200 or 429': (r) => r.status === 200 || r.status === 429 });
}
