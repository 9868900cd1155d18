// setup(): makes every tenant ready for the run through the REST API, as each tenant's
// Administrator (the keys in TENANTS_FILE), and returns what the iterations need. Idempotent, so
// a second run against the same tenants reuses the user, the OAuth client and the ToDos:
//   - the load user (a System Manager, so reads go through DocPerm rather than Administrator's
//     bypass) and a fresh API secret for it (generate_keys keeps its key);
//   - a Client Credentials OAuth client for that user (created, or its secret reset);
//   - SEED_TODOS ToDos described `load-seed <n>` (the missing ones inserted 200 at a time), or
//     FLOOD_TODOS for the fairness script's flooding tenant;
//   - a client_credentials token, which the Bearer reads start with.
import type { RefinedResponse } from 'k6/http';
import { call, describe, field, query, targetOf, type TenantTarget } from './api.ts';
import type { LoadConfig, TenantEntry } from './config.ts';
import { fetchToken } from './iterations.ts';

export interface SetupData {
  tenants: TenantTarget[];
  writeCleanup: boolean;
  /** When setup() finished (ISO time). */
  preparedAt: string;
}

export const OAUTH_APP_NAME = 'quire-load-tests';
const SEED_PREFIX = 'load-seed ';
/** Tenants prepared at once. */
const PARALLEL = 4;

