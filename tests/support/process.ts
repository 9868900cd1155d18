import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { throughPooler } from './database-env';
import { parseJson } from './json';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Spawned {
  child: ChildProcess;
  /** Everything printed on stdout so far. */
  stdout(): string;
  /** Everything printed on stderr so far. */
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout (rejects if the process exits first or after `ms`). */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpExecArray>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs `node bin/quire.mjs …` (or another script) as a real child process. */
export function spawnQuire(args: string[], env: NodeJS.ProcessEnv): Spawned {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/quire.mjs'), ...args], {
    cwd: ROOT,
    env: throughPooler({ PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', METRICS_PORT: '0', SHUTDOWN_DELAY_MS: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor(pattern, ms = 30_000) {
      return new Promise((resolve, reject) => {
        const started = Date.now();
        const tick = () => {
          const m = pattern.exec(out);
          if (m) resolve(m);
          else if (child.exitCode !== null) reject(new Error(`process exited (${child.exitCode}) before ${pattern}: ${out}${err}`));
          else if (Date.now() - started > ms) reject(new Error(`timed out waiting for ${pattern}: ${out}${err}`));
          else setTimeout(tick, 50);
        };
        tick();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs `quire <args> --json` to completion and parses its one JSON line. */
export async function quireJson(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; json: Record<string, any> }> {
  const p = spawnQuire([...args, '--json'], env);
  const code = await p.stop('SIGCONT');
  const text = p.stdout().trim();
  return { code, json: JSON.parse(text) as Record<string, any> };
}

/** A plain HTTP request with an explicit Host header (fetch cannot set Host). */
export function rawRequest(options: {
  port: number;
  path: string;
  host: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: options.port,
        path: options.path,
        method: options.method ?? 'GET',
        headers: { Host: options.host, ...(options.headers ?? {}) },
      },
      (res) => {
        let data = '';
        res.on('data', (c: Buffer) => (data += c.toString()));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: parseJson(data, data) });
        });
      },
    );
    req.on('error', reject);
    if (options.body) req.write(options.body);
    req.end();
  });
}
