import { execFile } from 'node:child_process';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { PgDatabase } from '@quire/db';
import { createTenant } from '@quire/tenancy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { createPgCluster, pgClustersAvailable, type PgCluster } from '../support/pg-clusters';
import { quireJson } from '../support/process';
import { call, startTestServer, uniqueName, type CallResult, type TestServer } from '../support/server';
import { until } from '../support/until';

/**
 * Several Postgres clusters seen from operations (issue 28): each open cluster's pool named in
 * `quire_db_pool_connections{cluster,state}` and closed when idle; `/readyz` and
 * `quire_db_cluster_up` naming a cluster that stops answering, while the process stays ready; and
 * that cluster's tenants answered 503 quickly (refused at once, or after the connect timeout when
 * it hangs) while the other clusters' tenants are served.
 *
 * Three clusters: the platform's own (`default`); `x`, a Postgres server of its own (stopped and
 * started again with pg_ctlcluster); `h`, a database on the suite's server reached through a proxy
 * that can go silent.
 */

const available = pgClustersAvailable();
if (!available.ok) console.log(`clusters health tests skipped: ${available.reason}`);

const execFileAsync = promisify(execFile);

/** The default of CLUSTER_CONNECT_TIMEOUT_MS, which the test server leaves unset. */
const CONNECT_TIMEOUT_MS = 5_000;

interface SilentProxy {
  port: number;
  /** Drops every open connection; new ones are accepted and never answered (a server gone dark). */
  hang(): void;
  resume(): void;
  close(): Promise<void>;
}

