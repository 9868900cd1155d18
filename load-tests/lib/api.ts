// Requests to one tenant of a Quire deployment, the way every scenario sends them: through
// `http.asyncRequest` (k6 and the Node runner's shim both run it), named with a `name` tag so the
// metrics do not grow a series per URL, and counted in `server_errors` when the answer is a 5xx.
import http, { type ExpectedStatusesObject, type RefinedResponse } from 'k6/http';
import type { LoadConfig, TenantEntry } from './config.ts';
import { serverErrors } from './metrics.ts';

/** One tenant as the iterations use it (in setup()'s data: plain JSON). */
export interface TenantTarget {
  name: string;
  /** API origins, round-robin, `{tenant}` replaced. */
  bases: string[];
  /** Origins for `/oauth/token`. */
  authBases: string[];
  /** `Host` or `X-Frappe-Site-Name` when the origin does not name the tenant. */
  headers: Record<string, string>;
  /** `token <api_key>:<api_secret>` of the load user. */
  auth: string;
  clientId: string;
  clientSecret: string;
  /** Names of seeded ToDos (for GET one). */
  todos: string[];
  /** A client_credentials access token setup() fetched for the Bearer reads. */
  bearer?: { value: string; renewAt: number };
}

/** A tenant's origins and naming headers; credentials and ToDos come from setup(). */
export function targetOf(config: LoadConfig, tenant: TenantEntry): Omit<TenantTarget, 'auth' | 'clientId' | 'clientSecret' | 'todos' | 'bearer'> {
  const named = (bases: string[]) => bases.map((b) => b.split('{tenant}').join(tenant.name));
  const bases = named(config.bases);
  const authBases = config.authBases.length ? named(config.authBases) : bases;
  const headers: Record<string, string> = {};
  if (!config.bases.some((b) => b.includes('{tenant}'))) {
    if (config.tenantHeader === 'site') headers['X-Frappe-Site-Name'] = tenant.name;
    else headers.Host = tenant.hosts[0] ?? `${tenant.name}.localhost`;
  }
  return { name: tenant.name, bases, authBases, headers };
}

/** `a=1&b=2`, each value percent-encoded (k6 has no URLSearchParams). */
export function query(params: Record<string, string>): string {
  return Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}

export interface CallOptions {
  /** The `name` tag of the request's metrics (e.g. `todo_get`). */
  name: string;
  /** `Authorization` value; the target's load-user token when absent; `null` sends none. */
  auth?: string | null;
  json?: unknown;
  /** application/x-www-form-urlencoded body. */
  form?: Record<string, string>;
  /** Statuses (or ranges of them) that are not failures for `http_req_failed` (default 200–399). */
  expected?: (number | ExpectedStatusesObject)[];
  /** Send to the auth service's origins. */
  authService?: boolean;
}

let turn = 0;

/** One request to a tenant; resolves with the response (network errors have status 0). */
export async function call(
  target: Pick<TenantTarget, 'bases' | 'authBases' | 'headers'> & { auth?: string },
  method: string,
  path: string,
  o: CallOptions,
): Promise<RefinedResponse<'text'>> {
  const origins = o.authService ? target.authBases : target.bases;
  const origin = origins[turn++ % origins.length] ?? '';
  const headers: Record<string, string> = { Accept: 'application/json', ...target.headers };
  const auth = o.auth === undefined ? target.auth : o.auth;
  if (auth) headers.Authorization = auth;
  let body: string | null = null;
  if (o.json !== undefined) {
    body = JSON.stringify(o.json);
    headers['Content-Type'] = 'application/json';
  } else if (o.form) {
    body = query(o.form);
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
  }
  const res = await http.asyncRequest(method, `${origin}${path}`, body, {
    headers,
    tags: { name: o.name },
    responseType: 'text',
    timeout: '30s',
    ...(o.expected ? { responseCallback: http.expectedStatuses(...o.expected) } : {}),
  });
  if (res.status >= 500) serverErrors.add(1, { name: o.name, status: String(res.status) });
  return res;
}

/** The JSON body of a response, or undefined when it is not JSON. */
export function jsonOf(res: RefinedResponse<'text'>): unknown {
  try {
    return typeof res.body === 'string' ? (JSON.parse(res.body) as unknown) : undefined;
  } catch {
    return undefined;
  }
}

/** `body.data` / `body.message` of a Frappe answer as a record, or undefined. */
export function field(res: RefinedResponse<'text'>, key: 'data' | 'message'): unknown {
  const body = jsonOf(res);
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[key] : undefined;
}

/** A short description of a failed response, for setup()'s errors. */
export function describe(res: RefinedResponse<'text'>): string {
  if (res.status === 0) return `no answer (${res.error})`;
  const text = typeof res.body === 'string' ? res.body.slice(0, 300) : '';
  return `${res.status} ${text}`;
}
