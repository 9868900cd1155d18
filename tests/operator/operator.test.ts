import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { PgDatabase } from '@quire/db';
import { addCluster, createTenant, dropTenant, measureTenants, readUsage, schemaOf, setClusterState } from '@quire/tenancy';
import type { Runtime } from '@quire/runtime';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startFakeKubeApi, type FakeKubeApiServer } from '../support/kube-api';
import type { JsonObject } from '../support/kube-api/types';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { createPgCluster, pgClustersAvailable } from '../support/pg-clusters';
import { startTestServer, uniqueName, type TestServer } from '../support/server';
import {
  NS,
  INGRESSES,
  LEASES,
  SECRETS,
  TENANTS,
  apiAt,
  applyTenant,
  condition,
  eventsFor,
  eventually,
  isReady,
  secretData,
  startOperator,
  tenantObject,
  usageIn,
} from './support';

let server: TestServer;
let kube: FakeKubeApiServer;
let database: FreshDatabase;
const operators: Runtime[] = [];

beforeAll(async () => {
  // A database of its own: /readyz waits for every tenant to be at this build's release, and other
  // files make tenants with other apps (other releases) in the suite's database.
  database = await freshDatabase();
  server = await startTestServer({ databaseUrl: database.url });
}, 60_000);
afterAll(async () => {
  await server.close();
  await database.drop();
});

beforeEach(async () => {
  kube = await startFakeKubeApi();
});
afterEach(async () => {
  for (const op of operators.splice(0)) await op.close();
  await kube.close();
});

async function operator(identity = 'operator-0', env: Record<string, string> = {}): Promise<Runtime> {
  const op = await startOperator(kube, { identity, env, databaseUrl: database.url });
  operators.push(op);
  return op;
}

/** An operator without OPERATOR_IDENTITY (as one run outside the cluster): its identity is the default. */
const unnamedOperator = () => operator(undefined, { OPERATOR_IDENTITY: '' });

