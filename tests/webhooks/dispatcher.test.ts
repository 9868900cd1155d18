import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { dispatcherLab, insertTodos } from './dispatcher-lab';
import { startReceiver, type Receiver } from '../support/receiver';
import { startTestServer, type TestServer } from '../support/server';
import { until } from '../support/until';

/**
 * The batched dispatcher on its own: two of them on one outbox (as two processes would be) and a
 * forced stop. The server delivers nothing itself (no webhooks service), and has a database of its own.
 */

let database: FreshDatabase;
let server: TestServer;
let receiver: Receiver;
const { dispatcher, webhook, closeAll } = dispatcherLab(
  () => server,
  () => receiver,
  2000,
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

async function events(webhookName: string) {
  const { rows } = await server.db.query<{ status: string; attempts: number; leased: boolean }>(
    `SELECT "status", "attempts", "lease_until" IS NOT NULL AS leased FROM quire.webhook_events WHERE "webhook" = $1`,
    [webhookName],
  );
  return rows;
}

describe('the dispatcher', () => {
  it('two dispatchers claiming one outbox at once deliver each event once', async () => {
    const t = await server.tenant('disp');
    const path = await webhook(t, `two-${t.name}`);
    receiver.respond((r) => (r.url === path ? { status: 200, delayMs: 20 } : { status: 200 }));
    await insertTodos(t, 200);
    const [a, b] = [dispatcher({ claimGapMs: 0 }), dispatcher({ claimGapMs: 0 })];
    a.start();
    b.start();
    await receiver.waitFor(200, 30_000, (r) => r.url === path);
    const rows = await until(
      () => events(path.slice(1)),
      (r) => r.every((e) => e.status === 'delivered'),
    );
    expect(rows.filter((e) => e.status === 'delivered' && e.attempts === 1)).toHaveLength(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received.filter((r) => r.url === path)).toHaveLength(200);
    await Promise.all([a.close(), b.close()]);
    receiver.respond(() => ({ status: 200, body: 'ok' }));
  });

  it('a forced stop gives back the events claimed but not attempted; the one in flight keeps its lease', async () => {
    const t = await server.tenant('disp');
    const path = await webhook(t, `stop-${t.name}`);
    receiver.respond((r) => (r.url === path ? { status: 200, delayMs: 3000 } : { status: 200 }));
    await insertTodos(t, 5);
    // One request at a time, one more event claimed ahead.
    const first = dispatcher({ concurrency: 1 });
    first.start();
    await receiver.waitFor(1, 10_000, (r) => r.url === path);
    await until(
      () => Promise.resolve(first.inFlight),
      (n) => n === 2,
    );
    await first.close(true);
    const rows = await events(path.slice(1));
    expect(rows.filter((e) => e.leased)).toHaveLength(1); // the request in flight
    expect(rows.filter((e) => e.status === 'pending' && !e.leased)).toHaveLength(4);
    // Another dispatcher takes the four at once (the fifth is still leased by the request in flight).
    receiver.respond(() => ({ status: 200, body: 'ok' }));
    const second = dispatcher();
    const restarted = Date.now();
    second.start();
    await receiver.waitFor(5, 10_000, (r) => r.url === path);
    expect(Date.now() - restarted).toBeLessThan(2500);
    await until(
      async () => (await events(path.slice(1))).filter((e) => e.status === 'delivered').length,
      (n) => n === 5,
      15_000,
    );
    expect(new Set(receiver.received.filter((r) => r.url === path).map((r) => r.headers['webhook-id'])).size).toBe(5);
    await second.close();
  }, 40_000);

  it('deletes ended events past their keeping at its sweep; pending ones and the request log stay', async () => {
    const t = await server.tenant('disp');
    const ok = await webhook(t, `kept-${t.name}`);
    const failing = await webhook(t, `failing-${t.name}`);
    receiver.respond((r) => (r.url === failing ? { status: 500 } : { status: 200 }));
    await insertTodos(t, 3);
    const first = dispatcher();
    first.start();
    await until(
      async () => (await events(ok.slice(1))).filter((e) => e.status === 'delivered').length,
      (n) => n === 3,
      15_000,
    );
    await receiver.waitFor(3, 10_000, (r) => r.url === failing);
    await first.close();
    expect((await events(failing.slice(1))).map((e) => e.status)).toEqual(['pending', 'pending', 'pending']);

    // Kept a week by default: a new dispatcher's first sweep deletes nothing of them.
    const second = dispatcher();
    second.start();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await second.close();
    expect(await events(ok.slice(1))).toHaveLength(3);

    const third = dispatcher({ keepEndedEventsMs: 0 });
    third.start();
    await until(
      () => events(ok.slice(1)),
      (rows) => rows.length === 0,
      5000,
    );
    await third.close(true);
    expect(await events(failing.slice(1))).toHaveLength(3); // still retrying
    const logs = await t.call('GET', '/api/resource/Webhook Request Log', {
      query: { filters: JSON.stringify([['webhook', '=', ok.slice(1)]]), limit_page_length: 0 },
    });
    expect(logs.body.data).toHaveLength(3);
    receiver.respond(() => ({ status: 200, body: 'ok' }));
  }, 40_000);
});
