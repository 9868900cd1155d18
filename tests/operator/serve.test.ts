import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { startFakeKubeApi, type FakeKubeApiServer } from '../support/kube-api';
import { spawnQuire, type Spawned } from '../support/process';
import { startTestServer, uniqueName, type TestServer } from '../support/server';
import { LEASES, NS, apiAt, applyTenant, eventually, isReady, operatorEnv, tenantObject } from './support';

let server: TestServer;
let kube: FakeKubeApiServer;
let proc: Spawned | undefined;

// The API, on the same database: it also brings the platform schema to this build, which a single
// service such as `serve operator` waits for (in a cluster the migration Job does it).
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

beforeEach(async () => {
  kube = await startFakeKubeApi();
});
afterEach(async () => {
  await proc?.stop('SIGKILL');
  await kube.close();
});

it('`quire serve operator` with a kubeconfig reconciles Tenants, serves /readyz, and on SIGTERM releases the Lease and exits 0', async () => {
  proc = spawnQuire(['serve', 'operator'], operatorEnv(kube, { identity: 'quire-operator-7d9f-abcde' }));
  await proc.waitFor(/Tenant operator watching namespace quire/, 60_000);
  const [, port] = await proc.waitFor(/Metrics and health on port (\d+)/);
  const readyz = await eventually('/readyz 200', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    return res.status === 200 ? ((await res.json()) as { checks: Record<string, string> }) : undefined;
  });
  expect(readyz.checks).toMatchObject({ database: 'ok', schema: 'ok', kubernetes: 'ok' });

  const name = uniqueName('op');
  applyTenant(kube, name);
  await eventually(`Tenant ${name} Ready`, () => (isReady(tenantObject(kube, name)) ? true : undefined));
  const ping = await eventually('the API at the tenant', async () => {
    const r = await apiAt(server.port, `${name}.localhost`, '/api/method/ping');
    return r.status === 200 ? r : undefined;
  });
  expect(ping.body).toEqual({ message: 'pong' });
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  expect(metrics).toMatch(/^quire_operator_leader 1$/m);
  expect(metrics).toMatch(/^quire_operator_reconcile_total\{result="success"\} [1-9]/m);
  expect(metrics).toMatch(/^quire_operator_workqueue_depth 0$/m);
  expect(kube.store.tryGet(LEASES, NS, 'quire-operator')?.spec).toMatchObject({ holderIdentity: 'quire-operator-7d9f-abcde' });

  expect(await proc.stop('SIGTERM')).toBe(0);
  proc = undefined;
  expect(kube.store.tryGet(LEASES, NS, 'quire-operator')?.spec).toMatchObject({ holderIdentity: '' });
}, 90_000);
