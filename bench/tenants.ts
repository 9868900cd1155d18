import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRuntime, loadRuntimeConfig } from '@quire/runtime';
import { createTenant, installTenant } from '@quire/tenancy';
import pg from 'pg';
import { measure, type LoadResult } from './load';
import { recreateDatabase, ROOT, startProcess, type Started } from './support';

/**
 * `npm run bench -- tenants`: thousands of tenants in one Postgres, each figure beside its floor.
 *
 *   provision  createTenant (what `quire tenant create` does, less the command's start-up) for
 *              the first tenants and again once BENCH_TENANTS (1,000) exist: taking a spare schema
 *              (made in the background after the tenant before, not timed), beside copying the
 *              template (no spare ready: TENANT_SPARES=0) and installing the long way (every
 *              standard DocType through the document lifecycle).
 *   memory     one `quire serve api` process's resident set: started, after reads on one tenant,
 *              after reads spread round-robin over every tenant (metadata loaded lazily per
 *              tenant), and the same with the metadata cache capped (META_CACHE_TENANTS).
 *   reads      GET one ToDo: p50/p99 on one tenant beside a random tenant of all per request,
 *              BENCH_ROUNDS (3) rounds of each, alternating, once autovacuum is done with what
 *              provisioning left (settle_s: how long that took).
 *   migrate    `quire migrate` over every tenant (each re-checked at a new release), wall time.
 *   postgres   catalog rows and size, database size, and the private memory of the API's backends.
 */
