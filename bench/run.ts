/**
 * `npm run bench -- <name>`: one benchmark, each measuring Quire beside its floor in one run.
 * Every benchmark makes its own database on BENCH_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres).
 */
const BENCHMARKS: Record<string, { file: string; what: string }> = {
  reads: {
    file: './reads',
    what: 'GET one ToDo and a filtered list over 100,000 rows: Quire (System Manager, Administrator) vs bare node:http + pg and express',
  },
  writes: {
    file: './writes',
    what: 'POST and PUT a ToDo (with webhook outbox rows) vs one INSERT / UPDATE in a transaction on bare node:http + pg and express',
  },
  callers: { file: './callers', what: 'the same reads with `token key:secret`, an OAuth Bearer token and a session cookie (one user)' },
  metrics: { file: './metrics-cost', what: 'the list with metrics and health on beside off' },
  tenants: {
    file: './tenants',
    what: 'provisioning time at the first tenants and at BENCH_TENANTS (1,000), API memory and read p99 across them, quire migrate over all, Postgres catalog and backends',
  },
  webhooks: { file: './webhooks', what: 'deliveries per second of one webhooks process, and commit-to-attempt lag (needs Redis)' },
  fairness: {
    file: './fairness',
    what: "a quiet tenant's 20-row lists alone, then while another tenant floods the same API process with heavy lists (48 connections)",
  },
  jobs: {
    file: './jobs',
    what: "background jobs on one worker (BullMQ): jobs/s (no-op, one document written), enqueue-to-start p99 at 100/s, and another tenant's beside a 10,000-job backlog",
  },
  move: {
    file: './move',
    what: 'quire tenant move of 10,000 and 100,000 ToDos (--large: 300,000) between two extra clusters under 4 writers + 2 readers: move time, writes held, failed/lost/doubled writes',
  },
};

export {};

const name = process.argv[2];
const bench = name === undefined ? undefined : BENCHMARKS[name];
if (!bench) {
  console.log(
    `npm run bench -- <name>\n\n${Object.entries(BENCHMARKS)
      .map(([n, b]) => `  ${n.padEnd(10)} ${b.what}`)
      .join('\n')}`,
  );
  process.exitCode = name === undefined ? 0 : 2;
} else {
  await import(bench.file);
}
