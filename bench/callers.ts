import http from 'node:http';
import { insertDoc } from '@quire/documents';
import { makePrincipal } from '@quire/permissions';
import { compareSides, type Side } from './compare';
import { recreateDatabase, startProcess } from './support';
import { CLERK, LIST_PATH, seedTodos } from './todo-seed';

/**
 * `npm run bench -- callers`: what each way of signing in costs on the two hot reads (GET one ToDo,
 * the filtered list), in one run, all as the same System Manager user: `token key:secret`, an OAuth
 * Bearer access token (client credentials, scope `all`, issued by `quire serve auth`, verified in
 * the API process), and a login session cookie (`sid`). Rounds alternate the callers.
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const database = 'quire_bench_callers';

function post(port: number, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string; cookies: string[] }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path, headers: { ...headers, 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, cookies: res.headers['set-cookie'] ?? [] }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function bearerToken(authPort: number, clientId: string, clientSecret: string): Promise<string> {
  const res = await post(
    authPort,
    '/oauth/token',
    {
      Host: `bench.localhost:${authPort}`,
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
    },
    new URLSearchParams({ grant_type: 'client_credentials', scope: 'all' }).toString(),
  );
  const token = (JSON.parse(res.text) as { access_token?: string }).access_token;
  if (!token) throw new Error(`no access token: ${res.status} ${res.text}`);
  return token;
}

async function sessionCookie(apiPort: number): Promise<string> {
  const res = await post(
    apiPort,
    '/api/method/login',
    { 'X-Frappe-Site-Name': 'bench', 'Content-Type': 'application/json' },
    JSON.stringify({ usr: CLERK.email, pwd: CLERK.password }),
  );
  const sid = res.cookies.map((c) => /^sid=([^;]+)/.exec(c)?.[1]).find((v) => v !== undefined && v !== 'Guest');
  if (!sid) throw new Error(`login failed: ${res.status} ${res.text}`);
  return `sid=${sid}`;
}

async function main(): Promise<void> {
  const env = { DATABASE_URL: await recreateDatabase(database), LOG_LEVEL: 'warn', NODE_ENV: 'production', BASE_DOMAIN: 'localhost' };
  const seeded = await seedTodos(env, ROWS);
  const tenant = seeded.platform.tenants.get('bench');
  if (!tenant) throw new Error('tenant bench missing');
  const ctx = await seeded.platform.context(tenant, makePrincipal('Administrator', ['Administrator', 'System Manager']));
  const client = await insertDoc(ctx, 'OAuth Client', { app_name: 'bench', grant_type: 'Client Credentials', user: CLERK.email, scopes: 'all' });
  await seeded.close();

  // BENCH_PROFILE_DIR=<dir>: the API process's V8 CPU profile of the whole run (node --cpu-prof), written on exit.
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const api = await startProcess([...profile, 'bin/quire.mjs', 'serve', 'api'], { ...env, PORT: '0', DB_POOL_SIZE: '10' });
  const auth = await startProcess(['bin/quire.mjs', 'serve', 'auth'], { ...env, AUTH_PORT: '0', DB_POOL_SIZE: '4' });
  try {
    const site = { 'X-Frappe-Site-Name': 'bench' };
    const callers: Record<string, Record<string, string>> = {
      'token key:secret': { ...site, Authorization: seeded.tokens.clerk },
      'Bearer (scope all)': { ...site, Authorization: `Bearer ${await bearerToken(auth.port, String(client.name), String(client.client_secret))}` },
      'session cookie': { ...site, Cookie: await sessionCookie(api.port) },
    };
    const requests = { get: { paths: seeded.names.map((n) => `/api/resource/ToDo/${n}`) }, list: { paths: [LIST_PATH] } };
    // BENCH_CALLERS=token,session: only the callers whose names start with these (the first is the baseline).
    const picked = process.env.BENCH_CALLERS?.split(',');
    const sides: Side[] = Object.entries(callers)
      .filter(([side]) => !picked || picked.some((p) => side.toLowerCase().startsWith(p.toLowerCase())))
      .map(([side, headers]) => ({ side, server: api, headers }));
    await compareSides({ sides, requests, baseline: sides[0]?.side ?? 'token key:secret', seconds, connections, rounds, about: { rows: ROWS } });
  } finally {
    for (const side of [api, auth]) side.child.kill('SIGTERM');
  }
}

await main();
