import { execFile } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';
import type { MoveReport } from '@quire/tenancy';
import pg from 'pg';
import { createPgCluster, pgClustersAvailable, type PgCluster } from '../tests/support/pg-clusters';
import { percentile, recreateDatabase, ROOT, startProcess, type Started } from './support';

/**
 * `npm run bench -- move [--large]` (issue 28, item 4): `quire tenant move` of a tenant with
 * BENCH_MOVE_SIZES ToDos (10,000 and 100,000; `--large` adds 300,000) between two extra Postgres
 * clusters (wal_level=logical, made with pg_createcluster as the tests make them; the machine's own
 * cluster holds the platform database), while one `quire serve api` process takes a load on that
 * tenant: BENCH_WRITERS (4) connections each POSTing ToDos with unique descriptions and
 * BENCH_READERS (2) listing ToDos, one request at a time each, over HTTP.
 *
 * Per size: the load runs BENCH_BEFORE_SECONDS (5) alone, then through the move (the CLI, --json),
 * then one more second. Then: every write answered 2xx is on the target exactly once (by its
 * description), writes and reads not answered 2xx are counted by status, and write latency during
 * the move is set beside that before it. The move's own figures are its report's; its clean-up
 * includes the 10 s grace before the old copy is dropped (the CLI cannot shorten it), so the total
 * is also given without it. BENCH_SYNCHRONOUS_COMMIT=off runs the clusters as the tests do
 * (asynchronous commits), which lengthens the seal's wait for its marker.
 */

const LARGE = process.argv.includes('--large');
const SIZES = (process.env.BENCH_MOVE_SIZES ?? (LARGE ? '10000,100000,300000' : '10000,100000')).split(',').map(Number);
const WRITERS = Number(process.env.BENCH_WRITERS ?? 4);
const READERS = Number(process.env.BENCH_READERS ?? 2);
const BEFORE_SECONDS = Number(process.env.BENCH_BEFORE_SECONDS ?? 5);
/** move.ts's default sourceGraceMs: slept in the clean-up before the old copy is dropped. */
const GRACE_MS = 10_000;
const database = 'quire_bench_move';
/** synchronous_commit on both clusters: on (as in production) unless BENCH_SYNCHRONOUS_COMMIT says otherwise (off: as the tests run). */
const SYNCHRONOUS_COMMIT = process.env.BENCH_SYNCHRONOUS_COMMIT === 'off' ? 'off' : 'on';
/** Writes in the last seconds before the move are its baseline (the first ones warm the server up). */
const BASELINE_MS = 3000;
const execFileAsync = promisify(execFile);

interface Sample {
  /** performance.now() when sent. */
  at: number;
  ms: number;
  /** HTTP status; 0 when no answer came (a network error). */
  status: number;
}

interface LoadFigures {
  writes: Sample[];
  reads: Sample[];
  /** Descriptions of the writes answered 2xx. */
  acknowledged: string[];
}

interface SizeFigures {
  size: number;
  report: MoveReport;
  load: LoadFigures;
  /** performance.now() when the CLI was started, when the move began (by its report), when it had switched, when the CLI was done. */
  moveWindow: { spawned: number; from: number; switched: number; to: number };
  /** Acknowledged writes not on the target, and those there more than once. */
  lost: number;
  duplicated: number;
  /** Rows with a writer's description on the target that no 2xx acknowledged (a write answered otherwise that happened anyway). */
  unacknowledged: number;
  movedTo: string;
  sourceLeft: boolean;
}

const ok = (status: number): boolean => status >= 200 && status < 300;

/** "p50/p99/max" of the latencies of `samples`, in ms. */
function latencies(samples: readonly Sample[]): string {
  const sorted = samples.map((s) => s.ms).sort((x, y) => x - y);
  const fmt = (n: number) => (Number.isNaN(n) ? '-' : n < 100 ? n.toFixed(1) : n.toFixed(0));
  return `${fmt(percentile(sorted, 0.5))}/${fmt(percentile(sorted, 0.99))}/${fmt(sorted[sorted.length - 1] ?? NaN)}`;
}