/** Checks `id` is client-go's default identity, `<hostname>_<uuid>`, for the host these tests run on. */
function expectHostIdentity(id: string | undefined): void {
  const prefix = `${hostname()}_`;
  expect(id?.slice(0, prefix.length)).toBe(prefix);
  expect(id?.slice(prefix.length)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
}

const readyTenant = (name: string, ms?: number) =>
  eventually(`Tenant ${name} Ready`, () => (isReady(tenantObject(kube, name)) ? tenantObject(kube, name) : undefined), ms);

async function schemaExists(name: string): Promise<boolean> {
  const { rows } = await server.db.query(`SELECT 1 FROM information_schema.schemata WHERE schema_name = $1`, [schemaOf(name)]);
  return rows.length === 1;
}

async function metric(op: Runtime, line: RegExp): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${op.operations!.port}/metrics`)).text();
  const m = line.exec(text);
  return m ? Number(m[1]) : NaN;
}

/** QUIRE_PLANS of the operator in the plan and usage tests: two plans, the first the default. */
const PLANS = { default: 'starter', plans: { starter: { users: 5 }, business: { users: 100 } } };

/** The tenant's own plan, as the platform table holds it (its config key `plan`). */
async function planInTable(name: string): Promise<string | null> {
  const { rows } = await server.db.query<{ plan: string | null }>(`SELECT "config"->>'plan' AS plan FROM quire.tenants WHERE "name" = $1`, [name]);
  return rows[0]?.plan ?? null;
}

function specPatch(name: string, spec: Record<string, unknown>): void {
  kube.store.patch(TENANTS, NS, name, (current) => ({ ...current, spec: { ...(current.spec as JsonObject), ...(spec as JsonObject) } }), undefined);
}

describe('the Tenant operator, against a stand-in API server through real @kubernetes/client-node', () => {
  it('turns an applied Tenant into a schema, a credentials Secret and an API that answers at <name>.<BASE_DOMAIN>', async () => {
    await operator();
    const name = uniqueName('op');
    const applied = performance.now();
    applyTenant(kube, name, { adminEmail: 'ops@example.com', allowCorsOrigins: ['https://app.example.com'] });

    const tenant = await readyTenant(name);
    const host = `${name}.localhost`;
    const ping = await eventually('the API to answer', async () => {
      const r = await apiAt(server.port, host, '/api/method/ping');
      return r.status === 200 ? r : undefined;
    });
    const answeredMs = performance.now() - applied;
    console.log(`[operator] applied Tenant -> Ready and API answering ping at ${host}: ${answeredMs.toFixed(0)} ms`);
    expect(ping.body).toEqual({ message: 'pong' });

    expect(tenant.metadata.finalizers).toEqual(['quire.dev/tenant']);
    expect(tenant.status).toMatchObject({
      observedGeneration: 1,
      schema: schemaOf(name),
      cluster: 'default',
      hosts: [host],
      adminSecretName: `${name}-admin-credentials`,
    });
    expect(condition(tenant, 'SchemaReady')).toMatchObject({ status: 'True', reason: 'Created', observedGeneration: 1 });
    expect(condition(tenant, 'DomainsReady')).toMatchObject({ status: 'True', reason: 'DomainsRegistered', message: 'No custom domains' });
    expect(condition(tenant, 'ClusterReady')).toMatchObject({ status: 'True', reason: 'OnCluster', message: 'On cluster default' });
    expect(await schemaExists(name)).toBe(true);

    const secret = kube.store.tryGet(SECRETS, NS, `${name}-admin-credentials`);
    expect(secret?.metadata).toMatchObject({
      labels: { 'app.kubernetes.io/managed-by': 'quire-operator', 'quire.dev/tenant': name },
      ownerReferences: [{ kind: 'Tenant', name, uid: tenant.metadata.uid, controller: true }],
    });
    const { api_key, api_secret } = secretData(secret);
    const auth = `token ${api_key}:${api_secret}`;
    const todos = await apiAt(server.port, host, '/api/resource/ToDo', auth);
    expect(todos).toEqual({ status: 200, body: { data: [] } });
    const admin = await apiAt(server.port, host, '/api/resource/User/Administrator', auth);
    expect(admin.body.data.email).toBe('ops@example.com');
    expect(server.platform.tenants.get(name)?.config.allow_cors).toEqual(['https://app.example.com']);
    expect(kube.store.tryGet(INGRESSES, NS, `${name}-domains`)).toBeUndefined();
    expect(eventsFor(kube, name).map((e) => e.reason)).toEqual(expect.arrayContaining(['Created', 'Ready']));
  });

  it('spec.suspended and spec.readOnly suspend the tenant, make it read-only, and serve it again', async () => {
    await operator();
    const name = uniqueName('op');
    applyTenant(kube, name);
    await readyTenant(name);
    const host = `${name}.localhost`;
    const answers = (status: number) =>
      eventually(`ping ${status}`, async () => ((await apiAt(server.port, host, '/api/method/ping')).status === status ? true : undefined));

    specPatch(name, { suspended: true });
    await answers(503);
    expect(server.platform.tenants.get(name)?.status).toBe('suspended');
    specPatch(name, { suspended: false, readOnly: true });
    await answers(200);
    await eventually('read-only', () => (server.platform.tenants.get(name)?.status === 'read_only' ? true : undefined));
    specPatch(name, { readOnly: false });
    await eventually('active', () => (server.platform.tenants.get(name)?.status === 'active' ? true : undefined));
    // The event is recorded after the status is set: the status can be seen first.
    const reasons = await eventually('Resumed event', () => {
      const seen = eventsFor(kube, name).map((e) => e.reason);
      return seen.includes('Resumed') ? seen : undefined;
    });
    expect(reasons).toEqual(expect.arrayContaining(['Suspended', 'ReadOnly', 'Resumed']));
  });

  it('spec.plan gives the tenant its plan and changes it; a plan QUIRE_PLANS does not define changes nothing until fixed', async () => {
    await operator('operator-0', { QUIRE_PLANS: JSON.stringify(PLANS) });
    const name = uniqueName('op');
    const readyAt = (generation: number) =>
      eventually(`generation ${generation} Ready`, () => {
        const t = tenantObject(kube, name);
        return isReady(t) && t?.metadata.generation === generation ? t : undefined;
      });
    applyTenant(kube, name, { plan: 'business' });
    const first = await readyTenant(name);
    expect(await planInTable(name)).toBe('business');
    expect(condition(first, 'PlanReady')).toMatchObject({ status: 'True', reason: 'PlanApplied', message: 'On plan business' });
    expect(usageIn(first)?.plan).toBe('business');
    await eventually('the API processes to see it', () => (server.platform.tenants.get(name)?.config.plan === 'business' ? true : undefined));

    specPatch(name, { plan: 'starter' });
    expect(usageIn(await readyAt(2))?.plan).toBe('starter');
    expect(await planInTable(name)).toBe('starter');

    specPatch(name, { plan: 'gold' });
    const unknown = await eventually('PlanReady=False', () => {
      const t = tenantObject(kube, name);
      const plan = condition(t, 'PlanReady');
      return plan?.status === 'False' && plan.observedGeneration === 3 ? t : undefined;
    });
    expect(condition(unknown, 'PlanReady')).toMatchObject({
      reason: 'UnknownPlan',
      message: `spec.plan: No plan named "gold": the plans are starter, business (QUIRE_PLANS). Tenant ${name} keeps plan starter`,
    });
    expect(condition(unknown, 'Ready')).toMatchObject({ status: 'False', reason: 'UnknownPlan' });
    expect(condition(unknown, 'SchemaReady')).toMatchObject({ status: 'True' });
    expect(await planInTable(name)).toBe('starter');
    expect(usageIn(unknown)?.plan).toBe('starter');
    // Events are recorded after the status is written: the status can be seen first.
    const warnings = await eventually('UnknownPlan event', () => {
      const found = eventsFor(kube, name).filter((e) => e.reason === 'UnknownPlan');
      return found.length > 0 ? found : undefined;
    });
    expect(warnings).toMatchObject([{ type: 'Warning', note: expect.stringContaining('No plan named "gold"') }]);

    specPatch(name, { plan: '' }); // fixed: cleared, so the default plan
    const fixed = await readyAt(4);
    expect(await planInTable(name)).toBeNull();
    expect(condition(fixed, 'PlanReady')).toMatchObject({ status: 'True', reason: 'PlanApplied', message: 'On the default plan, starter' });
    expect(usageIn(fixed)?.plan).toBe('starter');
    const changes = await eventually('the third PlanChanged event', () => {
      const found = eventsFor(kube, name).filter((e) => e.reason === 'PlanChanged');
      return found.length >= 3 ? found : undefined;
    });
    expect(changes.map((e) => [e.type, e.note])).toEqual([
      ['Normal', `Tenant ${name} is on plan business`],
      ['Normal', `Tenant ${name} is on plan starter`],
      ['Normal', `Tenant ${name} is on the default plan, starter`],
    ]);
  });

  it("writes the tenant's usage to status.usage, refreshed each period, and writes status only when the figures change", async () => {
    await operator('operator-0', { QUIRE_PLANS: JSON.stringify(PLANS), OPERATOR_USAGE_REFRESH_SECONDS: '1' });
    const name = uniqueName('op');
    applyTenant(kube, name, { plan: 'business' });
    const ready = await readyTenant(name);
    expect(usageIn(ready)).toMatchObject({ plan: 'business', requestsToday: 0, requestSecondsToday: 0, databaseSecondsToday: 0 });

    // What the API processes record: a measure of what the tenant keeps, and three requests' counts.
    await measureTenants(server.db, [{ name, schema: schemaOf(name) }]);
    for (const ms of [1200, 300, 500]) server.platform.usage.request(name, ms);
    server.platform.usage.database(name, 250);
    await server.platform.usage.flush();
    // Compared with the table as read then: an API process's sampler may measure the tenant again meanwhile.
    const { shown, read } = await eventually('status.usage with the requests and the measure', async () => {
      const [now] = await readUsage(server.db, [name]);
      const usage = usageIn(tenantObject(kube, name));
      return usage?.requestsToday === 3 && now && usage.measuredAt === now.measuredAt ? { shown: usage, read: now } : undefined;
    });
    expect(shown).toEqual({
      plan: 'business',
      requestsToday: 3,
      requestSecondsToday: 2,
      databaseSecondsToday: 0.25,
      databaseBytes: read.databaseBytes,
      fileBytes: 0,
      users: 0,
      measuredAt: read.measuredAt,
    });
    expect(shown.databaseBytes).toBeGreaterThan(0);

    // Refreshed every second from here on, but written only when something changed: here nothing does.
    const statusWrites = () => kube.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith(`/tenants/${name}/status`)).length;
    const writes = statusWrites();
    await new Promise((r) => setTimeout(r, 2500));
    expect(statusWrites()).toBe(writes);
  });

  it('spec.cluster: default creates the tenant there and reports it in status.cluster', async () => {
    await operator();
    const name = uniqueName('op');
    applyTenant(kube, name, { cluster: 'default' });
    const tenant = await readyTenant(name);
    expect(tenant.status).toMatchObject({ schema: schemaOf(name), cluster: 'default' });
    expect(condition(tenant, 'ClusterReady')).toMatchObject({ status: 'True', reason: 'OnCluster', message: 'On cluster default, as spec.cluster asks' });
    expect(server.platform.tenants.get(name)?.cluster).toBe('default');
    expect(await schemaExists(name)).toBe(true);
    const created = await eventually('the Created event', () => eventsFor(kube, name).find((e) => e.reason === 'Created'));
    expect(created.note).toContain(' on cluster default;');
  });

  it('spec.cluster naming no registered cluster creates nothing: UnknownCluster with a Warning, until the spec is fixed', async () => {
    await operator();
    const name = uniqueName('op');
    applyTenant(kube, name, { cluster: 'nowhere' });
    const refused = await eventually('Ready=False', () => {
      const t = tenantObject(kube, name);
      return condition(t, 'Ready')?.status === 'False' ? t : undefined;
    });
    const message = `spec.cluster: no cluster named "nowhere": the clusters are default (quire cluster list). Tenant ${name} is not created`;
    expect(condition(refused, 'Ready')).toMatchObject({ reason: 'UnknownCluster', message });
    expect(condition(refused, 'SchemaReady')).toMatchObject({ status: 'False', reason: 'UnknownCluster', message });
    expect(condition(refused, 'ClusterReady')).toMatchObject({ status: 'False', reason: 'UnknownCluster', message });
    expect(condition(refused, 'PlanReady')).toMatchObject({ status: 'Unknown', reason: 'SchemaNotReady' });
    expect((refused.status as { cluster?: string }).cluster).toBeUndefined();
    expect(server.platform.tenants.get(name)).toBeUndefined();
    expect(await schemaExists(name)).toBe(false);
    expect(kube.store.tryGet(SECRETS, NS, `${name}-admin-credentials`)).toBeUndefined();
    const warnings = await eventually('UnknownCluster event', () => {
      const found = eventsFor(kube, name).filter((e) => e.reason === 'UnknownCluster');
      return found.length > 0 ? found : undefined;
    });
    expect(warnings).toMatchObject([{ type: 'Warning', note: message }]);

    specPatch(name, { cluster: '' }); // fixed: placed by weight (here the only cluster, default)
    const fixed = await readyTenant(name);
    expect(fixed.metadata.generation).toBe(2);
    expect(fixed.status).toMatchObject({ cluster: 'default' });
    expect(condition(fixed, 'SchemaReady')).toMatchObject({ status: 'True', reason: 'Created' });
    expect(condition(fixed, 'ClusterReady')).toMatchObject({ status: 'True', reason: 'OnCluster', message: 'On cluster default' });
  });

  it('a spec.cluster naming a draining or unknown cluster moves nothing (ClusterDraining, UnknownCluster); a draining cluster takes no new tenant', async () => {
    // A second cluster in the registry, draining so that nothing is placed or moved there; this
    // test never opens it, so it needs no server of its own.
    const other = uniqueName('elsewhere');
    await server.db.query(`INSERT INTO quire.clusters ("name", "url", "state") VALUES ($1, 'env:QUIRE_TEST_UNREACHABLE', 'draining')`, [other]);
    try {
      await operator();
      const name = uniqueName('op');
      applyTenant(kube, name);
      await readyTenant(name);

      specPatch(name, { cluster: other });
      const asked = await eventually('ClusterReady=False', () => {
        const t = tenantObject(kube, name);
        const c = condition(t, 'ClusterReady');
        return c?.status === 'False' && c.observedGeneration === 2 ? t : undefined;
      });
      const message = `spec.cluster: cluster ${other} is draining: no new tenant goes there (quire cluster undrain ${other}). Tenant ${name} stays on cluster default`;
      expect(condition(asked, 'ClusterReady')).toMatchObject({ reason: 'ClusterDraining', message });
      expect(condition(asked, 'Ready')).toMatchObject({ status: 'False', reason: 'ClusterDraining' });
      expect(condition(asked, 'SchemaReady')).toMatchObject({ status: 'True', reason: 'Created' });
      expect(asked.status).toMatchObject({ cluster: 'default', schema: schemaOf(name) });
      expect(server.platform.tenants.get(name)?.cluster).toBe('default');
      expect((await apiAt(server.port, `${name}.localhost`, '/api/method/ping')).status).toBe(200); // still served where it is
      const warnings = await eventually('ClusterDraining event', () => {
        const found = eventsFor(kube, name).filter((e) => e.reason === 'ClusterDraining');
        return found.length > 0 ? found : undefined;
      });
      expect(warnings).toMatchObject([{ type: 'Warning', note: message }]);
      expect(eventsFor(kube, name).map((e) => e.reason)).not.toContain('MoveStarted');

      specPatch(name, { cluster: 'nowhere' });
      const unknown = await eventually('UnknownCluster', () => {
        const t = tenantObject(kube, name);
        const c = condition(t, 'ClusterReady');
        return c?.reason === 'UnknownCluster' && c.observedGeneration === 3 ? t : undefined;
      });
      expect(condition(unknown, 'ClusterReady')?.message).toBe(
        `spec.cluster: no cluster named "nowhere": the clusters are default, ${other} (quire cluster list). Tenant ${name} stays on cluster default`,
      );
      expect(condition(unknown, 'SchemaReady')).toMatchObject({ status: 'True' });

      specPatch(name, { cluster: 'default' });
      expect(condition(await readyTenant(name), 'ClusterReady')).toMatchObject({ status: 'True', reason: 'OnCluster' });

      // A new tenant asked onto the draining cluster: nothing is made.
      const drained = uniqueName('op');
      applyTenant(kube, drained, { cluster: other });
      const refused = await eventually(`${drained} Ready=False`, () => {
        const t = tenantObject(kube, drained);
        return condition(t, 'Ready')?.status === 'False' ? t : undefined;
      });
      expect(condition(refused, 'SchemaReady')).toMatchObject({ reason: 'ClusterDraining', message: expect.stringContaining(`cluster ${other} is draining`) });
      expect(condition(refused, 'ClusterReady')).toMatchObject({ status: 'False', reason: 'ClusterDraining' });
      expect(server.platform.tenants.get(drained)).toBeUndefined();
      expect(kube.store.tryGet(SECRETS, NS, `${drained}-admin-credentials`)).toBeUndefined();
    } finally {
      await server.db.query(`DELETE FROM quire.clusters WHERE "name" = $1`, [other]);
    }
  });

  const clusters = pgClustersAvailable();
  it.skipIf(!clusters.ok)(
    'creates a tenant on another Postgres cluster (its URL read from QUIRE_CLUSTER_URL_<NAME>, as the chart sets it)',
    async () => {
      const pg = await createPgCluster();
      const cluster = uniqueName('b');
      const variable = `QUIRE_CLUSTER_URL_${cluster.toUpperCase().replace(/-/g, '_')}`;
      vi.stubEnv(variable, pg.url); // what the chart's env entry does, for this process's server and operator
      const name = uniqueName('op');
      const schemaOnB = async (): Promise<boolean> => {
        const db = new PgDatabase({ connectionString: pg.url, poolSize: 1 });
        try {
          return (await db.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schemaOf(name)])).rows.length === 1;
        } finally {
          await db.close();
        }
      };
      try {
        // What the chart's migrate Job does, once per cluster in its values.
        await addCluster(server.platform, { name: cluster, url: `env:${variable}`, weight: 1 });
        await operator();
        applyTenant(kube, name, { cluster });
        const tenant = await readyTenant(name, 30_000);
        expect(tenant.status).toMatchObject({ schema: schemaOf(name), cluster });
        expect(condition(tenant, 'ClusterReady')).toMatchObject({
          status: 'True',
          reason: 'OnCluster',
          message: `On cluster ${cluster}, as spec.cluster asks`,
        });
        expect(await schemaOnB()).toBe(true);
        expect(await schemaExists(name)).toBe(false); // not on the platform database
        const { api_key, api_secret } = secretData(kube.store.tryGet(SECRETS, NS, `${name}-admin-credentials`));
        const todos = await eventually('the API to serve it from its cluster', async () => {
          const r = await apiAt(server.port, `${name}.localhost`, '/api/resource/ToDo', `token ${api_key}:${api_secret}`);
          return r.status === 200 ? r : undefined;
        });
        expect(todos.body).toEqual({ data: [] });

        // The suite's own server has wal_level=replica: a move there is refused, retried with backoff, and the tenant stays.
        const walLevel = (await server.db.query<{ level: string }>(`SELECT current_setting('wal_level') AS "level"`)).rows[0]?.level;
        if (walLevel !== 'logical') {
          specPatch(name, { cluster: 'default' });
          const asked = await eventually('MoveFailed', () => {
            const t = tenantObject(kube, name);
            return condition(t, 'ClusterReady')?.reason === 'MoveFailed' ? t : undefined;
          });
          expect(condition(asked, 'ClusterReady')).toMatchObject({
            status: 'False',
            message: expect.stringMatching(
              new RegExp(
                `^Moving tenant ${name} from cluster ${cluster} to cluster default failed \\(attempt 1\\): Cluster default has wal_level=${walLevel}: .* It is tried again in 10 s`,
              ),
            ),
          });
          expect(asked.status).toMatchObject({ cluster });
          expect(server.platform.tenants.get(name)?.cluster).toBe(cluster);
          await eventually('the MoveFailed Warning', () => eventsFor(kube, name).find((e) => e.reason === 'MoveFailed' && e.type === 'Warning'));
        }

        // Deleted with its data: the schema goes from its own cluster.
        specPatch(name, { deletionPolicy: 'Delete' });
        const generation = tenantObject(kube, name)?.metadata.generation;
        await eventually('deletionPolicy Delete seen', () =>
          condition(tenantObject(kube, name), 'Ready')?.observedGeneration === generation ? true : undefined,
        );
        kube.store.delete(TENANTS, NS, name);
        await eventually('the Tenant to be gone', () => (tenantObject(kube, name) ? undefined : true));
        expect(server.platform.tenants.get(name)).toBeUndefined();
        expect(await schemaOnB()).toBe(false);
      } finally {
        // Nothing else in this file may be placed on that cluster, nor find a tenant on it once it is gone.
        for (const op of operators.splice(0)) await op.close();
        await dropTenant(server.platform, name).catch(() => undefined);
        await server.db.query(`DELETE FROM quire.clusters WHERE "name" = $1`, [cluster]).catch(() => setClusterState(server.platform, cluster, 'draining'));
        await server.platform.clusters.refresh();
        await server.platform.clusters.closeIdle(Number.MAX_SAFE_INTEGER); // this process's pool there
        await pg.stop();
        vi.unstubAllEnvs();
      }
    },
    90_000,
  );

  it('provisions ten Tenants applied at once, each answering within seconds', async () => {
    await operator();
    const names = Array.from({ length: 10 }, () => uniqueName('op'));
    const applied = performance.now();
    for (const name of names) applyTenant(kube, name);
    const times = await Promise.all(
      names.map(async (name) => {
        await readyTenant(name, 30_000);
        await eventually(`${name} answering`, async () =>
          (await apiAt(server.port, `${name}.localhost`, '/api/method/ping')).status === 200 ? true : undefined,
        );
        return performance.now() - applied;
      }),
    );
    times.sort((a, b) => a - b);
    console.log(`[operator] 10 Tenants applied at once (2 workers): API answering after median ${times[4]!.toFixed(0)} ms, last ${times[9]!.toFixed(0)} ms`);
    expect(times[9]).toBeLessThan(30_000);
  });

  it('routes an added domain: registered with the tenant, an Ingress for it, the API answering there, and removed again', async () => {
    await operator();
    const name = uniqueName('op');
    applyTenant(kube, name);
    await readyTenant(name);
    const { api_key, api_secret } = secretData(kube.store.tryGet(SECRETS, NS, `${name}-admin-credentials`));
    const domain = `shop-${name}.example.com`;

    specPatch(name, { domains: [domain] });
    const updated = await eventually('the domain in status', () => {
      const t = tenantObject(kube, name);
      return isReady(t) && (t?.status as { hosts: string[] }).hosts.includes(domain) ? t : undefined;
    });
    expect(updated.metadata.generation).toBe(2);
    expect(condition(updated, 'DomainsReady')).toMatchObject({ status: 'True', observedGeneration: 2 });
    const ingress = kube.store.tryGet(INGRESSES, NS, `${name}-domains`)!;
    expect(ingress.metadata.annotations).toMatchObject({ 'cert-manager.io/cluster-issuer': 'letsencrypt' });
    expect(ingress.metadata.ownerReferences).toMatchObject([{ kind: 'Tenant', uid: updated.metadata.uid }]);
    expect(ingress.spec).toEqual({
      ingressClassName: 'nginx',
      tls: [{ hosts: [domain], secretName: `${name}-domains-tls` }],
      rules: [
        {
          host: domain,
          http: {
            paths: [
              { path: '/oauth', pathType: 'Prefix', backend: { service: { name: 'quire-auth', port: { name: 'http' } } } },
              { path: '/.well-known', pathType: 'Prefix', backend: { service: { name: 'quire-auth', port: { name: 'http' } } } },
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'quire-api', port: { name: 'http' } } } },
            ],
          },
        },
      ],
    });
    const listed = await eventually('the API at the domain', async () => {
      const r = await apiAt(server.port, domain, '/api/resource/ToDo', `token ${api_key}:${api_secret}`);
      return r.status === 200 ? r : undefined;
    });
    expect(listed.body).toEqual({ data: [] });

    specPatch(name, { domains: [] });
    await eventually('the Ingress to go', () => (kube.store.tryGet(INGRESSES, NS, `${name}-domains`) ? undefined : true));
    await eventually('the domain to stop resolving', async () => ((await apiAt(server.port, domain, '/api/method/ping')).status === 200 ? undefined : true));
    expect(server.platform.tenants.get(name)?.domains).toEqual([]);
  });

  it('deletes with deletionPolicy Delete: the schema is dropped, the Ingress and Secret go, the finalizer is removed', async () => {
    await operator();
    const name = uniqueName('op');
    applyTenant(kube, name, { deletionPolicy: 'Delete', domains: [`${name}.example.net`] });
    await readyTenant(name);
    expect(kube.store.tryGet(INGRESSES, NS, `${name}-domains`)).toBeDefined();

    kube.store.delete(TENANTS, NS, name);
    expect(tenantObject(kube, name)?.metadata.deletionTimestamp).toBeDefined(); // held by the finalizer
    await eventually('the Tenant to be gone', () => (tenantObject(kube, name) ? undefined : true));
    expect(await schemaExists(name)).toBe(false);
    expect(server.platform.tenants.get(name)).toBeUndefined();
    expect(kube.store.tryGet(SECRETS, NS, `${name}-admin-credentials`)).toBeUndefined();
    expect(kube.store.tryGet(INGRESSES, NS, `${name}-domains`)).toBeUndefined();
    expect(eventsFor(kube, name).map((e) => e.reason)).toContain('Deleted');
  });

  it('deletes with deletionPolicy Retain: the tenant and its data stay, only the Ingress and Secret go', async () => {
    await operator();
    const name = uniqueName('op');
    applyTenant(kube, name, { domains: [`${name}.example.net`] });
    await readyTenant(name);
    const { api_key, api_secret } = secretData(kube.store.tryGet(SECRETS, NS, `${name}-admin-credentials`));

    kube.store.delete(TENANTS, NS, name);
    await eventually('the Tenant to be gone', () => (tenantObject(kube, name) ? undefined : true));
    expect(await schemaExists(name)).toBe(true);
    expect(kube.store.tryGet(SECRETS, NS, `${name}-admin-credentials`)).toBeUndefined();
    expect(kube.store.tryGet(INGRESSES, NS, `${name}-domains`)).toBeUndefined();
    const stillServed = await apiAt(server.port, `${name}.localhost`, '/api/resource/ToDo', `token ${api_key}:${api_secret}`);
    expect(stillServed.status).toBe(200);
    expect(eventsFor(kube, name).map((e) => e.reason)).toContain('Retained');
  });

  it('survives a dropped watch and a 410 Gone: changes made meanwhile are reconciled', async () => {
    const op = await operator();
    const first = uniqueName('op');
    applyTenant(kube, first);
    await readyTenant(first);

    // Dropped: the informer resumes from its resourceVersion and sees what happened meanwhile.
    kube.dropWatches();
    const second = uniqueName('op');
    applyTenant(kube, second);
    await readyTenant(second);

    // 410: the informer must relist (a watch from its resourceVersion is refused).
    kube.expireWatches();
    const third = uniqueName('op');
    applyTenant(kube, third);
    await readyTenant(third);
    expect(kube.requests.filter((r) => r.path.endsWith('/tenants') && r.query.watch === undefined).length).toBeGreaterThanOrEqual(2); // listed again

    // Any other watch error stops a client-node informer for good: ours is restarted.
    kube.failNext(1, 500, 'etcdserver: leader changed', /\/tenants$/);
    kube.dropWatches();
    await eventually('a restarted informer', async () =>
      (await metric(op, /quire_operator_watch_restarts_total\{resource="tenants"\} (\d+)/)) >= 1 ? true : undefined,
    );
    const fourth = uniqueName('op');
    applyTenant(kube, fourth);
    await readyTenant(fourth);
  });

  it('reconciles only while holding the Lease: a standby takes over when the leader stops', async () => {
    const a = await operator('operator-a');
    await eventually('operator-a to lead', () => (a.operator?.controller.isLeader ? true : undefined));
    const b = await operator('operator-b');
    const one = uniqueName('op');
    applyTenant(kube, one);
    await readyTenant(one);
    await new Promise((r) => setTimeout(r, 500)); // several retry periods: b keeps trying and failing
    expect(b.operator?.controller.isLeader).toBe(false);
    expect(new Set(eventsFor(kube, one).map((e) => e.instance))).toEqual(new Set(['operator-a']));
    expect(await metric(a, /^quire_operator_leader (\d+)/m)).toBe(1);
    expect(await metric(b, /^quire_operator_leader (\d+)/m)).toBe(0);
    expect(await metric(b, /quire_operator_reconcile_total\{result="success"\} (\d+)/)).toBe(0);
    const lease = kube.store.tryGet(LEASES, NS, 'quire-operator');
    expect(lease?.spec).toMatchObject({ holderIdentity: 'operator-a', leaseDurationSeconds: 2 });

    await a.shutdown(); // releases the Lease
    operators.splice(operators.indexOf(a), 1);
    await eventually('operator-b to lead', () => (b.operator?.controller.isLeader ? true : undefined), 5000);
    const two = uniqueName('op');
    applyTenant(kube, two);
    await readyTenant(two);
    expect(new Set(eventsFor(kube, two).map((e) => e.instance))).toEqual(new Set(['operator-b']));
    expect(kube.store.tryGet(LEASES, NS, 'quire-operator')?.spec).toMatchObject({ holderIdentity: 'operator-b', leaseTransitions: 1 });
  });

  it('takes over a Lease whose holder vanished only after it has gone unrenewed for a lease duration', async () => {
    kube.store.create(LEASES, NS, {
      metadata: { name: 'quire-operator' },
      spec: { holderIdentity: 'crashed-pod', leaseDurationSeconds: 2, renewTime: new Date().toISOString(), leaseTransitions: 3 },
    });
    const started = Date.now();
    const op = await operator('operator-c');
    const name = uniqueName('op');
    applyTenant(kube, name);
    await eventually('operator-c to lead', () => (op.operator?.controller.isLeader ? true : undefined), 10_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    await readyTenant(name);
    expect(kube.store.tryGet(LEASES, NS, 'quire-operator')?.spec).toMatchObject({ holderIdentity: 'operator-c', leaseTransitions: 4 });
  });

  it('gives two processes on one host distinct <hostname>_<random> identities: only one leads, the other once it releases', async () => {
    const a = await unnamedOperator();
    await eventually('the first to lead', () => (a.operator?.controller.isLeader ? true : undefined));
    const b = await unnamedOperator();
    const [idA, idB] = [a.operator!.identity, b.operator!.identity];
    expectHostIdentity(idA);
    expectHostIdentity(idB);
    expect(idA).not.toBe(idB);
    let bothLed = false;
    const sampler = setInterval(() => (bothLed ||= !!(a.operator?.controller.isLeader && b.operator?.controller.isLeader)), 10);
    try {
      const one = uniqueName('op');
      applyTenant(kube, one);
      await readyTenant(one);
      await new Promise((r) => setTimeout(r, 500)); // several retry periods: b finds the Lease held by another
      expect(b.operator?.controller.isLeader).toBe(false);
      expect(kube.store.tryGet(LEASES, NS, 'quire-operator')?.spec).toMatchObject({ holderIdentity: idA });
      expect(new Set(eventsFor(kube, one).map((e) => e.instance))).toEqual(new Set([idA]));

      await a.shutdown(); // releases the Lease
      operators.splice(operators.indexOf(a), 1);
      await eventually('the second to lead', () => (b.operator?.controller.isLeader ? true : undefined), 5000);
      expect(kube.store.tryGet(LEASES, NS, 'quire-operator')?.spec).toMatchObject({ holderIdentity: idB, leaseTransitions: 1 });
    } finally {
      clearInterval(sampler);
    }
    expect(bothLed).toBe(false);
  });

  it.each([
    ['a previous process on this host', () => `${hostname()}_${randomUUID()}`],
    ['a process from before identities had a suffix (the bare host name)', () => hostname()],
  ])('after a restart, waits for the Lease held by %s to expire instead of taking it for its own', async (_, holder) => {
    const predecessor = holder();
    kube.store.create(LEASES, NS, {
      metadata: { name: 'quire-operator' },
      spec: { holderIdentity: predecessor, leaseDurationSeconds: 2, renewTime: new Date().toISOString(), leaseTransitions: 0 },
    });
    const started = Date.now();
    const op = await unnamedOperator();
    expectHostIdentity(op.operator?.identity);
    expect(op.operator!.identity).not.toBe(predecessor);
    await eventually('the restarted process to lead', () => (op.operator?.controller.isLeader ? true : undefined), 10_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(kube.store.tryGet(LEASES, NS, 'quire-operator')?.spec).toMatchObject({ holderIdentity: op.operator!.identity, leaseTransitions: 1 });
  });

  it('answers a spec it cannot serve with Ready=False and a reason, without a retry loop, and recovers when it is fixed', async () => {
    const op = await operator();
    const owner = uniqueName('op');
    const domain = `${owner}.example.org`;
    applyTenant(kube, owner, { domains: [domain] });
    await readyTenant(owner);

    const badName = `9${uniqueName('op')}`;
    const badCors = uniqueName('op');
    const underBase = uniqueName('op');
    const taken = uniqueName('op');
    applyTenant(kube, badName);
    applyTenant(kube, badCors, { allowCorsOrigins: ['not an origin'] });
    applyTenant(kube, underBase, { domains: [`shop.${underBase}.localhost`] });
    applyTenant(kube, taken, { domains: [domain] });
    const reasonOf = (name: string) =>
      eventually(`${name}'s Ready=False`, () => {
        const ready = condition(tenantObject(kube, name), 'Ready');
        return ready?.status === 'False' ? ready : undefined;
      });
    expect(await reasonOf(badName)).toMatchObject({ reason: 'InvalidName', message: expect.stringContaining('Invalid tenant name') });
    expect(await reasonOf(badCors)).toMatchObject({ reason: 'InvalidSpec', message: expect.stringContaining('spec.allowCorsOrigins.0') });
    expect(await reasonOf(underBase)).toMatchObject({ reason: 'InvalidDomain', message: expect.stringContaining('under BASE_DOMAIN') });
    expect(await reasonOf(taken)).toMatchObject({ reason: 'DomainConflict', message: `Already registered: ${domain} (tenant ${owner})` });
    expect(condition(tenantObject(kube, taken), 'SchemaReady')).toMatchObject({ status: 'True' }); // the tenant itself is served
    expect(await schemaExists(badName)).toBe(false);

    // Once each has seen its own status write come back, nothing more happens until the spec changes.
    const invalid = () => metric(op, /quire_operator_reconcile_total\{result="invalid"\} (\d+)/);
    await new Promise((r) => setTimeout(r, 300));
    const before = await invalid();
    const requests = kube.requests.length;
    await new Promise((r) => setTimeout(r, 1000));
    expect(await invalid()).toBe(before);
    expect(kube.requests.slice(requests).filter((r) => !r.path.includes('/leases/'))).toEqual([]);
    expect((await fetch(`http://127.0.0.1:${op.operations!.port}/healthz`)).status).toBe(200);

    specPatch(badCors, { allowCorsOrigins: ['https://ok.example.com'] });
    expect((await readyTenant(badCors)).metadata.generation).toBe(2);
  });

  it('adopts a tenant made by the CLI (keeping its data and keys), and leaves tenants without a resource alone', async () => {
    const name = uniqueName('cli');
    const cli = await createTenant(server.platform, { name, domains: [`${name}.example.org`] });
    const cliAuth = `token ${cli.api_key}:${cli.api_secret}`;
    const created = await apiAt(server.port, `${name}.localhost`, '/api/resource/ToDo', cliAuth);
    expect(created.status).toBe(200);
    await server.tenant('cli').then((t) => t.call('POST', '/api/resource/ToDo', { json: { description: 'elsewhere' } }));
    const other = await server.tenant('cli');

    await operator();
    applyTenant(kube, name, { domains: [`${name}.example.org`, `www.${name}.example.org`] });
    const adopted = await readyTenant(name);
    expect(condition(adopted, 'SchemaReady')).toMatchObject({ status: 'True', reason: 'Adopted' });
    expect((adopted.status as { adminSecretName?: string }).adminSecretName).toBeUndefined();
    expect(kube.store.tryGet(SECRETS, NS, `${name}-admin-credentials`)).toBeUndefined();
    expect(eventsFor(kube, name).map((e) => e.reason)).toContain('Adopted');
    expect(server.platform.tenants.get(name)?.domains).toEqual([`${name}.example.org`, `www.${name}.example.org`]);
    expect((await apiAt(server.port, `www.${name}.example.org`, '/api/resource/ToDo', cliAuth)).status).toBe(200);
    expect(server.platform.tenants.get(other.name)).toBeDefined();
  });

  it('retries a 409 on a stale resourceVersion at once, and a failed API call with backoff', async () => {
    const op = await operator();
    const name = uniqueName('op');
    kube.failNext(1, 409, `Operation cannot be fulfilled on tenants.quire.dev "${name}": the object has been modified`, new RegExp(`/tenants/${name}$`));
    applyTenant(kube, name);
    await readyTenant(name);
    expect(await metric(op, /quire_operator_reconcile_total\{result="conflict"\} (\d+)/)).toBeGreaterThanOrEqual(1);

    const flaky = uniqueName('op');
    kube.failNext(2, 503, 'the server is currently unable to handle the request', new RegExp(`/tenants/${flaky}/status$`));
    applyTenant(kube, flaky);
    await readyTenant(flaky);
    expect(await metric(op, /quire_operator_reconcile_total\{result="error"\} (\d+)/)).toBeGreaterThanOrEqual(1);
    expect(await metric(op, /quire_operator_reconcile_duration_seconds_count (\d+)/)).toBeGreaterThanOrEqual(4);
  });

  it('is unready until it can list, and ready once the API server answers', async () => {
    kube.failNext(1000, 503, 'apiserver unavailable', /\/(tenants|ingresses|secrets)$/);
    const op = await operator();
    const readyz = async () => {
      const res = await fetch(`http://127.0.0.1:${op.operations!.port}/readyz`);
      return { status: res.status, body: (await res.json()) as { checks: Record<string, string> } };
    };
    const failing = await readyz();
    expect(failing.status).toBe(503);
    expect(failing.body.checks.kubernetes).toMatch(/failing: 503/);
    kube.failNext(0);
    const ready = await eventually('/readyz 200', async () => {
      const r = await readyz();
      return r.status === 200 ? r : undefined;
    });
    expect(ready.body.checks).toMatchObject({ database: 'ok', kubernetes: 'ok' });
  });
});
