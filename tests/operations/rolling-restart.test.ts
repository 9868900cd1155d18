import http from 'node:http';
import { migrateRelease } from '@quire/tenancy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHaProxy, type HaProxy } from '../support/haproxy';
import { freePort } from '../support/ports';
import { rawRequest, spawnQuire, type Spawned } from '../support/process';
import { databaseUrl, startTestServer, type TestServer, type TestTenant } from '../support/server';

/**
 * A rolling restart behind a real load balancer: three API processes behind HAProxy (health check
 * on /readyz), steady reads and creates over keep-alive connections, each process in turn sent
 * SIGTERM and replaced. Nothing fails, and every create that succeeded is stored exactly once.
 */

const SHUTDOWN_DELAY_MS = 1200; // several of HAProxy's 200 ms checks (two failed ones take a draining server out)
const CLIENTS = 6;

let server: TestServer;
let t: TestTenant;
let lb: HaProxy | undefined;
const slots: Array<{ port: number; opsPort: number; process: Spawned | undefined }> = [];

beforeAll(async () => {
  server = await startTestServer();
  t = await server.tenant('roll');
  await migrateRelease(server.platform);
});
afterAll(async () => {
  await lb?.stop();
  await Promise.all(slots.map(async (s) => s.process?.stop('SIGKILL')));
  await server.close();
});

async function startApi(slot: { port: number; opsPort: number }): Promise<Spawned> {
  const p = spawnQuire(['serve', 'api'], {
    DATABASE_URL: databaseUrl(),
    PORT: String(slot.port),
    METRICS_PORT: String(slot.opsPort),
    SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
    SHUTDOWN_TIMEOUT_MS: '10000',
  });
  await p.waitFor(/listening on port/, 60_000);
  for (;;) {
    const ready = await rawRequest({ port: slot.opsPort, path: '/readyz', host: 'lb' }).catch(() => undefined);
    if (ready?.status === 200) return p;
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Tally {
  reads: number;
  creates: number;
  failures: string[];
}

/** One client: its own keep-alive connection through the balancer, alternating a list read and a create. */
async function client(port: number, id: number, until: () => boolean, tally: Tally): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const headers = { Host: `${t.name}.localhost`, Authorization: t.auth, 'Content-Type': 'application/json' };
  for (let i = 0; !until(); i++) {
    const create = i % 2 === 1;
    const body = create ? JSON.stringify({ description: `roll ${id}-${i}` }) : undefined;
    const path = create ? '/api/resource/ToDo' : '/api/resource/ToDo?limit=5';
    const status = await new Promise<number>((resolve) => {
      const req = http.request({ host: '127.0.0.1', port, path, method: create ? 'POST' : 'GET', headers, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', (e) => {
        tally.failures.push(`${create ? 'POST' : 'GET'} ${e.message}`);
        resolve(-1);
      });
      req.end(body);
    });
    if (status === 200) {
      if (create) tally.creates++;
      else tally.reads++;
    } else if (status !== -1) tally.failures.push(`${create ? 'POST' : 'GET'} ${status}`);
  }
  agent.destroy();
}

describe('rolling restart behind HAProxy', () => {
  it('replaces three API processes one by one under load with no failed request and no lost or doubled create', async () => {
    for (let i = 0; i < 3; i++) slots.push({ port: await freePort(), opsPort: await freePort(), process: undefined });
    await Promise.all(
      slots.map(async (slot) => {
        slot.process = await startApi(slot);
      }),
    );
    lb = await startHaProxy(slots);
    const tally: Tally = { reads: 0, creates: 0, failures: [] };
    let done = false;
    const clients = Array.from({ length: CLIENTS }, (_, id) => client(lb?.port ?? 0, id, () => done, tally));

    const exits: Array<{ code: number | null; ms: number }> = [];
    await new Promise((r) => setTimeout(r, 1000));
    for (const slot of slots) {
      const old = slot.process;
      if (!old) throw new Error('slot without a process');
      const signalled = Date.now();
      const code = await old.stop('SIGTERM');
      exits.push({ code, ms: Date.now() - signalled });
      slot.process = await startApi(slot);
      await new Promise((r) => setTimeout(r, 500)); // HAProxy's `rise 2` at 200 ms
    }
    await new Promise((r) => setTimeout(r, 1000));
    done = true;
    await Promise.all(clients);

    expect(tally.failures).toEqual([]);
    expect(exits.map((e) => e.code)).toEqual([0, 0, 0]);
    for (const e of exits) expect(e.ms).toBeGreaterThanOrEqual(SHUTDOWN_DELAY_MS);
    expect(tally.reads).toBeGreaterThan(50);
    expect(tally.creates).toBeGreaterThan(50);
    const stored = await t.call('GET', '/api/method/frappe.client.get_count', {
      query: { doctype: 'ToDo', filters: JSON.stringify([['description', 'like', 'roll %']]) },
    });
    expect(stored.body).toEqual({ message: tally.creates });
    console.info(
      `rolling restart: ${tally.reads + tally.creates} requests (${tally.creates} creates), 0 failed; SIGTERM→exit ms: ${exits.map((e) => e.ms).join(', ')}`,
    );
  }, 120_000);
});
