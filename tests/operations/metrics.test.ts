import { migrateRelease } from '@quire/tenancy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';

/**
 * Prometheus metrics on the operations port: Node's defaults under their standard names, request
 * durations by route template (never a URL), the pool, caches and tenants.
 */

let server: TestServer;
let tagged: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  tagged = await startTestServer({ metricsTenantLabel: true });
  await migrateRelease(server.platform);
});
afterAll(async () => {
  await server.close();
  await tagged.close();
});

async function scrape(s: TestServer): Promise<string> {
  const res = await fetch(`${s.opsUrl}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

/** The label sets of every series of one metric. */
function series(text: string, metric: string): Array<Record<string, string>> {
  const out: Array<Record<string, string>> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`)) continue;
    const labels = line.slice(metric.length + 1, line.lastIndexOf('}'));
    out.push(Object.fromEntries([...labels.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1] ?? '', m[2] ?? ''])));
  }
  return out;
}

describe('metrics', () => {
  it('label requests by route template: 100 document names and 50 unknown paths add no series of their own', async () => {
    const t = await server.tenant('m');
    const names: string[] = [];
    for (let i = 0; i < 100; i++) names.push(`doc-${i}-${Math.random().toString(36).slice(2, 8)}`);
    for (const name of names) await t.call('GET', `/api/resource/ToDo/${name}`);
    for (let i = 0; i < 50; i++) await t.call('GET', `/no/such/path-${i}`);
    await t.call('GET', '/api/resource/ToDo?limit=5');
    await t.call('GET', '/api/method/ping');
    const text = await scrape(server);
    const buckets = series(text, 'http_request_duration_seconds_bucket');
    expect(buckets.length).toBeGreaterThan(0);
    for (const name of names) expect(text).not.toContain(name);
    expect(text).not.toContain('path-');
    const routes = new Set(buckets.map((b) => b.route));
    expect(routes).toContain('/api/resource/:doctype/:name');
    expect(routes).toContain('/api/resource/:doctype');
    expect(routes).toContain('/api/method/:method');
    expect(routes).toContain('unmatched');
    for (const b of buckets) {
      expect(Object.keys(b).sort()).toEqual(['le', 'method', 'route', 'status_code']);
      expect(b.status_code).toMatch(/^\d{3}$/);
    }
    const missing = buckets.find((b) => b.route === '/api/resource/:doctype/:name' && b.le === '+Inf');
    expect(missing).toMatchObject({ method: 'GET', status_code: '404' });
    // Bounded: routes × methods × statuses × 11 buckets, whatever the URLs were.
    const combos = new Set(buckets.map((b) => `${b.method} ${b.route} ${b.status_code}`));
    expect(buckets.length).toBe(combos.size * 11);
  });

  it("serve Node's default metrics unprefixed, the pool by cluster and state, caches, tenants, spare schemas, and no per-tenant series unless asked", async () => {
    const t = await server.tenant('m');
    await t.call('GET', '/api/resource/ToDo');
    const text = await scrape(server);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(text).toMatch(new RegExp(`^${name} `, 'm'));
    }
    expect(text).not.toMatch(/quire_\w*process_cpu/);
    // Without other clusters, only the platform database's pool (cluster "default"); tests/operations/clusters-health.test.ts has more.
    const pools = series(text, 'quire_db_pool_connections');
    expect(new Set(pools.map((s) => `${s.cluster} ${s.state}`))).toEqual(new Set(['default idle', 'default busy', 'default waiting']));
    expect(text).toMatch(/^quire_db_clusters_open 1$/m);
    expect(text).toMatch(/^quire_db_cluster_up\{cluster="default"\} 1$/m);
    expect(text).toMatch(/^quire_cache_requests_total\{cache="api_keys",result="hit"\} [1-9]/m);
    expect(text).toMatch(/^quire_cache_requests_total\{cache="meta",result="(hit|miss)"\} [1-9]/m);
    expect(text).toMatch(/^quire_tenants [1-9]/m);
    // This process provisioned the tenant above: from a spare or, none ready, from the template.
    expect(text).toMatch(/^quire_tenant_spares_ready \d+$/m);
    const claims = (result: string) => Number(new RegExp(`^quire_tenant_spare_claims_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
    expect(claims('taken') + claims('missed')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^http_requests_in_flight \d/m);
    expect(text).not.toContain('quire_tenant_requests_total');
  });

  it('count requests per tenant with METRICS_TENANT_LABEL=true', async () => {
    const a = await tagged.tenant('ma');
    const b = await tagged.tenant('mb');
    await a.call('GET', '/api/resource/ToDo');
    await a.call('GET', '/api/method/ping');
    await b.call('GET', '/api/method/ping');
    const counts = Object.fromEntries(series(await scrape(tagged), 'quire_tenant_requests_total').map((s) => [s.tenant, s]));
    expect(Object.keys(counts)).toEqual(expect.arrayContaining([a.name, b.name]));
    const text = await scrape(tagged);
    expect(text).toMatch(new RegExp(`^quire_tenant_requests_total\\{tenant="${a.name}"\\} 2$`, 'm'));
    expect(text).toMatch(new RegExp(`^quire_tenant_requests_total\\{tenant="${b.name}"\\} 1$`, 'm'));
  });

  it('answer /readyz and /healthz on the operations port, and nothing tenant-facing', async () => {
    expect(await (await fetch(`${server.opsUrl}/readyz`)).json()).toEqual({ status: 'ready', checks: { database: 'ok', schema: 'ok' } });
    expect((await fetch(`${server.opsUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.opsUrl}/api/method/ping`)).status).toBe(404);
  });
});
