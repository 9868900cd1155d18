import net from 'node:net';
import { migrateRelease } from '@quire/tenancy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quireJson, rawRequest, spawnQuire, type Spawned } from '../support/process';
import { databaseUrl, startTestServer, type TestServer } from '../support/server';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { until } from '../support/until';

/**
 * Every serving process answers /healthz (the event loop runs) and /readyz (it can do its job) on
 * its operations port, and the api and auth on their main port for any Host too; readiness follows
 * the database.
 */

let server: TestServer;
const running = new Set<Spawned>();

beforeAll(async () => {
  // Single-service processes wait for the platform schema, and are ready once every tenant is at
  // this build's release: what `quire migrate` (the chart's hook Job) does.
  server = await startTestServer();
  await migrateRelease(server.platform);
});
afterAll(async () => {
  await Promise.all([...running].map((p) => p.stop('SIGKILL')));
  await server.close();
});

interface Started {
  p: Spawned;
  /** The main port, for api and auth. */
  port: number | undefined;
  opsPort: number;
}

async function serve(service: 'api' | 'auth' | 'webhooks', env: Record<string, string> = {}): Promise<Started> {
  const p = spawnQuire(['serve', service], { DATABASE_URL: databaseUrl(), PORT: '0', AUTH_PORT: '0', CACHE_REFRESH_INTERVAL_MS: '500', ...env });
  running.add(p);
  const ops = await p.waitFor(/health on port (\d+)/, 60_000);
  const main = service === 'webhooks' ? undefined : await p.waitFor(/listening on port (\d+)/);
  return { p, port: main ? Number(main[1]) : undefined, opsPort: Number(ops[1]) };
}

const get = (port: number, path: string, host = 'no-such-tenant.example') => rawRequest({ port, path, host });

/** `get` to a spawned process; a refused connection says how the process ended and what it printed. */
const getFrom = (p: Spawned, port: number, path: string) =>
  get(port, path).catch((e: unknown) => {
    throw new Error(`${String(e)}; exit code ${p.child.exitCode}, signal ${p.child.signalCode}: ${p.stdout()}${p.stderr()}`);
  });

describe('health and readiness', () => {
  it('the api answers /healthz and /readyz on its main port for any Host and on the operations port; /readyz follows the database', async () => {
    const target = new URL(databaseUrl());
    const proxy: TcpProxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    try {
      const proxied = new URL(databaseUrl());
      proxied.port = String(proxy.port);
      const api = await serve('api', { DATABASE_URL: proxied.toString() });
      const mainPort = api.port ?? 0;
      for (const port of [mainPort, api.opsPort]) {
        expect(await get(port, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
        const ready = await get(port, '/readyz');
        expect(ready.status).toBe(200);
        expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', schema: 'ok' } });
      }
      // An unknown tenant's host still gets the API's 404 for anything else.
      expect((await get(mainPort, '/api/method/ping')).status).toBe(404);

      proxy.cut();
      const down = await until(
        () => getFrom(api.p, api.opsPort, '/readyz'),
        (r) => r.status === 503,
        15_000,
      );
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ status: 'unready', checks: { database: 'unreachable' } });
      expect((await getFrom(api.p, mainPort, '/readyz')).status).toBe(503);
      expect((await getFrom(api.p, mainPort, '/healthz')).status).toBe(200); // liveness never depends on the database

      proxy.restore();
      const up = await until(
        () => getFrom(api.p, api.opsPort, '/readyz'),
        (r) => r.status === 200,
        15_000,
      );
      expect(up.body).toEqual({ status: 'ready', checks: { database: 'ok', schema: 'ok' } });
      expect(await api.p.stop('SIGTERM')).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it('auth answers on its main port and the operations port; webhooks on its operations port', async () => {
    const auth = await serve('auth');
    for (const port of [auth.port ?? 0, auth.opsPort]) {
      expect((await get(port, '/healthz')).status).toBe(200);
      expect(await get(port, '/readyz')).toEqual({ status: 200, body: { status: 'ready', checks: { database: 'ok', schema: 'ok' } } });
    }
    const webhooks = await serve('webhooks', { REDIS_URL: 'redis://127.0.0.1:6379' });
    expect((await get(webhooks.opsPort, '/healthz')).status).toBe(200);
    expect(await get(webhooks.opsPort, '/readyz')).toEqual({ status: 200, body: { status: 'ready', checks: { database: 'ok', schema: 'ok', redis: 'ok' } } });
    expect((await get(webhooks.opsPort, '/api/method/ping')).status).toBe(404); // nothing tenant-facing there
    expect(await auth.p.stop('SIGTERM')).toBe(0);
    expect(await webhooks.p.stop('SIGTERM')).toBe(0);
  });

  it("`quire ping` (the chart's helm test) passes against a tenant's host and fails otherwise", async () => {
    const t = await server.tenant('ping');
    const url = `http://127.0.0.1:${server.port}/api/method/ping`;
    const ok = await quireJson(['ping', '--url', url, '--host', `${t.name}.localhost`], { DATABASE_URL: databaseUrl() });
    expect(ok).toEqual({ code: 0, json: { url, status: 200, message: 'pong' } });
    const unknown = await quireJson(['ping', '--url', url, '--host', 'nobody.localhost'], { DATABASE_URL: databaseUrl() });
    expect(unknown.code).toBe(1);
    expect(unknown.json.error.message).toContain('answered 404');
  });

  it('a process that cannot bind a port it needs exits non-zero at once', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    const port = String((taken.address() as net.AddressInfo).port);
    try {
      for (const [service, env] of [
        ['webhooks', { METRICS_PORT: port }],
        ['api', { PORT: port }],
      ] as const) {
        const p = spawnQuire(['serve', service], { DATABASE_URL: databaseUrl(), PORT: '0', ...env });
        running.add(p);
        const started = Date.now();
        const code = await new Promise<number | null>((resolve) => p.child.once('exit', resolve));
        expect(code, `${service} with port ${port} taken`).not.toBe(0);
        expect(Date.now() - started).toBeLessThan(30_000);
      }
    } finally {
      taken.close();
    }
  });
});
