/* eslint-disable @typescript-eslint/no-unsafe-class-instance-assignment, @typescript-eslint/no-misused-spread -- client-node's generated models are classes
   used as plain data; it serializes object literals and spread copies exactly like instances, and operator code writes them the same way. */
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  Watch,
  makeInformer,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kubeconfigFor, startFakeKubeApi, type FakeKubeApiServer } from './index';

const GROUP = 'quire.dev';
const VERSION = 'v1alpha1';
const PLURAL = 'tenants';
const NS = 'default';
const TENANTS_PATH = `/apis/${GROUP}/${VERSION}/namespaces/${NS}/${PLURAL}`;

interface Tenant extends KubernetesObject {
  spec?: { domains?: string[]; deletionPolicy?: string };
  status?: { observedGeneration?: number; conditions?: unknown[] };
}

function tenant(name: string, extra: Partial<Tenant> = {}): Tenant {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Tenant',
    metadata: { name, namespace: NS },
    spec: { domains: [`${name}.example.com`], deletionPolicy: 'Retain' },
    ...extra,
  };
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function failure(promise: Promise<unknown>): Promise<{ code: number; body: any }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ApiException) {
      const body: unknown = err.body;
      return { code: err.code, body: typeof body === 'string' ? JSON.parse(body) : body };
    }
    throw err;
  }
  throw new Error('expected the request to fail');
}

let server: FakeKubeApiServer;
let kc: KubeConfig;
let custom: CustomObjectsApi;
let objects: KubernetesObjectApi;
const stoppers: (() => Promise<void>)[] = [];

beforeEach(async () => {
  server = await startFakeKubeApi();
  kc = kubeconfigFor(server);
  custom = kc.makeApiClient(CustomObjectsApi);
  objects = KubernetesObjectApi.makeApiClient(kc);
});

afterEach(async () => {
  for (const stop of stoppers.splice(0)) await stop();
  await server.close();
});

const ref = (name: string) => ({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, name });

function tenantInformer() {
  const informer = makeInformer<Tenant>(
    kc,
    TENANTS_PATH,
    () => custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL }) as Promise<KubernetesListObject<Tenant>>,
  );
  const events: string[] = [];
  const errors: unknown[] = [];
  informer.on('add', (o) => events.push(`add ${o.metadata?.name ?? ''} ${o.metadata?.resourceVersion ?? ''}`));
  informer.on('update', (o) => events.push(`update ${o.metadata?.name ?? ''} ${o.metadata?.deletionTimestamp ? 'deleting' : 'live'}`));
  informer.on('delete', (o) => events.push(`delete ${o.metadata?.name ?? ''}`));
  informer.on('error', (err) => errors.push(err));
  stoppers.push(() => informer.stop());
  return { informer, events, errors };
}

/** makeInformer does not auto-start: start() lists, then opens the watch. */
async function startedTenantInformer() {
  const result = tenantInformer();
  await result.informer.start();
  await waitFor(() => server.openWatches() === 1, 'the informer watch');
  return result;
}

