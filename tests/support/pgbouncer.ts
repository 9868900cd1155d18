import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, stopChild, waitForPort } from './ports';

/**
 * Debian's PgBouncer in transaction pooling mode in front of the suite's Postgres, for the run that
 * proves Quire works through a pooler (QUIRE_TEST_POOLER=pgbouncer). It refuses to run as root, so
 * it runs as `postgres` with its files in a folder that user owns.
 */
export interface PgBouncer {
  port: number;
  stop(): Promise<void>;
}

const BINARY = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

export async function startPgBouncer(target: URL): Promise<PgBouncer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-pgbouncer-'));
  const port = await freePort();
  const user = target.username || 'postgres';
  fs.writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || '5432'} user=${user}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = any',
      'pool_mode = transaction',
      'max_client_conn = 4000',
      'default_pool_size = 60',
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) fs.chownSync(dir, ...ids('postgres'));
  const [cmd, args] = asRoot ? ['runuser', ['-u', 'postgres', '--', BINARY, path.join(dir, 'pgbouncer.ini')]] : [BINARY, [path.join(dir, 'pgbouncer.ini')]];
  const child: ChildProcess = spawn(cmd, args, { stdio: 'ignore' });
  await waitForPort(port, () => child.exitCode, `pgbouncer (see ${dir}/pgbouncer.log)`);
  return {
    port,
    stop: () => stopChild(child),
  };
}

function ids(name: string): [number, number] {
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  const [, , uid, gid] = (line ?? '').split(':');
  if (uid === undefined || gid === undefined) throw new Error(`no user ${name}`);
  return [Number(uid), Number(gid)];
}
