import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { canConnect, freePort } from './ports';

/**
 * Extra PostgreSQL clusters beside the suite's own (15/main on 5432, never touched here), for tests
 * of tenants whose schemas live on several servers and move between them by logical replication.
 * Each is a real Debian cluster (pg_createcluster), so pg_lsclusters lists it and pg_dropcluster
 * removes it; its name carries the creating process's pid, so a crashed run's clusters can be told
 * from those of a test file still running in another worker.
 */
export interface PgCluster {
  /** Its name under 15/, e.g. quire_t_1234_0a1b2c. */
  name: string;
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  /** URL of database `db` on it. */
  urlOf(db: string): string;
  /** Stops and drops it (pg_dropcluster --stop); calling it again does nothing. */
  stop(): Promise<void>;
}

const VERSION = '15';
const PREFIX = 'quire_t_';
const BIN = `/usr/lib/postgresql/${VERSION}/bin`;
const CONF_ROOT = `/etc/postgresql/${VERSION}`;
const DATA_ROOT = `/var/lib/postgresql/${VERSION}`;
/** The wrappers read PGCLUSTER, PG_CLUSTER_CONF_ROOT and the locale from the environment: give them a known one. */
const ENV = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' };

const execFileAsync = promisify(execFile);
/** Set by the first createPgCluster() in this process. */
let staleDropped: Promise<void> | undefined;

/**
 * Logical replication with room for a few subscriptions (each takes a slot, a WAL sender, an apply
 * worker and table-sync workers while copying); small and crash-unsafe for speed, as the data is a
 * test's. ssl off so nothing depends on the machine having a snakeoil certificate.
 */
const SETTINGS: Record<string, string> = {
  wal_level: 'logical',
  max_replication_slots: '20',
  max_wal_senders: '20',
  max_logical_replication_workers: '16',
  max_worker_processes: '24',
  max_connections: '100',
  shared_buffers: '32MB',
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  ssl: 'off',
};

/** Whether extra clusters can be made here (pg_createcluster present and we can run it); with the reason when not. */
export function pgClustersAvailable(): { ok: true } | { ok: false; reason: string } {
  for (const file of ['/usr/bin/pg_createcluster', '/usr/bin/pg_dropcluster', '/usr/bin/pg_conftool', `${BIN}/initdb`, `${BIN}/pg_ctl`]) {
    if (!accessible(file, fs.constants.X_OK)) return { ok: false, reason: `${file} is missing (Debian's postgresql-common and postgresql-${VERSION})` };
  }
  for (const dir of [CONF_ROOT, DATA_ROOT]) {
    if (!accessible(dir, fs.constants.W_OK)) return { ok: false, reason: `${dir} is not writable here (pg_createcluster needs root or its owner)` };
  }
  return { ok: true };
}

/**
 * Creates and starts a new cluster on a free port, with trust auth for local and 127.0.0.1/::1
 * connections (replication ones too), resolved once it accepts a connection over TCP. The first call
 * in a process first drops clusters left by dead processes.
 */
export async function createPgCluster(): Promise<PgCluster> {
  await (staleDropped ??= dropStalePgClusters());
  const name = `${PREFIX}${process.pid}_${randomBytes(3).toString('hex')}`;
  let port = await freePort();
  // `--auth=trust` after `--` goes to initdb, and pg_createcluster then leaves initdb's pg_hba.conf
  // (trust for local, host 127.0.0.1/32 and ::1/128, and replication on each) instead of writing its
  // own peer/scram-sha-256 one. start-conf manual: never started with the machine's clusters at boot.
  const options = Object.entries(SETTINGS).flatMap(([key, value]) => ['-o', `${key}=${value}`]);
  await run('pg_createcluster', [VERSION, name, '-p', String(port), '--start-conf=manual', '-q', ...options, '--', '--auth=trust', '--no-sync']);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await start(name);
        break;
      } catch (error) {
        // Another worker's new cluster may have taken the port between freePort() and now.
        if (attempt === 3 || !(await canConnect(port))) throw error;
        port = await freePort();
        await run('pg_conftool', [VERSION, name, 'set', 'port', String(port)]);
      }
    }
    await waitForConnection(urlOn(port, 'postgres'));
  } catch (error) {
    await dropCluster(name);
    throw error;
  }
  let stopped: Promise<void> | undefined;
  return {
    name,
    port,
    url: urlOn(port, 'postgres'),
    urlOf: (db) => urlOn(port, db),
    stop: () => (stopped ??= dropCluster(name)),
  };
}