/** Non-2xx answers by status, e.g. "503×2 0×1", or "0". */
function failures(samples: readonly Sample[]): string {
  const counts = new Map<number, number>();
  for (const s of samples) if (!ok(s.status)) counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
  return counts.size === 0
    ? '0'
    : [...counts]
        .sort((x, y) => x[0] - y[0])
        .map(([status, n]) => `${status}×${n}`)
        .join(' ');
}

/** `quire <args> --json` run to the end; its JSON object (the last line printed). */
async function quire(args: string[], env: NodeJS.ProcessEnv): Promise<unknown> {
  try {
    const { stdout } = await execFileAsync(process.execPath, ['bin/quire.mjs', ...args, '--json'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      maxBuffer: 16 * 1024 * 1024,
    });
    return JSON.parse(stdout.trim().split('\n').pop() ?? 'null') as unknown;
  } catch (error) {
    const out = (error as { stdout?: string }).stdout ?? '';
    throw new Error(`quire ${args.join(' ')} failed: ${out || String(error)}`, { cause: error });
  }
}

/** A client on one cluster for the time of `fn`. */
async function onCluster<T>(cluster: PgCluster, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: cluster.url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * `rows` ToDos in the tenant's schema on its cluster: one made through the API (every column as
 * the document lifecycle fills it), the rest copied from it in SQL with their own names and
 * descriptions (100,000 API inserts would take minutes); an index on `modified` for the readers' list.
 */
async function seed(cluster: PgCluster, schema: string, origin: string, headers: Record<string, string>, rows: number): Promise<void> {
  const made = await fetch(`${origin}/api/resource/ToDo`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify({ description: 'template', priority: 'Medium', date: '2025-01-01' }),
  });
  if (!ok(made.status)) throw new Error(`seeding: POST ToDo answered ${made.status}: ${await made.text()}`);
  await made.arrayBuffer();
  const table = `"${schema}"."tabToDo"`;
  await onCluster(cluster, async (client) => {
    const { rows: columns } = await client.query<{ column: string }>(
      `SELECT column_name AS "column" FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'tabToDo' ORDER BY ordinal_position`,
      [schema],
    );
    const computed: Record<string, string> = {
      name: `substr(md5(i::text), 1, 10)`,
      description: `'todo ' || i`,
      status: `(ARRAY['Open','Closed','Cancelled'])[1 + i % 3]`,
      creation: `TIMESTAMP '2025-01-01' + i * INTERVAL '1 minute'`,
      modified: `TIMESTAMP '2025-01-01' + i * INTERVAL '1 minute'`,
    };
    const list = columns.map((c) => `"${c.column}"`).join(', ');
    const select = columns.map((c) => computed[c.column] ?? `t."${c.column}"`).join(', ');
    await client.query(`INSERT INTO ${table} (${list}) SELECT ${select} FROM ${table} t, generate_series(1, ${rows}) AS i WHERE t."description" = 'template'`);
    await client.query(`DELETE FROM ${table} WHERE "description" = 'template'`);
    await client.query(`CREATE INDEX bench_todo_modified ON ${table} ("modified")`);
    await client.query(`ANALYZE ${table}`);
  });
}

/** Writers and readers on one tenant, one request at a time each, until stop() (which resolves when the last answer is in). */
function startLoad(origin: string, headers: Record<string, string>): { figures: LoadFigures; stop(): Promise<void> } {
  const figures: LoadFigures = { writes: [], reads: [], acknowledged: [] };
  let running = true;
  const timed = async (into: Sample[], url: string, init: RequestInit): Promise<number> => {
    const at = performance.now();
    let status = 0;
    try {
      const res = await fetch(url, init);
      await res.arrayBuffer();
      status = res.status;
    } catch {
      // No answer: counted as status 0.
    }
    into.push({ at, ms: performance.now() - at, status });
    return status;
  };
  const writer = async (w: number) => {
    for (let i = 0; running; i++) {
      const description = `bench-w${w}-${i}`;
      const status = await timed(figures.writes, `${origin}/api/resource/ToDo`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify({ description }),
      });
      if (ok(status)) figures.acknowledged.push(description);
    }
  };
  const listPath = `/api/resource/ToDo?${new URLSearchParams({
    fields: JSON.stringify(['name', 'description', 'status']),
    order_by: 'modified desc',
    limit_page_length: '20',
  }).toString()}`;
  const reader = async () => {
    while (running) await timed(figures.reads, `${origin}${listPath}`, { headers });
  };
  const all = Promise.all([...Array.from({ length: WRITERS }, (_v, w) => writer(w + 1)), ...Array.from({ length: READERS }, () => reader())]);
  return {
    figures,
    async stop() {
      running = false;
      await all;
    },
  };
}

