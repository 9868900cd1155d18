import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/process';
import { startTestServer, type TestServer } from '../support/server';

/**
 * Fair by default (issue 27): each tenant's requests take turns for its share of the process. A
 * tenant over its share waits; one whose queue is full or too old is answered 429 at once; another
 * tenant is served all along. Through HTTP, with a method that takes its time (lab_app.api.pause).
 */

const LAB_APP = path.join(ROOT, 'tests/fixtures/apps/lab_app');
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ apps: [LAB_APP], admission: { maxConnections: 1, queueLength: 2, queueWaitMs: 1500 } });
});
afterAll(() => server.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const timed = async <T>(p: Promise<T>): Promise<{ value: T; ms: number }> => {
  const started = performance.now();
  const value = await p;
  return { value, ms: performance.now() - started };
};

describe('fair admission per tenant', () => {
  it('a tenant over its share waits its turn; with its queue full it is answered 429 at once; another tenant is served meanwhile', async () => {
    const a = await server.tenant('fa');
    const b = await server.tenant('fb');
    const pause = (ms: number) => a.call('GET', '/api/method/lab_app.api.pause', { query: { ms } });
    const finished: string[] = [];
    const slow = pause(700).then((r) => (finished.push('slow'), r));
    await sleep(100);
    const queued = [pause(0), pause(0)].map((p, i) => p.then((r) => (finished.push(`queued${i}`), r)));
    await sleep(100);

    const refused = await a.call('GET', '/api/method/ping');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ exc_type: 'TooManyRequestsError' });
    expect(refused.headers.get('retry-after')).toBe('1');
    // At once: while the slow request still holds the tenant's share (an order, not a time: CI is loaded).
    expect(finished).toEqual([]);

    const other = await b.call('GET', '/api/method/ping');
    expect(other.body).toEqual({ message: 'pong' });
    expect(finished).toEqual([]); // served while tenant A's share is taken

    expect((await slow).status).toBe(200);
    expect((await Promise.all(queued)).map((r) => r.status)).toEqual([200, 200]);
    expect(finished).toEqual(['slow', 'queued0', 'queued1']);
  });

  it('a request that waits longer than TENANT_QUEUE_WAIT_MS is answered 429; the next one waits its turn again', async () => {
    const a = await server.tenant('fw');
    const slow = a.call('GET', '/api/method/lab_app.api.pause', { query: { ms: 2500 } });
    await sleep(100);
    const waited = await timed(a.call('GET', '/api/method/ping'));
    expect(waited.value.status).toBe(429);
    expect(waited.value.headers.get('retry-after')).toBe('1');
    expect(waited.ms).toBeGreaterThanOrEqual(1400);
    expect(waited.ms).toBeLessThan(2200);
    // The slow request still holds the tenant's turn: a new one waits, and is served once it is free.
    const next = await timed(a.call('GET', '/api/method/ping'));
    expect(next.value.status).toBe(200);
    expect((await slow).status).toBe(200);
  });

  it('counts the refusals by reason in quire_tenant_throttled_total', async () => {
    const text = await (await fetch(`${server.opsUrl}/metrics`)).text();
    expect(Number(/^quire_tenant_throttled_total\{reason="queue_full"\} (\d+)/m.exec(text)?.[1])).toBeGreaterThanOrEqual(1);
    expect(Number(/^quire_tenant_throttled_total\{reason="queue_timeout"\} (\d+)/m.exec(text)?.[1])).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^quire_requests_waiting \d+/m);
  });
});
