import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import pg from 'pg';
import { recreateDatabase, startProcess } from './support';

/**
 * `npm run bench -- webhooks`: (1) deliveries per second of ONE `quire serve webhooks` process
 * (BullMQ on Redis) to a local receiver, draining a backlog of events; (2) the lag from commit to
 * first delivery attempt while events arrive at a steady rate. Postgres and Redis on this machine.
 */
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/15';
const backlog = Number(process.env.BENCH_EVENTS ?? 3000);
const rate = Number(process.env.BENCH_RATE ?? 100); // events per second for the lag run
const lagSeconds = Number(process.env.BENCH_LAG_SECONDS ?? 15);
const database = 'quire_bench_webhooks';

async function sql(url: string, text: string, values: unknown[] = []) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query(text, values);
  } finally {
    await c.end();
  }
}

const run = (args: string[], env: NodeJS.ProcessEnv, pattern = /listening on port (\d+)|health on port (\d+)/) =>
  startProcess(['bin/quire.mjs', ...args], env, pattern);

async function main(): Promise<void> {
  const databaseUrl = await recreateDatabase(database);
  const redis = new Redis(redisUrl);
  await redis.flushdb();
  let received = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200);
      res.end();
    });
  });
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
  await fetch(`${base}/api/resource/Webhook`, {
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

  // (1) A backlog of events, then one webhooks process drains it.
  for (let i = 0; i < backlog; i += 200) {
    const docs = Array.from({ length: Math.min(200, backlog - i) }, (_, j) => ({ doctype: 'ToDo', description: `backlog ${i + j}` }));
    const res = await fetch(`${base}/api/method/frappe.client.insert_many`, { method: 'POST', headers, body: JSON.stringify({ docs }) });
    if (res.status !== 200) throw new Error(`insert_many: ${res.status} ${await res.text()}`);
  }
  const startedAt = Date.now();
  const worker = await run(['serve', 'webhooks'], { ...env, WEBHOOK_CONCURRENCY: process.env.BENCH_CONCURRENCY ?? '32' });
  while (received < backlog) await new Promise((r) => setTimeout(r, 20));
  const drainSeconds = (Date.now() - startedAt) / 1000;

  // (2) Steady arrivals; lag = first attempt - event written (inside the committing transaction).
  // Let the worker finish the backlog's bookkeeping first (log rows written after each response).
  await new Promise((r) => setTimeout(r, 3000));
  const before = received;
  const lagStart = Date.now();
  let sent = 0;
  while (Date.now() - lagStart < lagSeconds * 1000) {
    const due = Math.floor(((Date.now() - lagStart) / 1000) * rate);
    const batch: Promise<Response>[] = [];
    while (sent < due) {
      batch.push(fetch(`${base}/api/resource/ToDo`, { method: 'POST', headers, body: JSON.stringify({ description: `steady ${sent}` }) }));
      sent++;
    }
    await Promise.all(batch);
    await new Promise((r) => setTimeout(r, 5));
  }
  while (received < before + sent) await new Promise((r) => setTimeout(r, 20));
  const lag = await sql(
    databaseUrl,
    `SELECT percentile_cont(ARRAY[0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY extract(epoch FROM "first_attempt_at" - "created_at")) AS p
     FROM quire.webhook_events WHERE "created_at" >= (to_timestamp($1 / 1000.0) at time zone 'utc')`,
    [lagStart],
  );
  const [p50, p90, p99] = (lag.rows[0] as { p: number[] }).p.map((s) => Math.round(s * 1000 * 10) / 10);
  console.log(
    JSON.stringify({
      backlog,
      drain_seconds: Number(drainSeconds.toFixed(2)),
      deliveries_per_second_one_process: Math.round(backlog / drainSeconds),
      steady_rate_per_second: rate,
      steady_events: sent,
      lag_ms: { p50, p90, p99 },
    }),
  );
  for (const p of [worker.child, api.child]) p.kill('SIGTERM');
  receiver.close();
  redis.disconnect();
}

await main();