async function benchSize(size: number, env: NodeJS.ProcessEnv, origin: string, a: PgCluster, b: PgCluster): Promise<SizeFigures> {
  const name = `mv${size}`;
  const made = (await quire(['tenant', 'create', name, '--cluster', 'a'], env)) as { schema: string; api_key: string; api_secret: string };
  const headers = { 'X-Frappe-Site-Name': name, Authorization: `token ${made.api_key}:${made.api_secret}`, Accept: 'application/json' };
  await seed(a, made.schema, origin, headers, size);

  const load = startLoad(origin, headers);
  await new Promise((r) => setTimeout(r, BEFORE_SECONDS * 1000));
  let report: MoveReport;
  let ended: number;
  const spawned = performance.now();
  try {
    report = (await quire(['tenant', 'move', name, '--to', 'b'], env)) as MoveReport;
    ended = performance.now();
  } finally {
    await new Promise((r) => setTimeout(r, 1000));
    await load.stop();
  }
  // The move itself, without the CLI process's start: the report's total, ending when the CLI did;
  // switched once all but the clean-up was done.
  const moveWindow = { spawned, from: ended - report.ms.total, switched: ended - report.ms.cleanUp, to: ended };

  // Every acknowledged write on b once; anything else of the writers' there is counted too.
  const found = await onCluster(b, async (client) => {
    const { rows } = await client.query<{ description: string; n: number }>(
      `SELECT "description", count(*)::int AS "n" FROM "${made.schema}"."tabToDo" WHERE "description" LIKE 'bench-w%' GROUP BY 1`,
    );
    return new Map(rows.map((r) => [r.description, r.n]));
  });
  const acknowledged = new Set(load.figures.acknowledged);
  const lost = [...acknowledged].filter((d) => !found.has(d)).length;
  const duplicated = [...found.values()].filter((n) => n > 1).length;
  const unacknowledged = [...found.keys()].filter((d) => !acknowledged.has(d)).length;
  const directory = (await quire(['tenant', 'list'], env)) as { tenants: Array<{ name: string; cluster: string }> };
  const sourceLeft = await onCluster(a, async (client) => (await client.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [made.schema])).rows.length > 0);
  return {
    size,
    report,
    load: load.figures,
    moveWindow,
    lost,
    duplicated,
    unacknowledged,
    movedTo: directory.tenants.find((t) => t.name === name)?.cluster ?? '?',
    sourceLeft,
  };
}

function printTable(results: readonly SizeFigures[]): void {
  const s = (ms: number) => (ms / 1000).toFixed(1);
  const header = [
    'ToDos'.padStart(7),
    'rows'.padStart(7),
    'total s'.padStart(8),
    'w/o grace'.padStart(9),
    'copy s'.padStart(7),
    'catch-up'.padStart(8),
    'switch ms'.padStart(9),
    'held ms'.padStart(8),
    'clean-up s'.padStart(10),
    'writes'.padStart(7),
    'failed w'.padStart(8),
    'failed r'.padStart(8),
    'lost'.padStart(4),
    'dup'.padStart(3),
    'write ms before p50/p99/max'.padStart(28),
    'write ms during p50/p99/max'.padStart(28),
  ];
  console.log(header.join(' '));
  for (const r of results) {
    const { ms } = r.report;
    const during = r.load.writes.filter((w) => w.at >= r.moveWindow.from && w.at < r.moveWindow.switched);
    // Before the CLI started (its start takes CPU from the server on a small machine).
    const before = r.load.writes.filter((w) => w.at >= r.moveWindow.spawned - BASELINE_MS && w.at < r.moveWindow.spawned);
    console.log(
      [
        String(r.size).padStart(7),
        String(r.report.rows).padStart(7),
        s(ms.total).padStart(8),
        s(ms.total - GRACE_MS).padStart(9),
        s(ms.copy).padStart(7),
        s(ms.catchUp).padStart(8),
        String(ms.switch).padStart(9),
        String(ms.writesHeld).padStart(8),
        s(ms.cleanUp).padStart(10),
        String(during.length).padStart(7),
        failures(r.load.writes).padStart(8),
        failures(r.load.reads).padStart(8),
        String(r.lost).padStart(4),
        String(r.duplicated).padStart(3),
        latencies(before).padStart(28),
        latencies(during).padStart(28),
      ].join(' '),
    );
  }
}