const TENANTS = Number(process.env.BENCH_TENANTS ?? 1000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const CAPPED = Number(process.env.BENCH_META_CAP ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const database = 'quire_bench_tenants';
/** Every tenant's Administrator gets this key pair, so one Authorization header reaches all of them. */
const CREDENTIALS = { api_key: '0123456789abcde', api_secret: '0123456789abcdef0123456789abcdef' };
const AUTH = `token ${CREDENTIALS.api_key}:${CREDENTIALS.api_secret}`;
const TODOS_PER_TENANT = 20;

const name = (i: number) => `tenant${String(i).padStart(5, '0')}`;

function stats(ms: number[]): { p50: number; p90: number; max: number; mean: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  const round = (n: number) => Number(n.toFixed(1));
  return { p50: round(at(0.5)), p90: round(at(0.9)), max: round(sorted.at(-1) ?? NaN), mean: round(sorted.reduce((a, b) => a + b, 0) / sorted.length) };
}

/** A memory figure of a process's /proc status, in MiB (NaN once it is gone). */
function statusMiB(pid: number, field: 'VmRSS' | 'RssAnon'): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

const rssMiB = (pid: number) => Math.round(statusMiB(pid, 'VmRSS'));

/**
 * One GET per tenant, 50 at a time, so every tenant's metadata is loaded. The site goes in
 * X-Frappe-Site-Name: fetch does not send a Host header it is given.
 */
async function touchEveryTenant(port: number, urlPath: string): Promise<void> {
  for (let i = 0; i < TENANTS; i += 50) {
    const batch = Array.from({ length: Math.min(50, TENANTS - i) }, (_, k) => name(i + k + 1));
    await Promise.all(
      batch.map(async (site) => {
        const res = await fetch(`http://127.0.0.1:${port}${urlPath}`, { headers: { 'X-Frappe-Site-Name': site, Authorization: AUTH } });
        if (res.status !== 200) throw new Error(`GET ${urlPath} on ${site}: ${res.status}`);
      }),
    );
  }
}

/**
 * Waits until autovacuum is done with what provisioning left (a thousand new tables, a grown catalog)
 * and writes the dirty pages out, so the reads measure a database that has held its tenants for a
 * while, not one still busy from making them minutes ago. Seconds it took (at most two minutes).
 */
async function settle(sql: pg.Client): Promise<number> {
  const t0 = performance.now();
  for (let quiet = 0; quiet < 3 && performance.now() - t0 < 120_000;) {
    await new Promise((r) => setTimeout(r, 1000));
    const { rows } = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`);
    quiet = rows[0]?.n === 0 ? quiet + 1 : 0;
  }
  await sql.query('CHECKPOINT');
  return Number(((performance.now() - t0) / 1000).toFixed(1));
}

async function main(): Promise<void> {
  const url = await recreateDatabase(database);
  const env = { DATABASE_URL: url, LOG_LEVEL: 'warn', NODE_ENV: 'production', DB_POOL_SIZE: '10', BASE_DOMAIN: 'localhost' };
  const rt = await createRuntime({ config: loadRuntimeConfig({ ...process.env, ...env, TENANT_SPARES: '2' }), name: 'quire-bench' });
  // The same database with no spares: every tenant it makes is copied from the template.
  const noSpares = await createRuntime({ config: loadRuntimeConfig({ ...process.env, ...env, TENANT_SPARES: '0' }), name: 'quire-bench-template' });
  const summary: Record<string, unknown> = { tenants: TENANTS };
  const sql = new pg.Client({ connectionString: url });
  await sql.connect();
  const servers: Started[] = [];
  try {
    // -- provisioning ------------------------------------------------------------------------
    const longWay = async (i: number) => {
      const t0 = performance.now();
      await installTenant(rt.db, { name: `long${i}`, schema: `t_long${i}` }, rt.platform.apps, rt.platform);
      const ms = performance.now() - t0;
      await rt.db.query(`DROP SCHEMA "t_long${i}" CASCADE`);
      return ms;
    };
    let made = 0;
    const provision = async (from: 'spare' | 'template' = 'spare'): Promise<number> => {
      const i = ++made;
      const platform = from === 'spare' ? rt.platform : noSpares.platform;
      const t0 = performance.now();
      const t = await createTenant(platform, { name: name(i), adminCredentials: CREDENTIALS });
      const ms = performance.now() - t0;
      // Tenants come one at a time here: the next finds the spare this one's process made since.
      await rt.platform.spares.idle();
      const registered = platform.tenants.get(t.name);
      if (!registered) throw new Error(`tenant ${t.name} was not registered`);
      const meta = (await platform.metas.get(registered)).require('ToDo');
      const cols = meta.columns.map((c) => c.sql);
      const values: Record<string, string> = {
        '"name"': `'todo-' || g`,
        '"description"': `'todo ' || g`,
        '"status"': `'Open'`,
        '"priority"': `'Medium'`,
        '"owner"': `'Administrator'`,
        '"modified_by"': `'Administrator'`,
        '"creation"': `now()`,
        '"modified"': `now()`,
        '"docstatus"': '0',
        '"idx"': '0',
      };
      await rt.db.query(
        `INSERT INTO ${meta.table} (${cols.filter((c) => values[c]).join(', ')}) SELECT ${cols
          .filter((c) => values[c])
          .map((c) => values[c])
          .join(', ')} FROM generate_series(1, ${TODOS_PER_TENANT}) g`,
      );
      return ms;
    };
    const firstTemplateBuild = await provision(); // builds the release's template
    const longFirst: number[] = [];
    for (let i = 0; i < Math.min(5, SAMPLES); i++) longFirst.push(await longWay(i));
    const first: number[] = [];
    for (let i = 0; i < SAMPLES; i++) first.push(await provision());
    const templateFirst: number[] = [];
    for (let i = 0; i < SAMPLES; i++) templateFirst.push(await provision('template'));
    const progress: Record<string, number> = {};
    let batch: number[] = [];
    while (made < TENANTS - 2 * SAMPLES) {
      batch.push(await provision());
      if (made % 100 === 0) {
        progress[String(made)] = stats(batch).p50;
        process.stdout.write(`  ${made} tenants, provisioning p50 ${stats(batch).p50} ms\n`);
        batch = [];
      }
    }
    const templateLast: number[] = [];
    for (let i = 0; i < SAMPLES; i++) templateLast.push(await provision('template'));
    const last: number[] = [];
    while (made < TENANTS) last.push(await provision());
    const longLast: number[] = [];
    for (let i = 0; i < Math.min(5, SAMPLES); i++) longLast.push(await longWay(100 + i));
    summary.provision_ms = {
      first_tenant_with_template_build: Number(firstTemplateBuild.toFixed(1)),
      [`spare: tenants 2-${SAMPLES + 1}`]: stats(first),
      [`spare: tenants ${TENANTS - SAMPLES + 1}-${TENANTS}`]: stats(last),
      [`template: tenants ${SAMPLES + 2}-${2 * SAMPLES + 1}`]: stats(templateFirst),
      [`template: tenants ${TENANTS - 2 * SAMPLES + 1}-${TENANTS - SAMPLES}`]: stats(templateLast),
      long_way_at_start: stats(longFirst),
      long_way_at_end: stats(longLast),
      p50_per_100: progress,
    };
    await rt.close();
    await noSpares.close();

    // -- Postgres catalog --------------------------------------------------------------------
    const catalog = await sql.query<{ relations: string; attributes: string; catalog_mb: string; database_mb: string }>(
      `SELECT (SELECT count(*) FROM pg_class) AS relations, (SELECT count(*) FROM pg_attribute) AS attributes,
              round(sum(pg_total_relation_size(c.oid)) / 1048576.0, 1) AS catalog_mb,
              round(pg_database_size(current_database()) / 1048576.0, 1) AS database_mb
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'pg_catalog' AND c.relkind = 'r'`,
    );
    const row = catalog.rows[0];
    if (!row) throw new Error('no catalog row');
    summary.postgres_catalog = {
      pg_class_rows: Number(row.relations),
      pg_attribute_rows: Number(row.attributes),
      pg_catalog_mb: Number(row.catalog_mb),
      database_mb: Number(row.database_mb),
      relations_per_tenant: Math.round(Number(row.relations) / (TENANTS + 1)),
    };

    // -- API memory and reads ----------------------------------------------------------------
    const apiBackends = async (): Promise<number[]> =>
      (
        await sql.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
        )
      ).rows.map((r) => r.pid);
    const backendMiB = async () => {
      const pids = await apiBackends();
      const each = pids.map((p) => statusMiB(p, 'RssAnon')).filter((n) => !Number.isNaN(n));
      return {
        backends: each.length,
        private_mib_max: Number(Math.max(...each).toFixed(1)),
        private_mib_total: Number(each.reduce((a, b) => a + b, 0).toFixed(1)),
      };
    };
    const path = `/api/resource/ToDo/todo-7`;
    const one = [{ Host: `${name(1)}.localhost` }];
    const all = Array.from({ length: TENANTS }, (_, i) => ({ Host: `${name(i + 1)}.localhost` }));
    const load = (api: Started, headerSets: Record<string, string>[], s = seconds): Promise<LoadResult> =>
      measure({ origin: `http://127.0.0.1:${api.port}`, paths: [path], headers: { Authorization: AUTH }, headerSets, seconds: s, connections });
    const round = (r: LoadResult) => ({ rps: Math.round(r.rps), p50_ms: Number(r.p50.toFixed(2)), p99_ms: Number(r.p99.toFixed(2)), errors: r.errors });

    summary.settle_s = await settle(sql);
    const api = await startProcess(['bin/quire.mjs', 'serve', 'api'], { ...env, PORT: '0' });
    servers.push(api);
    const pid = api.child.pid ?? 0;
    const memory: Record<string, number> = { started_mib: rssMiB(pid) };
    await load(api, one, 5);
    const oneWarm = rssMiB(pid);
    memory.one_tenant_warm_mib = oneWarm;
    // Every tenant once, in order (no randomness: all of them loaded), then a random mix.
    await touchEveryTenant(api.port, path);
    const coldPass = round(await load(api, all, 15));
    const allWarm = rssMiB(pid);
    memory.all_tenants_warm_mib = allWarm;
    const oneRounds: ReturnType<typeof round>[] = [];
    const allRounds: ReturnType<typeof round>[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      oneRounds.push(round(await load(api, one)));
      allRounds.push(round(await load(api, all)));
    }
    memory.after_reads_mib = rssMiB(pid);
    summary.postgres_backends_after_reads = await backendMiB();
    memory.per_tenant_kib = Math.round(((allWarm - oneWarm) * 1024) / (TENANTS - 1));
    summary.api_memory = memory;
    const avg = (rows: ReturnType<typeof round>[], key: 'p50_ms' | 'p99_ms' | 'rps') => Number((rows.reduce((a, b) => a + b[key], 0) / rows.length).toFixed(2));
    const mean = (rows: ReturnType<typeof round>[]) => ({ rps: avg(rows, 'rps'), p50_ms: avg(rows, 'p50_ms'), p99_ms: avg(rows, 'p99_ms') });
    summary.reads = {
      one_tenant: mean(oneRounds),
      [`${TENANTS}_tenants`]: mean(allRounds),
      first_pass_cold_backends: coldPass,
      p99_ratio: Number((avg(allRounds, 'p99_ms') / avg(oneRounds, 'p99_ms')).toFixed(2)),
      rounds: { one_tenant: oneRounds, [`${TENANTS}_tenants`]: allRounds },
    };
    api.child.kill('SIGTERM');

    const capped = await startProcess(['bin/quire.mjs', 'serve', 'api'], { ...env, PORT: '0', META_CACHE_TENANTS: String(CAPPED) });
    servers.push(capped);
    await touchEveryTenant(capped.port, path);
    const cappedReads = await load(capped, all);
    summary.api_memory_capped = { META_CACHE_TENANTS: CAPPED, after_reads_mib: rssMiB(capped.child.pid ?? 0), reads: round(cappedReads) };
    capped.child.kill('SIGTERM');

    // -- migrate -----------------------------------------------------------------------------
    // A new release for every tenant: forget that they are at this one, so each is checked again.
    await sql.query(`DELETE FROM quire.tenant_releases`);
    await sql.query(`UPDATE quire.releases SET "completed_at" = NULL`);
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, ['bin/quire.mjs', 'migrate'], { cwd: ROOT, env: { ...process.env, ...env }, maxBuffer: 1 << 26 }, (err) =>
        err ? reject(new Error(`quire migrate failed: ${err.message}`)) : resolve(),
      ),
    );
    const migrateMs = performance.now() - t0;
    summary.migrate = { tenants: TENANTS, wall_s: Number((migrateMs / 1000).toFixed(1)), per_tenant_ms: Number((migrateMs / TENANTS).toFixed(1)) };
    console.log(JSON.stringify(summary, null, 2));
  } finally {
    for (const s of servers) s.child.kill('SIGTERM');
    await sql.end();
    await rt.close().catch(() => {});
    await noSpares.close().catch(() => {});
  }
}

await main();