function must(res: RefinedResponse<'text'>, what: string, tenant: string, ok: number[] = [200]): RefinedResponse<'text'> {
  if (!ok.includes(res.status)) throw new Error(`setup: ${what} in tenant ${tenant}: ${describe(res)}`);
  return res;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

async function prepareTenant(config: LoadConfig, tenant: TenantEntry, seedTodos: number): Promise<TenantTarget> {
  const base = targetOf(config, tenant);
  const admin = { ...base, auth: `token ${tenant.api_key}:${tenant.api_secret}` };
  const user = config.loadUser;
  const userPath = `/api/resource/User/${encodeURIComponent(user)}`;

  // The load user.
  const found = must(await call(admin, 'GET', userPath, { name: 'setup', expected: [200, 404] }), 'reading the load user', tenant.name, [200, 404]);
  if (found.status === 404) {
    const doc = { email: user, first_name: 'Load test', roles: [{ role: 'System Manager' }], send_welcome_email: 0 };
    must(await call(admin, 'POST', '/api/resource/User', { name: 'setup', json: doc }), 'creating the load user', tenant.name);
  }
  const keys = must(
    await call(admin, 'POST', '/api/method/frappe.core.doctype.user.user.generate_keys', { name: 'setup', json: { user } }),
    'generating API keys',
    tenant.name,
  );
  const apiSecret = record(field(keys, 'message')).api_secret;
  const apiKey = record(field(must(await call(admin, 'GET', userPath, { name: 'setup' }), 'reading the API key', tenant.name), 'data')).api_key;
  if (typeof apiKey !== 'string' || typeof apiSecret !== 'string') throw new Error(`setup: no API key for ${user} in tenant ${tenant.name}`);

  // The OAuth client.
  const clients = field(
    must(
      await call(admin, 'GET', `/api/resource/OAuth%20Client?${query({ filters: JSON.stringify([['app_name', '=', OAUTH_APP_NAME]]), fields: '["name"]' })}`, {
        name: 'setup',
      }),
      'listing OAuth clients',
      tenant.name,
    ),
    'data',
  );
  const existing = Array.isArray(clients) ? record(clients[0]).name : undefined;
  let clientId: unknown;
  let clientSecret: unknown;
  if (typeof existing === 'string') {
    const reset = must(
      await call(admin, 'POST', '/api/method/frappe.integrations.doctype.oauth_client.oauth_client.reset_client_secret', {
        name: 'setup',
        json: { client: existing },
      }),
      'resetting the OAuth client secret',
      tenant.name,
    );
    ({ client_id: clientId, client_secret: clientSecret } = record(field(reset, 'message')));
  } else {
    const doc = { app_name: OAUTH_APP_NAME, grant_type: 'Client Credentials', user, scopes: 'todo:read todo:write' };
    const created = must(await call(admin, 'POST', '/api/resource/OAuth%20Client', { name: 'setup', json: doc }), 'creating the OAuth client', tenant.name);
    const data = record(field(created, 'data'));
    clientId = data.client_id ?? data.name;
    clientSecret = data.client_secret;
  }
  if (typeof clientId !== 'string' || typeof clientSecret !== 'string') throw new Error(`setup: no OAuth client secret in tenant ${tenant.name}`);

  // The ToDos.
  const seeded = JSON.stringify([['description', 'like', `${SEED_PREFIX}%`]]);
  const counted = must(
    await call(admin, 'GET', `/api/method/frappe.client.get_count?${query({ doctype: 'ToDo', filters: seeded })}`, { name: 'setup' }),
    'counting ToDos',
    tenant.name,
  );
  const have = Number(field(counted, 'message') ?? 0);
  const priorities = ['High', 'Medium', 'Low'];
  for (let i = have; i < seedTodos; i += 200) {
    const docs = [];
    for (let n = i; n < Math.min(i + 200, seedTodos); n++) {
      const day = String(1 + (n % 28)).padStart(2, '0');
      docs.push({
        doctype: 'ToDo',
        description: `${SEED_PREFIX}${n}`,
        status: n % 3 === 2 ? 'Closed' : 'Open',
        priority: priorities[n % 3],
        date: `2026-0${1 + (n % 9)}-${day}`,
      });
    }
    must(await call(admin, 'POST', '/api/method/frappe.client.insert_many', { name: 'setup', json: { docs } }), 'inserting ToDos', tenant.name);
  }
  const names = field(
    must(
      await call(admin, 'GET', `/api/resource/ToDo?${query({ fields: '["name"]', filters: seeded, limit_page_length: String(Math.min(seedTodos, 1000)) })}`, {
        name: 'setup',
      }),
      'listing ToDos',
      tenant.name,
    ),
    'data',
  );
  const todos = Array.isArray(names) ? names.map((r) => record(r).name).filter((n): n is string => typeof n === 'string') : [];
  if (todos.length === 0) throw new Error(`setup: tenant ${tenant.name} has no ToDos to read`);

  const target: TenantTarget = { ...base, auth: `token ${apiKey}:${apiSecret}`, clientId, clientSecret, todos };
  // A token for the Bearer reads (the tokens scenario measures issuing them).
  const { res, token } = await fetchToken(target, 'setup_token');
  if (!token) throw new Error(`setup: no client_credentials token in tenant ${tenant.name}: ${describe(res)}`);
  return { ...target, bearer: token };
}

/** Prepares every tenant (PARALLEL at a time) and returns the iterations' data. */
export async function prepare(config: LoadConfig): Promise<SetupData> {
  const tenants: TenantTarget[] = [];
  for (let i = 0; i < config.tenants.length; i += PARALLEL) {
    tenants.push(...(await Promise.all(config.tenants.slice(i, i + PARALLEL).map((t) => prepareTenant(config, t, config.seedTodos)))));
  }
  console.log(
    `setup: ${tenants.length} tenant(s) ready (${config.loadUser}, OAuth client ${OAUTH_APP_NAME}, ${config.seedTodos} ToDos each) at ${config.bases.join(', ')}`,
  );
  return { tenants, writeCleanup: config.writeCleanup, preparedAt: new Date().toISOString() };
}

/**
 * The fairness script's setup: the first two tenants of TENANTS_FILE, in that order: the first
 * floods (FLOOD_TODOS ToDos, so that its heavy list is heavy), the second is quiet (SEED_TODOS).
 */
export async function prepareFairness(config: LoadConfig): Promise<SetupData> {
  const [flood, quiet, ...unused] = config.tenants;
  if (!flood || !quiet) {
    throw new Error(
      `setup: the fairness script needs two tenants (the first floods, the second is the quiet one); TENANTS_FILE gives ${config.tenants.length}`,
    );
  }
  const tenants = await Promise.all([prepareTenant(config, flood, config.floodTodos), prepareTenant(config, quiet, config.seedTodos)]);
  console.log(
    `setup: ${flood.name} floods (${config.floodTodos} ToDos), ${quiet.name} is quiet (${config.seedTodos} ToDos)${unused.length ? `; ${unused.length} more tenant(s) in the file left alone` : ''}, at ${config.bases.join(', ')}`,
  );
  return { tenants, writeCleanup: config.writeCleanup, preparedAt: new Date().toISOString() };
}