async function main(): Promise<void> {
  const available = pgClustersAvailable();
  if (!available.ok) {
    console.log(`move: skipped: extra Postgres clusters cannot be made here (${available.reason})`);
    return;
  }
  const clusters: PgCluster[] = [];
  let server: Started | undefined;
  try {
    const made = await Promise.allSettled([createPgCluster(), createPgCluster()]);
    for (const m of made) if (m.status === 'fulfilled') clusters.push(m.value);
    const [a, b] = clusters;
    if (!a || !b) {
      const reason: unknown = made.find((m) => m.status === 'rejected')?.reason;
      console.log(`move: skipped: extra Postgres clusters could not be made (${reason instanceof Error ? reason.message.split('\n')[0] : String(reason)})`);
      return;
    }
    // The tests' clusters commit asynchronously (synchronous_commit=off) for speed; a commit then
    // reaches the walsender only at the WAL writer's next round (up to 200 ms later), which would
    // add to every wait of the move's seal for its marker. As a production server commits:
    for (const c of clusters) {
      await onCluster(c, async (client) => {
        await client.query(`ALTER SYSTEM SET synchronous_commit = ${SYNCHRONOUS_COMMIT}`);
        await client.query(`SELECT pg_reload_conf()`);
      });
    }
    const env = { DATABASE_URL: await recreateDatabase(database), LOG_LEVEL: 'warn', NODE_ENV: 'production' };
    await quire(['migrate'], env);
    await quire(['cluster', 'add', 'a', '--url', a.url], env);
    await quire(['cluster', 'add', 'b', '--url', b.url], env);
    server = await startProcess(['bin/quire.mjs', 'serve', 'api'], { ...env, PORT: '0' });
    const origin = `http://127.0.0.1:${server.port}`;
    console.log(
      `move: ${SIZES.join(', ')} ToDos, ${WRITERS} writers + ${READERS} readers (one request at a time each) on one \`quire serve api\`, synchronous_commit=${SYNCHRONOUS_COMMIT}; ` +
        `${os.cpus().length} CPUs, load average ${(os.loadavg()[0] ?? 0).toFixed(1)} at start (other work on the machine makes figures noisy)`,
    );
    const results: SizeFigures[] = [];
    for (const size of SIZES) {
      const r = await benchSize(size, env, origin, a, b);
      results.push(r);
      console.log(
        `  ${size}: ${JSON.stringify(r.report.ms)}; ${r.load.writes.length} writes, ${r.load.reads.length} reads in all; ` +
          `directory says ${r.movedTo}; old copy ${r.sourceLeft ? 'still on a' : 'dropped'}; ${r.unacknowledged} unacknowledged writer rows on b`,
      );
    }
    console.log('');
    printTable(results);
    console.log(
      "\nrows = every table's rows on the target at the switch; total includes the clean-up's 10 s grace before the old copy is dropped (\"w/o grace\" takes it off); held = the report's writesHeld;" +
        ' failed w / failed r = answers not 2xx by status (0 = no answer); lost / dup = acknowledged writes missing on b / there more than once;' +
        ' writes and write latency "during" = writes sent from the move\'s start to its switch (copy, catch-up, seal, switch), "before" = in the 3 s before the CLI started.',
    );
  } finally {
    if (server && server.child.exitCode === null) {
      const exited = new Promise((r) => server?.child.once('exit', r));
      server.child.kill('SIGTERM');
      await exited;
    }
    await Promise.all(clusters.map((c) => c.stop()));
  }
}

await main();
