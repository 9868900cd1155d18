import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { dispatcherLab, insertTodos } from './dispatcher-lab';
import { startReceiver, type Received, type Receiver } from '../support/receiver';
import { quireJson } from '../support/process';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { until } from '../support/until';

/**
 * Webhook delivery is fair between tenants: one tenant's backlog, even to a receiver that takes a
 * second per request, holds at most its share of a process's delivery slots (`tenantMaxInFlight`,
 * half of them by default), and another tenant's event is claimed ahead of the backlog; a suspended
 * tenant's events wait. The dispatcher on its own (as in dispatcher.test.ts), on a database of its own.
 */

const SLOW_MS = 1000;

let database: FreshDatabase;
let server: TestServer;
let receiver: Receiver;
const { dispatcher, webhook, closeAll } = dispatcherLab(
  () => server,
  () => receiver,
  30_000,
);

beforeAll(async () => {
  database = await freshDatabase();
  receiver = await startReceiver();
  server = await startTestServer({ databaseUrl: database.url });
}, 60_000);

afterAll(async () => {
  await closeAll();
  await server.close();
  await receiver.close();
  await database.drop();
});

/** The most requests of `hits` (each answered after `ms`) that the receiver held at once. */
function mostAtOnce(hits: readonly Received[], ms: number): number {
  let most = 0;
  for (const h of hits) most = Math.max(most, hits.filter((o) => o.at <= h.at && o.at > h.at - ms).length);
  return most;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('webhook delivery between tenants', () => {
  it('another tenant’s event is delivered at once while one tenant’s backlog waits on a slow receiver', async () => {
    const flood = await server.tenant('whf');
    const quiet = await server.tenant('whq');
    const slow = await webhook(flood, `slow-${flood.name}`);
    const fast = await webhook(quiet, `fast-${quiet.name}`);
    receiver.respond((r) => (r.url === slow ? { status: 200, delayMs: SLOW_MS } : { status: 200 }));
    await insertTodos(flood, 40);
    const d = dispatcher({ concurrency: 4 });
    d.start();
    await receiver.waitFor(1, 5000, (r) => r.url === slow);
    await pause(100); // the backlog has every slot it may take

    const sent = Date.now();
    await insertTodos(quiet, 1);
    d.wake(quiet.name);
    const [hit] = await receiver.waitFor(1, 15_000, (r) => r.url === fast);
    // Before: behind the backlog (40 events, 4 at a time, a second each), about 9 s.
    expect(hit!.at - sent).toBeLessThan(SLOW_MS / 2);
    // The backlog went on meanwhile, at most two (half the slots) at a time.
    const backlog = await receiver.waitFor(6, 10_000, (r) => r.url === slow);
    expect(mostAtOnce(backlog, SLOW_MS)).toBe(2);
    await d.close(true);
  }, 60_000);

  it('a tenant alone takes what its share allows, and no more', async () => {
    const flood = await server.tenant('whs');
    const slow = await webhook(flood, `share-${flood.name}`);
    receiver.respond((r) => (r.url === slow ? { status: 200, delayMs: SLOW_MS } : { status: 200 }));
    await insertTodos(flood, 12);
    const d = dispatcher({ concurrency: 4, tenantMaxInFlight: 3 });
    d.start();
    const hits = await receiver.waitFor(12, 20_000, (r) => r.url === slow);
    expect(mostAtOnce(hits, SLOW_MS)).toBe(3);
    await d.close();
  }, 60_000);

  it('a suspended tenant’s events wait while another tenant’s are delivered; resumed, they are delivered', async () => {
    const held = await server.tenant('whp');
    const other = await server.tenant('whp');
    const heldPath = await webhook(held, `held-${held.name}`);
    const otherPath = await webhook(other, `other-${other.name}`);
    receiver.respond(() => ({ status: 200 }));
    await insertTodos(held, 3);
    const setStatus = async (t: TestTenant, args: string[], status: string) => {
      expect((await quireJson(['tenant', ...args], { DATABASE_URL: database.url })).json).toEqual({ name: t.name, status });
      await until(
        () => Promise.resolve(server.platform.tenants.get(t.name)?.status),
        (s) => s === status,
        3000,
      );
    };
    await setStatus(held, ['suspend', held.name], 'suspended');
    const d = dispatcher();
    d.start();
    await insertTodos(other, 2);
    d.wake(other.name);
    await receiver.waitFor(2, 5000, (r) => r.url === otherPath);
    await pause(1000); // ten sweeps
    expect(receiver.received.filter((r) => r.url === heldPath)).toHaveLength(0);

    await setStatus(held, ['resume', held.name], 'active');
    await receiver.waitFor(3, 5000, (r) => r.url === heldPath);
    await d.close();
  }, 60_000);
});
