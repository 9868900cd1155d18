import { randomBytes } from 'node:crypto';
import { PgDatabase } from '@quire/db';
import { parseCidrList, QueueProducer } from '@quire/webhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { createPgCluster, makeAll, pgClustersAvailable, type PgCluster } from '../support/pg-clusters';
import { quireJson } from '../support/process';
import { startReceiver, type Received, type Receiver } from '../support/receiver';
import { call, startTestServer, type CallOptions, type CallResult, type TestServer } from '../support/server';
import { until } from '../support/until';

/**
 * Webhook delivery when tenants' schemas live on several Postgres clusters: a tenant's events are
 * written to the outbox on its own cluster (with its change), and the webhooks service claims,
 * delivers, retries and records them there — the in-process runner (found by its wake-up or its
 * sweep) and the Redis worker (woken by a wake-up naming the tenant). A registered cluster that
 * cannot be reached stops nothing. Real parts throughout: a fresh platform database, a real extra
 * Postgres cluster registered with the real CLI, and one more registered and then stopped.
 */

const available = pgClustersAvailable();
if (!available.ok) console.log(`webhooks on several clusters skipped: ${available.reason}`);

describe.skipIf(!available.ok)('webhooks on several clusters', () => {
  let platformDb: FreshDatabase;
  let b: PgCluster;
  let gone: PgCluster;
  let onB: PgDatabase;
  let receiver: Receiver;
  let server: TestServer | undefined;
  const env = (): NodeJS.ProcessEnv => ({ DATABASE_URL: platformDb.url });
  const quire = (...args: string[]) => quireJson(args, env());
  const allowNets = parseCidrList('127.0.0.1/32');
  const tenants: Record<'onDefault' | 'onB', { name: string; auth: string }> = { onDefault: { name: '', auth: '' }, onB: { name: '', auth: '' } };

  /** What afterAll undoes, last made first (whatever beforeAll got to). */
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    [platformDb, b, gone] = await makeAll<[FreshDatabase, PgCluster, PgCluster]>(cleanups, [
      { make: freshDatabase, undo: (d) => d.drop() },
      { make: createPgCluster, undo: (c) => c.stop() },
      { make: createPgCluster, undo: (c) => c.stop() },
    ]);
    receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    onB = new PgDatabase({ connectionString: b.url, poolSize: 2 });
    cleanups.push(() => onB.close());
    expect((await quire('migrate')).code).toBe(0);
    // Registered while it answers, then stopped: a cluster the webhooks service cannot reach.
    const added = await quire('cluster', 'add', 'gone', '--url', gone.url);
    expect(added.code, JSON.stringify(added.json)).toBe(0);
    await gone.stop();
  }, 180_000);
  // Each test's server delivers alone (another left running would sweep the same outboxes).
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  afterAll(async () => {
    for (const undo of cleanups.reverse()) await undo();
  });

  const as = (t: { name: string; auth: string }, method: string, path: string, options: CallOptions = {}): Promise<CallResult> =>
    call(server!.url, t.name, method, path, { auth: t.auth, ...options });

  /** The outbox rows of a webhook event on the platform database and on cluster b. */
  type EventRow = { tenant: string; status: string; attempts: number };
  async function eventRows(id: string): Promise<{ platform: EventRow[]; b: EventRow[] }> {
    const sql = `SELECT "tenant", "status", "attempts" FROM quire.webhook_events WHERE "id" = $1::uuid`;
    const [platform, onCluster] = await Promise.all([platformDb.db.query<EventRow>(sql, [id]), onB.query<EventRow>(sql, [id])]);
    return { platform: platform.rows, b: onCluster.rows };
  }

  const todoHook = (tenant: string) => `/todo-${tenant}`;
  const userHook = (tenant: string) => `/user-${tenant}`;
  const isTodo = (tenant: string, description: string) => (r: Received) =>
    r.url === todoHook(tenant) && (JSON.parse(r.body) as { description?: string }).description === description;

  async function createTodo(t: { name: string; auth: string }, description: string): Promise<void> {
    const res = await as(t, 'POST', '/api/resource/ToDo', { json: { description } });
    expect(res.status, res.text).toBe(200);
  }

  /** A gauge's value on the server's operations port. */
  async function gauge(name: string): Promise<number> {
    const text = await (await fetch(`${server!.opsUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return Number(line?.split(' ')[1]);
  }

  it('in-process: events of tenants on both clusters are delivered, retried and recorded on their own cluster; one added at run time is found', async () => {
    server = await startTestServer({ databaseUrl: platformDb.url, webhooks: { allowNets } });
    // Registered while the webhooks service runs, and a tenant on each cluster made by the CLI.
    const added = await quire('cluster', 'add', 'b', '--url', b.url);
    expect(added.code, JSON.stringify(added.json)).toBe(0);
    await Promise.all(
      (['default', 'b'] as const).map(async (cluster) => {
        const name = `wc${randomBytes(4).toString('hex')}`;
        const made = await quire('tenant', 'create', name, '--cluster', cluster);
        expect(made.code, JSON.stringify(made.json)).toBe(0);
        expect(made.json).toMatchObject({ name, cluster });
        const t = { name, auth: `token ${String(made.json.api_key)}:${String(made.json.api_secret)}` };
        tenants[cluster === 'default' ? 'onDefault' : 'onB'] = t;
        expect(
          (
            await until(
              () => as(t, 'GET', '/api/method/ping'),
              (r) => r.status === 200,
            )
          ).status,
        ).toBe(200);
      }),
    );
    const { onDefault, onB: bTenant } = tenants;
    for (const t of [onDefault, bTenant]) {
      const todo = await as(t, 'POST', '/api/resource/Webhook', {
        json: {
          name: `todo-${t.name}`,
          webhook_doctype: 'ToDo',
          webhook_docevent: 'after_insert',
          request_url: `${receiver.url}${todoHook(t.name)}`,
          request_structure: 'JSON',
          webhook_json: '{"name": {{ doc.name | tojson }}, "description": {{ doc.description | tojson }}}',
        },
      });
      expect(todo.status, todo.text).toBe(200);
      const user = await as(t, 'POST', '/api/resource/Webhook', {
        json: {
          name: `user-${t.name}`,
          webhook_doctype: 'User',
          webhook_docevent: 'after_insert',
          request_url: `${receiver.url}${userHook(t.name)}`,
          webhook_data: [{ fieldname: 'name', key: 'user' }],
        },
      });
      expect(user.status, user.text).toBe(200);
    }
    // b's receiver fails twice first: the retries are claimed and recorded on b too.
    receiver.respond((r) =>
      r.url === todoHook(bTenant.name) && receiver.received.filter((x) => x.url === r.url).length <= 2 ? { status: 503 } : { status: 200 },
    );

    const started = performance.now();
    await createTodo(onDefault, 'first on default');
    await createTodo(bTenant, 'first on b');
    const [fromDefault] = await receiver.waitFor(1, 10_000, isTodo(onDefault.name, 'first on default'));
    const toB = await receiver.waitFor(3, 15_000, isTodo(bTenant.name, 'first on b'));
    console.log(`in-process: delivered on default and (after two 503s) on b ${Math.round(performance.now() - started)} ms after the first write`);
    const bId = String(toB[0]!.headers['webhook-id']);
    expect(toB.map((r) => r.headers['webhook-id'])).toEqual([bId, bId, bId]);
    const defaultId = String(fromDefault!.headers['webhook-id']);

    // Each event is in its own cluster's outbox and not in the other's.
    const b1 = await until(
      () => eventRows(bId),
      (rows) => rows.b[0]?.status === 'delivered',
    );
    expect(b1).toEqual({ platform: [], b: [{ tenant: bTenant.name, status: 'delivered', attempts: 3 }] });
    const d1 = await until(
      () => eventRows(defaultId),
      (rows) => rows.platform[0]?.status === 'delivered',
    );
    expect(d1).toEqual({ platform: [{ tenant: onDefault.name, status: 'delivered', attempts: 1 }], b: [] });
    // The attempts' log rows are in the tenant's own schema on b.
    const logs = await as(bTenant, 'GET', '/api/resource/Webhook Request Log', {
      query: { fields: '["event_id","outcome","attempt"]', filters: JSON.stringify([['webhook', '=', `todo-${bTenant.name}`]]), order_by: 'attempt asc' },
    });
    expect(logs.status, logs.text).toBe(200);
    expect(logs.body.data).toEqual([
      { event_id: bId, outcome: 'Failed', attempt: 1 },
      { event_id: bId, outcome: 'Failed', attempt: 2 },
      { event_id: bId, outcome: 'Delivered', attempt: 3 },
    ]);

    // Written by another process (the CLI) with no wake-up reaching this one: found by the sweep of b.
    receiver.respond((r) =>
      r.url === todoHook(bTenant.name) && (JSON.parse(r.body) as { description?: string }).description === 'pending' ? { status: 503 } : { status: 200 },
    );
    const email = `cli-${bTenant.name}@example.com`;
    const user = await quire('user', 'create', '--tenant', bTenant.name, '--email', email, '--first-name', 'Ada');
    expect(user.code, JSON.stringify(user.json)).toBe(0);
    const [userHit] = await receiver.waitFor(1, 10_000, (r) => r.url === userHook(bTenant.name));
    expect(JSON.parse(userHit!.body)).toEqual({ user: email });
    expect(await eventRows(String(userHit!.headers['webhook-id']))).toMatchObject({ platform: [], b: [{ tenant: bTenant.name }] });

    // The backlog gauges cover b: an event retrying there is pending (the only one anywhere).
    await createTodo(bTenant, 'pending');
    await receiver.waitFor(1, 10_000, isTodo(bTenant.name, 'pending'));
    expect(await gauge('quire_webhook_outbox_pending')).toBe(1);
    expect(await gauge('quire_webhook_oldest_pending_age_seconds')).toBeGreaterThan(0);
    receiver.respond(() => ({ status: 200 }));
    await receiver.waitFor(2, 10_000, isTodo(bTenant.name, 'pending'));
  }, 240_000);

  it("one cluster's backlog does not hold up another's events", async () => {
    server = await startTestServer({ databaseUrl: platformDb.url, webhooks: { allowNets, concurrency: 4 } });
    const { onDefault, onB: bTenant } = tenants;
    // 200 events on b whose receiver takes 100 ms each: about 5 s of work for 4 slots.
    receiver.respond((r) => (r.url === todoHook(bTenant.name) ? { status: 200, delayMs: 100 } : { status: 200 }));
    const docs = Array.from({ length: 200 }, (_, i) => ({ doctype: 'ToDo', description: `backlog ${i}` }));
    const burst = await as(bTenant, 'POST', '/api/method/frappe.client.insert_many', { json: { docs } });
    expect(burst.status, burst.text).toBe(200);
    const backlog = (r: Received) => r.url === todoHook(bTenant.name) && r.body.includes('"backlog ');
    await receiver.waitFor(4, 10_000, backlog);
    const written = performance.now();
    await createTodo(onDefault, 'amid the backlog');
    await receiver.waitFor(1, 10_000, isTodo(onDefault.name, 'amid the backlog'));
    const behind = receiver.received.filter(backlog).length;
    console.log(`fairness: default's event delivered ${Math.round(performance.now() - written)} ms after its write, with ${behind} of b's 200 delivered`);
    expect(behind).toBeLessThan(150);
    await receiver.waitFor(200, 30_000, backlog);
    receiver.respond(() => ({ status: 200 }));
  }, 120_000);

  it('the Redis worker delivers events on both clusters, and finds one on b from a wake-up naming its tenant', async () => {
    const redis = { url: 'redis://127.0.0.1:6379', prefix: `quire-test-clusters-${randomBytes(4).toString('hex')}` };
    // No sweep during the test (only the first, at start): whatever is delivered was woken through Redis.
    server = await startTestServer({ databaseUrl: platformDb.url, redis, webhooks: { allowNets, sweepIntervalMs: 600_000 } });
    const { onDefault, onB: bTenant } = tenants;
    const started = performance.now();
    await createTodo(onDefault, 'queued on default');
    await createTodo(bTenant, 'queued on b');
    const [fromDefault] = await receiver.waitFor(1, 10_000, isTodo(onDefault.name, 'queued on default'));
    const [fromB] = await receiver.waitFor(1, 10_000, isTodo(bTenant.name, 'queued on b'));
    console.log(`redis worker: both delivered ${Math.round(performance.now() - started)} ms after the first write`);
    const bRows = await until(
      () => eventRows(String(fromB!.headers['webhook-id'])),
      (rows) => rows.b[0]?.status === 'delivered',
    );
    expect(bRows).toEqual({ platform: [], b: [{ tenant: bTenant.name, status: 'delivered', attempts: 1 }] });
    const defaultRows = await until(
      () => eventRows(String(fromDefault!.headers['webhook-id'])),
      (rows) => rows.platform[0]?.status === 'delivered',
    );
    expect(defaultRows.b).toEqual([]);

    // An event on b written by a process without Redis (nothing woken), then a wake-up naming its tenant.
    const email = `queued-${bTenant.name}@example.com`;
    expect((await quire('user', 'create', '--tenant', bTenant.name, '--email', email, '--first-name', 'Grace')).code).toBe(0);
    const { rows } = await onB.query<{ id: string; status: string }>(
      `SELECT "id", "status" FROM quire.webhook_events WHERE "tenant" = $1 AND "reference_name" = $2`,
      [bTenant.name, email],
    );
    expect(rows).toEqual([{ id: expect.any(String), status: 'pending' }]);
    const producer = new QueueProducer({ redisUrl: redis.url, prefix: redis.prefix });
    const woken = performance.now();
    producer.notify([rows[0]!.id], bTenant.name);
    await producer.close();
    const [hit] = await receiver.waitFor(1, 10_000, (r) => r.url === userHook(bTenant.name) && r.body.includes(email));
    console.log(`redis worker: the event on b delivered ${Math.round(performance.now() - woken)} ms after a wake-up naming its tenant`);
    expect(hit!.headers['webhook-id']).toBe(rows[0]!.id);
  }, 120_000);
});