/** A TCP proxy to a real server that a test can make silent. */
async function silentProxy(host: string, port: number): Promise<SilentProxy> {
  let silent = false;
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket): void => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (silent) return;
    const upstream = net.connect(port, host);
    track(upstream);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const)
      a.once('close', () => b.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    hang() {
      silent = true;
      for (const s of sockets) s.destroy();
    },
    resume() {
      silent = false;
      for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The label sets and values of every series of one metric. */
function series(text: string, metric: string): Array<{ labels: Record<string, string>; value: number }> {
  const out: Array<{ labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`) && !line.startsWith(`${metric} `)) continue;
    const close = line.lastIndexOf('}');
    const labels = close === -1 ? '' : line.slice(metric.length + 1, close);
    const pairs = [...labels.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']);
    out.push({ labels: Object.fromEntries(pairs), value: Number(line.slice(line.lastIndexOf(' ') + 1)) });
  }
  return out;
}

describe.skipIf(!available.ok)('clusters in metrics and readiness', () => {
  let platformDb: FreshDatabase;
  let hDatabase: FreshDatabase;
  let x: PgCluster;
  let proxy: SilentProxy;
  let server: TestServer;
  /** A tenant on each cluster: its name, and a GET as its Administrator. */
  const tenants: Record<string, { name: string; get: (path: string) => Promise<CallResult> }> = {};
  const started: Array<() => Promise<unknown>> = [];
  const keep = <T>(made: T, stop: (made: T) => Promise<unknown>): T => {
    started.push(() => stop(made));
    return made;
  };
  const quire = (...args: string[]) => quireJson(args, { DATABASE_URL: platformDb.url });
  const get = (cluster: string) => tenants[cluster]!.get('/api/resource/ToDo?limit=1');
  const scrape = async (): Promise<string> => (await fetch(`${server.opsUrl}/metrics`)).text();
  const readyz = async (): Promise<{ status: number; body: { status: string; checks: Record<string, string> } }> => {
    const res = await fetch(`${server.opsUrl}/readyz`);
    return { status: res.status, body: (await res.json()) as { status: string; checks: Record<string, string> } };
  };
  const clusterUp = async (): Promise<Record<string, number>> =>
    Object.fromEntries(series(await scrape(), 'quire_db_cluster_up').map((s) => [s.labels.cluster, s.value]));
  /** This process's connections on a server, by application_name (its LISTEN connection has none), in `database`. */
  const connections = async (url: string, database: string): Promise<Record<string, number>> => {
    const db = new PgDatabase({ connectionString: url, poolSize: 1, applicationName: 'clusters-health-check' });
    try {
      const { rows } = await db.query<{ app: string; n: number }>(
        `SELECT application_name AS app, count(*)::int AS n FROM pg_stat_activity
         WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend' GROUP BY 1`,
        [database],
      );
      return Object.fromEntries(rows.map((r) => [r.app, r.n]));
    } finally {
      await db.close();
    }
  };
  const poolOf = (cluster: string) =>
    server.platform.clusters
      .opened()
      .find(([name]) => name === cluster)?.[1]
      .poolStats();

  beforeAll(async () => {
    [platformDb, hDatabase, x] = await Promise.all([
      freshDatabase().then((d) => keep(d, () => d.drop())),
      freshDatabase().then((d) => keep(d, () => d.drop())),
      createPgCluster().then((c) => keep(c, () => c.stop())),
    ]);
    const h = new URL(hDatabase.url);
    proxy = keep(await silentProxy(h.hostname, Number(h.port || 5432)), (p) => p.close());
    h.hostname = '127.0.0.1';
    h.port = String(proxy.port);
    expect((await quire('migrate')).code).toBe(0);
    expect((await quire('cluster', 'add', 'x', '--url', x.url)).code).toBe(0);
    expect((await quire('cluster', 'add', 'h', '--url', h.toString())).code).toBe(0);
    server = keep(await startTestServer({ databaseUrl: platformDb.url }), (s) => s.close());
    for (const cluster of ['default', 'x', 'h']) {
      const t = await createTenant(server.platform, { name: uniqueName('ch'), cluster });
      expect(t.cluster).toBe(cluster);
      const auth = `token ${t.api_key}:${t.api_secret}`;
      tenants[cluster] = { name: t.name, get: (path) => call(server.url, t.name, 'GET', path, { auth }) };
    }
  }, 120_000);

  afterAll(async () => {
    // x may have been left stopped by a failed test: pg_dropcluster --stop drops it all the same.
    const failed: unknown[] = [];
    for (const stop of [...started].reverse()) await stop().catch((e: unknown) => failed.push(e));
    if (failed.length) throw failed[0];
  });

  it("name each open cluster's pool by cluster and state, hold a few connections per cluster, and close them when the cluster is idle", async () => {
    for (const cluster of ['default', 'x', 'h']) expect((await get(cluster)).status).toBe(200);
    let text = await scrape();
    const pools = series(text, 'quire_db_pool_connections');
    expect(new Set(pools.map((s) => `${s.labels.cluster} ${s.labels.state}`))).toEqual(
      new Set(['default', 'x', 'h'].flatMap((c) => ['idle', 'busy', 'waiting'].map((state) => `${c} ${state}`))),
    );
    for (const s of pools) expect(Object.keys(s.labels).sort()).toEqual(['cluster', 'state']);
    expect(series(text, 'quire_db_clusters_open')).toEqual([{ labels: {}, value: 3 }]);
    expect(await clusterUp()).toEqual({ default: 1, x: 1, h: 1 });
    expect(await readyz()).toEqual({ status: 200, body: { status: 'ready', checks: { database: 'ok', schema: 'ok', 'cluster x': 'ok', 'cluster h': 'ok' } } });

    // On each cluster: at most the pool (DB_POOL_SIZE 5 in tests) plus one LISTEN connection.
    const onX = await connections(x.url, 'postgres');
    const onH = await connections(hDatabase.url, hDatabase.name);
    for (const held of [onX, onH]) {
      expect(held['']).toBe(1);
      expect(Object.values(held).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(6);
    }
    expect(onX['quire-test:x']).toBeGreaterThanOrEqual(1);
    expect(onH['quire-test:h']).toBeGreaterThanOrEqual(1);

    // CLUSTER_IDLE_SECONDS later: both pools and listeners closed, their series gone.
    await server.platform.clusters.closeIdle(Date.now() + 3_600_000);
    text = await scrape();
    expect(new Set(series(text, 'quire_db_pool_connections').map((s) => s.labels.cluster))).toEqual(new Set(['default']));
    expect(series(text, 'quire_db_clusters_open')).toEqual([{ labels: {}, value: 1 }]);
    expect(await clusterUp()).toEqual({ default: 1 });
    // /readyz reuses an evaluation for half a second.
    expect((await until(readyz, (r) => Object.keys(r.body.checks).length === 2)).body.checks).toEqual({ database: 'ok', schema: 'ok' });
    const none = (held: Record<string, number>) => Object.keys(held).length === 0;
    expect(await until(() => connections(x.url, 'postgres'), none)).toEqual({});
    expect(await until(() => connections(hDatabase.url, hDatabase.name), none)).toEqual({});
  }, 60_000);

  it('a stopped cluster: its tenants answered 503 at once, the others served, the process ready and naming it; served again once it is back', async () => {
    expect((await get('x')).status).toBe(200);
    await execFileAsync('pg_ctlcluster', ['15', x.name, 'stop']);
    try {
      const before = performance.now();
      const refused = await get('x');
      expect(performance.now() - before).toBeLessThan(2_000);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(refused.body).toMatchObject({ exc_type: 'SessionStopped', exception: expect.stringMatching(/cannot be reached/) });
      // Nothing of the driver's: no address, port, SQL or error code.
      for (const leak of ['127.0.0.1', String(x.port), 'ECONNREFUSED', 'postgres', 'SELECT']) expect(refused.text).not.toContain(leak);
      // The same when nothing of the tenant is cached: its API key is looked up on x first.
      server.platform.forget(tenants.x!.name);
      const uncached = await get('x');
      expect(uncached.status).toBe(503);
      expect(uncached.body).toMatchObject({ exc_type: 'SessionStopped' });

      expect((await get('default')).status).toBe(200);
      expect((await get('h')).status).toBe(200);
      // /readyz reuses an evaluation for half a second, and each cluster's answer for a second.
      const ready = await until(readyz, (r) => r.body.checks['cluster x'] === 'unreachable');
      expect(ready).toEqual({
        status: 200,
        body: { status: 'ready', checks: { database: 'ok', schema: 'ok', 'cluster x': 'unreachable', 'cluster h': 'ok' } },
      });
      expect(await clusterUp()).toEqual({ default: 1, x: 0, h: 1 });
      expect(await scrape()).toMatch(/^quire_ready 1$/m);
    } finally {
      await execFileAsync('pg_ctlcluster', ['15', x.name, 'start']);
    }
    expect(
      (
        await until(
          () => get('x'),
          (r) => r.status === 200,
        )
      ).status,
    ).toBe(200);
    expect((await until(clusterUp, (up) => up.x === 1)).x).toBe(1);
  }, 60_000);

  it('a cluster gone silent: its tenants answered 503 after the connect timeout, not held, while the others are served at once', async () => {
    expect((await get('h')).status).toBe(200);
    proxy.hang();
    try {
      // Its pooled connections were dropped: the next request has to connect, and is never answered.
      await until(
        () => Promise.resolve(poolOf('h')?.total),
        (total) => total === 0,
      );
      const before = performance.now();
      const [held, other] = await Promise.all([get('h'), get('default').then((r) => ({ r, ms: performance.now() - before }))]);
      const waited = performance.now() - before;
      expect(other.r.status).toBe(200);
      expect(other.ms).toBeLessThan(1_000);
      expect(held.status).toBe(503);
      expect(held.body).toMatchObject({ exc_type: 'SessionStopped' });
      expect(waited).toBeGreaterThanOrEqual(CONNECT_TIMEOUT_MS - 100);
      expect(waited).toBeLessThan(CONNECT_TIMEOUT_MS + 2_000);

      const ready = await until(readyz, (r) => r.body.checks['cluster h']?.startsWith('no answer') === true);
      expect(ready.status).toBe(200);
      expect(ready.body.status).toBe('ready');
      expect(ready.body.checks).toMatchObject({ database: 'ok', 'cluster x': 'ok', 'cluster h': 'no answer within 1500 ms' });
      expect(await clusterUp()).toMatchObject({ default: 1, h: 0 });
    } finally {
      proxy.resume();
    }
    expect(
      (
        await until(
          () => get('h'),
          (r) => r.status === 200,
          15_000,
        )
      ).status,
    ).toBe(200);
  }, 60_000);
});
