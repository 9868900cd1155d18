import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { QueueProducer } from '@quire/webhooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import { cpuSeconds } from './load';
import { percentile, recreateDatabase, startProcess, type Started } from './support';

/**
 * `npm run bench -- webhooks`: issue 15's webhook figures for ONE `quire serve webhooks` process
 * (Redis wake-ups) delivering to a local receiver, Postgres and Redis on this machine:
 *
 * 1. backlog: BENCH_EVENTS (20,000) events committed at once while the process runs idle; deliveries
 *    per second from that commit until the receiver has them all (and until the outbox has recorded
 *    them all: log rows and states written). Target: >= 1,000/s.
 * 2. steady: events committed at BENCH_RATE (1,000/s) for BENCH_LAG_SECONDS (20 s); the lag from the
 *    event's row being written to its first attempt (the outbox's `created_at` -> `first_attempt_at`),
 *    p50/p90/p99/max, and the delivered rate. Target: p99 <= 1 s while sustaining 1,000/s.
 *
 * Events are real: a Webhook with a secret (both signatures) made through the API and one ToDo's
 * event as the template. BENCH_SOURCE=outbox (default) commits the events the way the API's write
 * path does — one transaction per event, then the same wake-up the API sends after commit — without
 * the API's own CPU on this machine's cores; BENCH_SOURCE=api POSTs ToDos to a `quire serve api`
 * instead (its CPU then competes with the webhooks process). BENCH_CONCURRENCY sets
 * WEBHOOK_CONCURRENCY (unset: the process default); BENCH_CPU_PROF=<dir> writes the webhooks
 * process's V8 CPU profile (node --cpu-prof) there.
 */
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
const backlog = Number(process.env.BENCH_EVENTS ?? 20_000);
const rate = Number(process.env.BENCH_RATE ?? 1000);
const lagSeconds = Number(process.env.BENCH_LAG_SECONDS ?? 20);
const source = process.env.BENCH_SOURCE ?? 'outbox';
const concurrency = process.env.BENCH_CONCURRENCY;
const profileDir = process.env.BENCH_CPU_PROF;
const database = 'quire_bench_webhooks';

const TARGET_RATE = 1000;
const TARGET_P99_MS = 1000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const round1 = (n: number) => Math.round(n * 10) / 10;

/** CPU seconds of every Postgres server process on this machine (the benchmark's server is local; others' queries count too). */
function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') total += cpuSeconds(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** CPU milliseconds per event over a phase: the webhooks process, Postgres, and this process (receiver and event source). */
function cpuMeter(pid: number): (events: number) => { worker: number; postgres: number; bench: number } {
  const start = { worker: cpuSeconds(pid), postgres: postgresCpuSeconds(), bench: process.cpuUsage() };
  return (events) => {
    const bench = process.cpuUsage(start.bench);
    const perEvent = (seconds: number) => Number(((seconds * 1000) / events).toFixed(3));
    return {
      worker: perEvent(cpuSeconds(pid) - start.worker),
      postgres: perEvent(postgresCpuSeconds() - start.postgres),
      bench: perEvent((bench.user + bench.system) / 1e6),
    };
  };
}

const children = new Set<Started>();

async function run(
  args: string[],
  env: NodeJS.ProcessEnv,
  pattern = /listening on port (\d+)|health on port (\d+)/,
  nodeFlags: string[] = [],
): Promise<Started> {
  const started = await startProcess([...nodeFlags, 'bin/quire.mjs', ...args], env, pattern);
  children.add(started);
  return started;
}