describe('fake Kubernetes API server (driven by the real @kubernetes/client-node)', () => {
  it('creates, gets and lists a Tenant with server-set metadata', async () => {
    const created: Tenant = await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, body: tenant('acme') });
    expect(created.metadata).toMatchObject({ name: 'acme', namespace: NS, generation: 1, resourceVersion: '1' });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const got: Tenant = await custom.getNamespacedCustomObject(ref('acme'));
    expect(got).toMatchObject({ kind: 'Tenant', apiVersion: 'quire.dev/v1alpha1', spec: { domains: ['acme.example.com'] } });

    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: 'other',
      plural: PLURAL,
      body: { ...tenant('beta'), metadata: { name: 'beta' } },
    });
    const list = await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL });
    expect(list).toMatchObject({ kind: 'TenantList', apiVersion: 'quire.dev/v1alpha1', metadata: { resourceVersion: '2' } });
    expect(list.items.map((t: Tenant) => t.metadata?.name)).toEqual(['acme']);
    const all = await custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL });
    expect(all.items).toHaveLength(2);

    const dup = await failure(custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, body: tenant('acme') }));
    expect(dup.code).toBe(409);
    expect(dup.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'AlreadyExists', code: 409 });
    const missing = await failure(custom.getNamespacedCustomObject(ref('nope')));
    expect(missing.code).toBe(404);
    expect(missing.body).toMatchObject({ reason: 'NotFound', message: 'tenants.quire.dev "nope" not found' });
  });

  it('rejects a stale update with 409 Conflict and accepts a fresh one', async () => {
    const created: Tenant = await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, body: tenant('acme') });
    const fresh: Tenant = await custom.replaceNamespacedCustomObject({ ...ref('acme'), body: { ...created, spec: { domains: ['a.example.com'] } } });
    expect(fresh.metadata?.generation).toBe(2);
    const stale = await failure(custom.replaceNamespacedCustomObject({ ...ref('acme'), body: { ...created, spec: { domains: ['b.example.com'] } } }));
    expect(stale.code).toBe(409);
    expect(stale.body.reason).toBe('Conflict');
    const noVersion = await failure(custom.replaceNamespacedCustomObject({ ...ref('acme'), body: tenant('acme') }));
    expect(noVersion.code).toBe(422);
  });

  it('merge-patches through KubernetesObjectApi, with 409 for a stale resourceVersion', async () => {
    await objects.create(tenant('acme'));
    const labelAndPolicy: Tenant = {
      apiVersion: 'quire.dev/v1alpha1',
      kind: 'Tenant',
      metadata: { name: 'acme', namespace: NS, labels: { tier: 'gold' } },
      spec: { deletionPolicy: 'Delete' },
    };
    const patched = await objects.patch(labelAndPolicy, undefined, undefined, undefined, undefined, PatchStrategy.MergePatch);
    expect(patched.metadata?.labels).toEqual({ tier: 'gold' });
    expect(patched.spec).toEqual({ domains: ['acme.example.com'], deletionPolicy: 'Delete' });
    expect(patched.metadata?.generation).toBe(2);
    const stale = await failure(
      objects.patch(
        {
          apiVersion: 'quire.dev/v1alpha1',
          kind: 'Tenant',
          metadata: { name: 'acme', namespace: NS, resourceVersion: '1' },
          spec: { deletionPolicy: 'Retain' },
        },
        undefined,
        undefined,
        undefined,
        undefined,
        PatchStrategy.MergePatch,
      ),
    );
    expect(stale.code).toBe(409);
    expect(server.requests.some((r) => r.method === 'GET' && r.path === '/apis/quire.dev/v1alpha1')).toBe(true); // discovery
  });

  it('applies a JSON patch whose test op passes and rejects one whose test op fails with 422', async () => {
    const created: Tenant = await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, body: tenant('acme') });
    const rv = created.metadata?.resourceVersion ?? '';
    // CustomObjectsApi sends application/json-patch+json by default.
    const patched: Tenant = await custom.patchNamespacedCustomObject({
      ...ref('acme'),
      body: [
        { op: 'test', path: '/metadata/resourceVersion', value: rv },
        { op: 'add', path: '/metadata/finalizers', value: ['quire.dev/tenant'] },
      ],
    });
    expect(patched.metadata?.finalizers).toEqual(['quire.dev/tenant']);
    const failed = await failure(
      custom.patchNamespacedCustomObject({
        ...ref('acme'),
        body: [
          { op: 'test', path: '/metadata/resourceVersion', value: rv },
          { op: 'remove', path: '/metadata/finalizers/0' },
        ],
      }),
    );
    expect(failed.code).toBe(422);
    expect(failed.body).toMatchObject({ kind: 'Status', reason: 'Invalid', code: 422 });
    expect((await custom.getNamespacedCustomObject(ref('acme'))).metadata.finalizers).toEqual(['quire.dev/tenant']);
    expect(server.requests.at(-2)?.contentType).toBe('application/json-patch+json');
  });

  it('keeps status writes to /status: they never bump generation, and spec writes ignore status', async () => {
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: NS,
      plural: PLURAL,
      body: { ...tenant('acme'), status: { observedGeneration: 99 } },
    });
    const mergeOpts = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const withStatus: Tenant = await custom.patchNamespacedCustomObjectStatus(
      { ...ref('acme'), body: { status: { observedGeneration: 1 }, spec: { domains: ['ignored.example.com'] } } },
      mergeOpts,
    );
    expect(withStatus.status).toEqual({ observedGeneration: 1 });
    expect(withStatus.spec?.domains).toEqual(['acme.example.com']);
    expect(withStatus.metadata?.generation).toBe(1);

    const specChange: Tenant = await custom.patchNamespacedCustomObject(
      { ...ref('acme'), body: { spec: { domains: ['new.example.com'] }, status: { observedGeneration: 7 } } },
      mergeOpts,
    );
    expect(specChange.metadata?.generation).toBe(2);
    expect(specChange.status).toEqual({ observedGeneration: 1 });

    const rvBefore = specChange.metadata?.resourceVersion;
    const noop: Tenant = await custom.patchNamespacedCustomObject({ ...ref('acme'), body: { spec: { domains: ['new.example.com'] } } }, mergeOpts);
    expect(noop.metadata?.resourceVersion).toBe(rvBefore);
  });

  it('deletes with a finalizer in two steps: deletionTimestamp + MODIFIED, then DELETED once the finalizer is gone', async () => {
    const { events } = await startedTenantInformer();
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: NS,
      plural: PLURAL,
      body: tenant('acme', { metadata: { name: 'acme', finalizers: ['quire.dev/tenant'] } }),
    });
    const deleting: Tenant = await custom.deleteNamespacedCustomObject(ref('acme'));
    expect(deleting.metadata?.deletionTimestamp).toBeDefined();
    const still: Tenant = await custom.getNamespacedCustomObject(ref('acme'));
    expect(still.metadata?.deletionTimestamp).toBeDefined();
    await waitFor(() => events.includes('update acme deleting'), 'MODIFIED with deletionTimestamp');

    await custom.patchNamespacedCustomObject({
      ...ref('acme'),
      body: [
        { op: 'test', path: '/metadata/resourceVersion', value: still.metadata?.resourceVersion },
        { op: 'remove', path: '/metadata/finalizers' },
      ],
    });
    await waitFor(() => events.includes('delete acme'), 'DELETED');
    expect((await failure(custom.getNamespacedCustomObject(ref('acme')))).code).toBe(404);

    // Without finalizers the object goes at once.
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: 's1' }, stringData: { a: 'b' } } });
    await core.deleteNamespacedSecret({ namespace: NS, name: 's1' });
    expect((await failure(core.readNamespacedSecret({ namespace: NS, name: 's1' }))).code).toBe(404);
  });

  it('feeds an informer ADDED, MODIFIED and DELETED, and it keeps going after dropWatches()', async () => {
    await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, body: tenant('pre') });
    const { informer, events, errors } = await startedTenantInformer();
    expect(events).toEqual(['add pre 1']);
    await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, body: tenant('acme') });
    await custom.patchNamespacedCustomObject(
      { ...ref('acme'), body: { spec: { deletionPolicy: 'Delete' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await custom.deleteNamespacedCustomObject(ref('pre'));
    await waitFor(() => events.length === 4, 'four events');
    expect(events).toEqual(['add pre 1', 'add acme 2', 'update acme live', 'delete pre']);

    const watchesBefore = server.requests.filter((r) => r.query.watch === 'true').length;
    server.dropWatches();
    await waitFor(
      () => server.requests.filter((r) => r.query.watch === 'true').length > watchesBefore && server.openWatches() === 1,
      'the informer to reconnect',
    );
    const reconnect = server.requests.filter((r) => r.query.watch === 'true').at(-1);
    expect(reconnect?.query.resourceVersion).toBe('4'); // resumes from the last seen resourceVersion, no relist
    await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, body: tenant('after') });
    await waitFor(() => events.includes('add after 5'), 'an event after the reconnect');
    expect(
      informer
        .list()
        .map((t) => t.metadata?.name)
        .sort(),
    ).toEqual(['acme', 'after']);
    expect(errors).toEqual([]);
  });

  it('answers a watch from a compacted resourceVersion with ERROR 410, and the informer relists', async () => {
    await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, body: tenant('old') });
    await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, body: tenant('keep') });

    // A raw watch from before the compaction point.
    server.compact();
    const seen: { type: string; object: any }[] = [];
    const done = new Promise<unknown>((resolve) => {
      void new Watch(kc).watch(TENANTS_PATH, { resourceVersion: '1' }, (type: string, object: unknown) => seen.push({ type, object }), resolve);
    });
    expect(await done).toBeNull(); // the server ends the stream after the ERROR event
    expect(seen).toEqual([{ type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) }]);

    // An informer that was away while things changed comes back to a 410 and relists.
    const { informer, events } = await startedTenantInformer();
    expect(events).toHaveLength(2);
    await informer.stop();
    await custom.deleteNamespacedCustomObject(ref('old'));
    await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, body: tenant('new') });
    server.compact();
    const listsBefore = server.requests.filter((r) => r.method === 'GET' && r.path === TENANTS_PATH && r.query.watch === undefined).length;
    await informer.start();
    await waitFor(() => events.includes('delete old') && events.includes('add new 4'), 'the relist');
    const listsAfter = server.requests.filter((r) => r.method === 'GET' && r.path === TENANTS_PATH && r.query.watch === undefined).length;
    expect(listsAfter).toBe(listsBefore + 1);
    expect(
      informer
        .list()
        .map((t) => t.metadata?.name)
        .sort(),
    ).toEqual(['keep', 'new']);
    expect(server.requests.some((r) => r.query.watch === 'true' && r.query.resourceVersion === '2')).toBe(true);
  });

  it('honours timeoutSeconds on a watch and streams changes after the given resourceVersion', async () => {
    await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, body: tenant('a') });
    await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, body: tenant('b') });
    const seen: string[] = [];
    const started = Date.now();
    const done = new Promise<unknown>((resolve) => {
      void new Watch(kc).watch(
        TENANTS_PATH,
        { resourceVersion: '1', timeoutSeconds: 1 },
        (type: string, object: Tenant) => seen.push(`${type} ${object.metadata?.name ?? ''}`),
        resolve,
      );
    });
    expect(await done).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(seen).toEqual(['ADDED b']);
  });

  it('serves core Secrets, both Event APIs, Ingresses and Leases, with injected failures and a request log', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    server.failNext(1, 503);
    expect((await failure(core.listNamespacedSecret({ namespace: NS }))).code).toBe(503);
    await core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 'admin', labels: { 'app.kubernetes.io/managed-by': 'quire-operator' } }, data: { p: 'eA==' } },
    });
    const secrets = await core.listNamespacedSecret({ namespace: NS, labelSelector: 'app.kubernetes.io/managed-by=quire-operator' });
    expect(secrets.items.map((s) => s.metadata?.name)).toEqual(['admin']);
    expect((await core.listNamespacedSecret({ namespace: NS, labelSelector: 'app.kubernetes.io/managed-by=other' })).items).toEqual([]);
    expect(server.requests[0]).toMatchObject({ method: 'GET', path: `/api/v1/namespaces/${NS}/secrets`, status: 503 });

    await core.createNamespacedEvent({
      namespace: NS,
      body: { metadata: { name: 'e1' }, involvedObject: { kind: 'Tenant', name: 'acme' }, reason: 'Created' },
    });
    for (const obj of [
      { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'e2', namespace: NS }, reason: 'Created', eventTime: new Date().toISOString() },
      { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'acme', namespace: NS }, spec: { rules: [{ host: 'acme.example.com' }] } },
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'quire-operator', namespace: NS },
        spec: { holderIdentity: 'pod-a', leaseDurationSeconds: 15 },
      },
    ]) {
      await objects.create(obj);
    }
    const lease = await objects.read({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'quire-operator', namespace: NS } });
    expect(lease.metadata?.resourceVersion).toBe('5');
    const stale = await failure(objects.replace({ ...lease, metadata: { ...lease.metadata, resourceVersion: '1' } }));
    expect(stale.code).toBe(409);

    // Server-side apply (simplified: a merge, field ownership ignored) creates and updates.
    const applied = await objects.patch(
      { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'acme2', namespace: NS }, spec: { rules: [{ host: 'acme2.example.com' }] } },
      undefined,
      undefined,
      'quire-operator',
      true,
      PatchStrategy.ServerSideApply,
    );
    expect((applied.metadata as { generation?: number }).generation).toBe(1);
    expect(server.store.all().map((o) => `${o.apiVersion as string} ${o.kind as string}`)).toEqual([
      'v1 Secret',
      'v1 Event',
      'events.k8s.io/v1 Event',
      'networking.k8s.io/v1 Ingress',
      'coordination.k8s.io/v1 Lease',
      'networking.k8s.io/v1 Ingress',
    ]);
  });
});
