import http from 'node:http';
import autocannon from 'autocannon';
import { createRuntime, loadRuntimeConfig } from '@quire/runtime';
import { insertDoc } from '@quire/documents';
import { makePrincipal } from '@quire/permissions';
import { createTenant } from '@quire/tenancy';
import { recreateDatabase, startProcess as start } from './support';

/**
 * `npm run bench -- bearer`: what OAuth Bearer verification costs per request. One run, one API
 * process (`quire serve api`), `GET /api/resource/ToDo?limit=20` with `token key:secret` beside
 * the same with a Bearer access token (scope `all`, and a narrowed `todo:read` one), tokens issued
 * by `quire serve auth` (client credentials). Rounds alternate so drift hits every side.
 * Needs a Postgres server: BENCH_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres).
 */
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const database = 'quire_bench_bearer';

/** A client-credentials token from the auth service, asked at the tenant's own host. */
function clientCredentials(port: number, host: string, id: string, secret: string, scope: string): Promise<string> {
  const body = new URLSearchParams({ grant_type: 'client_credentials', scope }).toString();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/oauth/token',
        headers: {
          Host: `${host}:${port}`,
          'Content-Type': 'application/x-www-form-urlencoded',
          'Content-Length': Buffer.byteLength(body),
          Authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          const parsed = JSON.parse(text) as { access_token?: string };
          if (parsed.access_token) resolve(parsed.access_token);
          else reject(new Error(`no token: ${text}`));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function load(url: string, headers: Record<string, string>): Promise<{ rps: number; p99: number; errors: number }> {
  const result = await autocannon({ url, connections, duration: seconds, headers });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

async function main(): Promise<void> {
  const env = { DATABASE_URL: await recreateDatabase(database), LOG_LEVEL: 'warn', NODE_ENV: 'production', BASE_DOMAIN: 'localhost' };
  const rt = await createRuntime({ config: loadRuntimeConfig({ ...process.env, ...env }), name: 'quire-bench' });
  const tenant = await createTenant(rt.platform, { name: 'bench' });
  const admin = makePrincipal('Administrator', ['Administrator', 'System Manager']);
  const registered = rt.platform.tenants.get('bench');
  if (!registered) throw new Error('tenant bench was not registered after createTenant');
  const ctx = await rt.platform.context(registered, admin);
  for (let i = 0; i < 100; i++) await insertDoc(ctx, 'ToDo', { description: `todo ${i}`, priority: ['High', 'Medium', 'Low'][i % 3] });
  const app = await insertDoc(ctx, 'OAuth Client', { app_name: 'bench', grant_type: 'Client Credentials', user: 'Administrator', scopes: 'all' });
  await rt.close();

  const api = await start(['bin/quire.mjs', 'serve', 'api'], { ...env, PORT: '0', DB_POOL_SIZE: '10' });
  const auth = await start(['bin/quire.mjs', 'serve', 'auth'], { ...env, AUTH_PORT: '0', DB_POOL_SIZE: '4' });
  try {
    const [all, narrow] = await Promise.all([
      clientCredentials(auth.port, 'bench.localhost', String(app.name), String(app.client_secret), 'all'),
      clientCredentials(auth.port, 'bench.localhost', String(app.name), String(app.client_secret), 'todo:read'),
    ]);
    const url = `http://127.0.0.1:${api.port}/api/resource/ToDo?limit=20`;
    const site = { 'X-Frappe-Site-Name': 'bench' };
    const sides: Record<string, Record<string, string>> = {
      'token key:secret': { ...site, Authorization: `token ${tenant.api_key}:${tenant.api_secret}` },
      'Bearer (scope all)': { ...site, Authorization: `Bearer ${all}` },
      'Bearer (scope todo:read)': { ...site, Authorization: `Bearer ${narrow}` },
    };
    for (const headers of Object.values(sides)) await autocannon({ url, connections, duration: 2, headers });
    const results: Array<{ round: number; side: string; rps: number; p99: number; errors: number }> = [];
    for (let round = 1; round <= rounds; round++) {
      for (const [side, headers] of Object.entries(sides)) results.push({ round, side, ...(await load(url, headers)) });
    }
    const avg = (side: string) => {
      const rows = results.filter((r) => r.side === side);
      return rows.reduce((s, r) => s + r.rps, 0) / rows.length;
    };
    console.table(results.map((r) => ({ ...r, rps: Math.round(r.rps) })));
    const keyRps = avg('token key:secret');
    console.log(
      JSON.stringify({
        connections,
        seconds,
        rounds,
        token_rps: Math.round(keyRps),
        bearer_all_rps: Math.round(avg('Bearer (scope all)')),
        bearer_scoped_rps: Math.round(avg('Bearer (scope todo:read)')),
        bearer_ratio: Number((avg('Bearer (scope all)') / keyRps).toFixed(3)),
      }),
    );
  } finally {
    for (const side of [api, auth]) side.child.kill('SIGTERM');
  }
}

await main();