/** Drops leftover clusters with our prefix whose creating process is gone (a crashed earlier run), so they never pile up. */
export async function dropStalePgClusters(): Promise<void> {
  const names = fs.existsSync(CONF_ROOT) ? fs.readdirSync(CONF_ROOT) : [];
  const stale = names.filter((name) => {
    const pid = creatorPid(name);
    return pid !== undefined && !alive(pid);
  });
  await Promise.all(
    stale.map((name) =>
      dropCluster(name).catch((error: unknown) => {
        console.warn(`could not drop stale cluster ${VERSION}/${name}:`, error);
      }),
    ),
  );
}

function urlOn(port: number, db: string): string {
  return `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(db)}`;
}

/** The pid in a name of ours (quire_t_<pid>_<random>), undefined for any other cluster. */
function creatorPid(name: string): number | undefined {
  const match = new RegExp(`^${PREFIX}(\\d+)_[0-9a-f]+$`).exec(name);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, only not ours to signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * pg_ctl itself rather than `pg_ctlcluster start`, which after starting probes with psql every 0.5 s
 * until three answers agree (over 2 s); pg_ctl -w returns as soon as the server is ready. As its
 * owner (the server refuses root), and in its own session (setsid) as pg_ctlcluster does, so a
 * Ctrl-C to the test run does not reach the server. -D on the config directory: pg_ctl finds the
 * data directory from its postgresql.conf.
 */
async function start(name: string): Promise<void> {
  const log = `/var/log/postgresql/postgresql-${VERSION}-${name}.log`;
  const args = ['start', '-w', '-s', '-t', '30', '-D', path.join(CONF_ROOT, name), '-l', log];
  const pgCtl = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', `${BIN}/pg_ctl`] : [`${BIN}/pg_ctl`];
  try {
    await run('setsid', ['-w', ...pgCtl, ...args]);
  } catch (error) {
    const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').slice(-20).join('\n') : '';
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${log}:\n${tail}`, { cause: error });
  }
}

/** pg_ctl -w has seen the server ready; this also proves TCP on 127.0.0.1 is open and trusted. */
async function waitForConnection(url: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
    } catch (error) {
      if (attempt === 50) throw error;
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    await client.end();
    return;
  }
}

async function dropCluster(name: string): Promise<void> {
  const confDir = path.join(CONF_ROOT, name);
  if (!fs.existsSync(confDir)) return;
  // A creation cut short before initdb finished leaves no postgresql.conf, and pg_dropcluster then
  // does not know the cluster: nothing runs from it, so its directories are simply removed.
  if (!fs.existsSync(path.join(confDir, 'postgresql.conf'))) {
    for (const dir of [confDir, path.join(DATA_ROOT, name)]) fs.rmSync(dir, { recursive: true, force: true });
    return;
  }
  try {
    await run('pg_dropcluster', ['--stop', VERSION, name]);
  } catch (error) {
    // Another process's dropStalePgClusters() may have dropped it meanwhile.
    if (fs.existsSync(confDir)) throw error;
  }
}

async function run(file: string, args: string[]): Promise<void> {
  try {
    await execFileAsync(file, args, { env: ENV });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`${file} ${args.join(' ')} failed: ${stderr || String(error)}`, { cause: error });
  }
}

function accessible(file: string, mode: number): boolean {
  try {
    fs.accessSync(file, mode);
    return true;
  } catch {
    return false;
  }
}

/**
 * Holds an ACCESS EXCLUSIVE lock on `table` (schema-qualified, quoted) of the database at `url`
 * until `release()`: a move that needs the table waits at its start. Resolves once the lock is held.
 */
export async function holdTableLock(url: string, table: string): Promise<{ release(): Promise<void> }> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query('BEGIN');
    await db.query('SET LOCAL statement_timeout = 0');
    await db.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  } catch (e) {
    await db.end().catch(() => {});
    throw e;
  }
  return {
    async release() {
      await db.query('ROLLBACK').catch(() => {});
      await db.end().catch(() => {});
    },
  };
}

/**
 * Makes everything in `makers` at once. What was made is registered in `cleanups` (its undo, in the
 * order made) even when another maker fails, so the file's afterAll removes it; a failure is thrown
 * naming each maker's outcome.
 */
export async function makeAll<T extends readonly unknown[]>(
  cleanups: Array<() => Promise<unknown>>,
  makers: { [K in keyof T]: { make: () => Promise<T[K]>; undo: (made: T[K]) => Promise<unknown> } },
): Promise<T> {
  const made = await Promise.allSettled(
    makers.map(({ make, undo }) =>
      make().then((value) => {
        cleanups.push(() => undo(value));
        return value;
      }),
    ),
  );
  if (made.some((m) => m.status === 'rejected')) {
    throw new Error(`could not make the databases: ${made.map((m) => (m.status === 'rejected' ? String(m.reason) : 'ok')).join(', ')}`);
  }
  return made.map((m) => (m as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
