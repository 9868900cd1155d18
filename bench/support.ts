import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/** What every benchmark needs: a database of its own, and services as child processes. */

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The URL of a database named `name` on the benchmark's Postgres server. */
export function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops and creates the database `name`, so each run starts empty. */
export async function recreateDatabase(name: string): Promise<string> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return databaseUrl(name);
}

export interface Started {
  child: ChildProcess;
  /** The first number `pattern` captured (a port), or NaN. */
  port: number;
  out(): string;
}

/**
 * Runs `node <args>` from the repository root and resolves once its stdout matches `pattern`
 * (by default a service's "listening on port N"); rejects if it exits first.
 */
export function startProcess(args: string[], env: NodeJS.ProcessEnv, pattern: RegExp = /listening on port (\d+)/i): Promise<Started> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, METRICS_PORT: '0', SHUTDOWN_DELAY_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = pattern.exec(out);
      if (m) {
        // An alternative the pattern did not take leaves its group undefined at run time.
        const groups: (string | undefined)[] = m.slice(1);
        resolve({ child, port: Number(groups.find((g) => g !== undefined)), out: () => out });
      }
    });
    child.once('exit', (code) => {
      if (!pattern.test(out)) reject(new Error(`${args.join(' ')} exited with ${code}: ${out}`));
    });
  });
}

/** The `p` quantile (0..1) of ascending `sorted` values (nearest rank); NaN for none. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? NaN;
}