async function stop(p: Started): Promise<void> {
  if (p.child.exitCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGTERM');
  await exited;
}

/** What the outbox says of events written since `since` (ms): lag to first attempt and how many are finished. */
async function outboxFigures(db: pg.Pool, since: number, marker: string) {
  const { rows } = await db.query<{ lags: number[] | null; pending: number; total: number }>(
    `SELECT array_agg(extract(epoch FROM "first_attempt_at" - "created_at") * 1000 ORDER BY 1) FILTER (WHERE "first_attempt_at" IS NOT NULL) AS lags,
       count(*) FILTER (WHERE "status" = 'pending')::int AS pending, count(*)::int AS total
     FROM quire.webhook_events WHERE "created_at" >= (to_timestamp($1 / 1000.0) at time zone 'utc') AND "reference_name" LIKE $2`,
    [since, `${marker}%`],
  );
  const row = rows[0] ?? { lags: [], pending: 0, total: 0 };
  return { lags: (row.lags ?? []).map(Number).sort((a, b) => a - b), pending: row.pending, total: row.total };
}

async function main(): Promise<void> {
  const loadAtStart = os.loadavg()[0] ?? 0;
  const databaseUrl = await recreateDatabase(database);
  const redis = new Redis(redisUrl);
  await redis.flushdb();
  redis.disconnect();

  // The receiver: counts requests and notes when each event id first arrived.
  const arrivals = new Map<string, number>();
  let received = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      const id = req.headers['webhook-id'];
      if (typeof id === 'string' && !arrivals.has(id)) arrivals.set(id, performance.now());
      res.writeHead(200, { 'Content-Length': '2' });
      res.end('ok');
    });
  });
  receiver.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    PORT: '0',
    WEBHOOKS_PORT: '0',
    WEBHOOK_ALLOW_NETS: '127.0.0.1/32',
  };

  const created = await run(['tenant', 'create', 'bench', '--json'], env, /"api_secret":"([0-9a-f]+)"/);
  const creds = JSON.parse(created.out()) as { api_key: string; api_secret: string };
  const api = await run(['serve', 'api'], env);
  const base = `http://127.0.0.1:${api.port}`;
  const headers = { Authorization: `token ${creds.api_key}:${creds.api_secret}`, 'X-Frappe-Site-Name': 'bench', 'Content-Type': 'application/json' };
  const hook = await fetch(`${base}/api/resource/Webhook`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      name: 'bench',
      webhook_doctype: 'ToDo',
      webhook_docevent: 'after_insert',
      request_url: receiverUrl,
      request_structure: 'JSON',
      webhook_json: '{"name": {{ doc.name | tojson }}}',
      enable_security: 1,
      webhook_secret: 'bench-secret',
    }),
  });
  if (hook.status !== 200) throw new Error(`Webhook: ${hook.status} ${await hook.text()}`);
  // One real event (through the API's write path) is the template of every other.
  const todo = await fetch(`${base}/api/resource/ToDo`, { method: 'POST', headers, body: JSON.stringify({ description: 'template' }) });
  if (todo.status !== 200) throw new Error(`ToDo: ${todo.status} ${await todo.text()}`);

  const db = new pg.Pool({ connectionString: databaseUrl, max: 16 });
  // The API's wake-up goes to the deployment's prefix (the id the API and the CLI made and kept).
  const deployment = (await db.query<{ value: string }>(`SELECT "value" FROM quire.settings WHERE "key" = 'deployment_id'`)).rows[0]?.value;
  if (deployment === undefined) throw new Error('quire.settings has no deployment_id');
  const producer = new QueueProducer({ redisUrl, prefix: `quire:${deployment}` });
  const template = (
    await db.query<{
      tenant: string;
      webhook: string;
      event: string;
      reference_doctype: string;
      user: string;
      url: string;
      method: string;
      headers: unknown;
      timeout_ms: number;
    }>(`SELECT "tenant", "webhook", "event", "reference_doctype", "user", "url", "method", "headers", "timeout_ms" FROM quire.webhook_events LIMIT 1`)
  ).rows[0];
  if (!template) throw new Error('the template ToDo made no webhook event');
  // Delivered before the measurements start: only the benchmark's own events are counted.
  const startedWorker = Date.now();
  const worker = await run(
    ['serve', 'webhooks'],
    { ...env, ...(concurrency ? { WEBHOOK_CONCURRENCY: concurrency } : {}) },
    undefined,
    profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  );
  while (received < 1) {
    if (Date.now() - startedWorker > 30_000) throw new Error('the template event was never delivered');
    await sleep(20);
  }
  while ((await db.query(`SELECT 1 FROM quire.webhook_events WHERE "status" = 'pending'`)).rowCount) await sleep(50);
  if (source === 'outbox') await stop(api);
  const pid = worker.child.pid ?? 0;

  // (1) Backlog: N events committed in one transaction while the process is idle, then one wake-up.
  const { rows: ids } = await db.query<{ id: string }>(
    `INSERT INTO quire.webhook_events ("id", "tenant", "webhook", "event", "reference_doctype", "reference_name", "user", "url", "method", "headers", "body", "timeout_ms")
     SELECT gen_random_uuid(), $1, $2, $3, $4, 'backlog-' || g, $5, $6, $7, $8::jsonb, '{"name": "backlog-' || g || '"}', $9 FROM generate_series(1, $10) AS g
     RETURNING "id"`,
    [
      template.tenant,
      template.webhook,
      template.event,
      template.reference_doctype,
      template.user,
      template.url,
      template.method,
      JSON.stringify(template.headers),
      template.timeout_ms,
      backlog,
    ],
  );
  const backlogCommitted = performance.now();
  const backlogStartedWall = Date.now();
  const backlogMeter = cpuMeter(pid);
  producer.notify(ids.map((r) => r.id));
  const receivedBefore = received;
  while (received - receivedBefore < backlog) await sleep(5);
  const drainSeconds = (performance.now() - backlogCommitted) / 1000;
  for (;;) {
    const { pending } = await outboxFigures(db, backlogStartedWall, 'backlog-');
    if (pending === 0) break;
    await sleep(10);
  }
  const recordedSeconds = (performance.now() - backlogCommitted) / 1000;
  const backlogCpu = backlogMeter(backlog);

  // (2) Steady arrivals at `rate`: one transaction per event, woken after commit as the API does.
  await sleep(1000);
  const committedAt = new Map<string, number>();
  const steadyStartWall = Date.now();
  const steadyStart = performance.now();
  const steadyMeter = cpuMeter(pid);
  let sent = 0;
  let outstanding = 0;
  let maxBehind = 0;
  const inserts: Promise<unknown>[] = [];
  const commitOne = async (i: number): Promise<void> => {
    outstanding++;
    try {
      if (source === 'api') {
        const res = await fetch(`${base}/api/resource/ToDo`, { method: 'POST', headers, body: JSON.stringify({ description: `steady-${i}` }) });
        if (res.status !== 200) throw new Error(`ToDo: ${res.status}`);
        await res.arrayBuffer();
      } else {
        const { rows } = await db.query<{ id: string }>(
          `INSERT INTO quire.webhook_events ("id", "tenant", "webhook", "event", "reference_doctype", "reference_name", "user", "url", "method", "headers", "body", "timeout_ms")
           VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11) RETURNING "id"`,
          [
            template.tenant,
            template.webhook,
            template.event,
            template.reference_doctype,
            `steady-${i}`,
            template.user,
            template.url,
            template.method,
            JSON.stringify(template.headers),
            `{"name": "steady-${i}"}`,
            template.timeout_ms,
          ],
        );
        const id = rows[0]?.id ?? '';
        committedAt.set(id, performance.now());
        producer.notify([id]);
      }
    } finally {
      outstanding--;
    }
  };
  while (performance.now() - steadyStart < lagSeconds * 1000) {
    const due = Math.floor(((performance.now() - steadyStart) / 1000) * rate);
    maxBehind = Math.max(maxBehind, due - sent);
    while (sent < due && outstanding < 64) inserts.push(commitOne(sent++));
    await sleep(1);
  }
  await Promise.all(inserts);
  const steadyCommitSeconds = (performance.now() - steadyStart) / 1000;
  const receivedAllBy = performance.now() + 180_000;
  for (;;) {
    const { pending, total } = await outboxFigures(db, steadyStartWall, source === 'api' ? '' : 'steady-');
    if (pending === 0 && total >= sent) break;
    if (performance.now() > receivedAllBy) throw new Error(`${pending} steady events still pending 180 s after the last commit`);
    await sleep(20);
  }
  const steadySeconds = (performance.now() - steadyStart) / 1000;
  const steadyCpu = steadyMeter(sent);
  const steady = await outboxFigures(db, steadyStartWall, source === 'api' ? '' : 'steady-');
  const receipt = [...committedAt].flatMap(([id, at]) => {
    const got = arrivals.get(id);
    return got === undefined ? [] : [got - at];
  });
  receipt.sort((a, b) => a - b);

  await stop(worker);
  await stop(api);
  await producer.close();
  await db.end();
  receiver.close();

  const deliveriesPerSecond = Math.round(backlog / drainSeconds);
  const lag = {
    p50: round1(percentile(steady.lags, 0.5)),
    p90: round1(percentile(steady.lags, 0.9)),
    p99: round1(percentile(steady.lags, 0.99)),
    max: round1(steady.lags.at(-1) ?? NaN),
  };
  const load = [loadAtStart, os.loadavg()[0] ?? 0].map((l) => Number(l.toFixed(1)));
  const result = {
    load_average_1m: load,
    source,
    concurrency: concurrency ?? 'default',
    backlog: {
      events: backlog,
      drain_seconds: Number(drainSeconds.toFixed(2)),
      deliveries_per_second: deliveriesPerSecond,
      all_recorded_seconds: Number(recordedSeconds.toFixed(2)),
      cpu_ms_per_delivery: backlogCpu,
    },
    steady: {
      target_rate: rate,
      events: sent,
      achieved_commit_rate: Math.round(sent / steadyCommitSeconds),
      generator_max_behind: maxBehind,
      seconds_until_all_recorded: Number(steadySeconds.toFixed(2)),
      commit_to_first_attempt_ms: lag,
      ...(receipt.length > 0 ? { commit_to_receipt_ms: { p50: round1(percentile(receipt, 0.5)), p99: round1(percentile(receipt, 0.99)) } } : {}),
      cpu_ms_per_delivery: steadyCpu,
    },
  };
  console.log(JSON.stringify(result));
  const ok = (b: boolean) => (b ? 'ok  ' : 'MISS');
  console.log(
    [
      '',
      `webhooks, one process (${source} source, concurrency ${concurrency ?? 'default'}):`,
      `  ${ok(deliveriesPerSecond >= TARGET_RATE)} backlog of ${backlog}: ${deliveriesPerSecond} deliveries/s (target >= ${TARGET_RATE}); all recorded after ${recordedSeconds.toFixed(2)} s`,
      `  ${ok(lag.p99 <= TARGET_P99_MS && sent / steadyCommitSeconds >= rate * 0.95)} steady ${Math.round(sent / steadyCommitSeconds)}/s for ${lagSeconds} s: commit -> first attempt p50 ${lag.p50} ms, p99 ${lag.p99} ms, max ${lag.max} ms (target p99 <= ${TARGET_P99_MS} ms)`,
      ...(Math.max(...load) > os.cpus().length
        ? [`  (the machine was busy: load average ${load.join(' -> ')} on ${os.cpus().length} cores; figures are lower than on an idle one)`]
        : []),
      `  CPU ms per delivery, backlog / steady: webhooks process ${backlogCpu.worker} / ${steadyCpu.worker}, Postgres ${backlogCpu.postgres} / ${steadyCpu.postgres}, receiver and event source ${backlogCpu.bench} / ${steadyCpu.bench}`,
    ].join('\n'),
  );
}

try {
  await main();
} finally {
  for (const p of children) if (p.child.exitCode === null) p.child.kill('SIGKILL');
}
