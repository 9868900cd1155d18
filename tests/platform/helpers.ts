import { execFile, spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { generateKeys } from '@quire/documents';
import { makePrincipal } from '@quire/permissions';
import { expect } from 'vitest';
import { postDoctype } from '../support/doctypes';
import { parseJson } from '../support/json';
import { throughPooler } from '../support/database-env';
import { ROOT } from '../support/process';
import { databaseUrl, type CallResult, type TestServer, type TestTenant } from '../support/server';

/** Shared helpers for the platform behaviour tests (tenancy, DocTypes, auth, permissions). */

export const QUIRE_BIN = path.join(ROOT, 'bin/quire.mjs');

/** Asserts an error answer: status and Frappe's `exc_type`. */
export function expectError(res: CallResult, status: number, excType: string): void {
  expect({ status: res.status, exc_type: res.body?.exc_type }, res.text.slice(0, 500)).toEqual({ status, exc_type: excType });
}

export function expectOk(res: CallResult, status = 200): void {
  expect(res.status, res.text.slice(0, 500)).toBe(status);
}

export async function createRole(t: TestTenant, role: string): Promise<void> {
  const res = await t.call('POST', '/api/resource/Role', { json: { role_name: role } });
  expectOk(res);
}

export interface TestUser {
  email: string;
  api_key: string;
  api_secret: string;
  /** `token key:secret` */
  auth: string;
}

/** Creates a User (as Administrator, over HTTP) with these roles and issues its API key in-process. */
export async function createUser(server: TestServer, t: TestTenant, email: string, roles: string[]): Promise<TestUser> {
  const res = await t.call('POST', '/api/resource/User', {
    json: { email, first_name: email.split('@')[0], roles: roles.map((role) => ({ role })) },
  });
  expectOk(res);
  const keys = await issueKeys(server, t, email);
  return { email, ...keys, auth: `token ${keys.api_key}:${keys.api_secret}` };
}

export async function issueKeys(server: TestServer, t: TestTenant, user: string): Promise<{ api_key: string; api_secret: string }> {
  const tenant = server.platform.tenants.get(t.name)!;
  const ctx = await server.platform.context(tenant, makePrincipal('Administrator', ['Administrator', 'System Manager']));
  return server.db.transaction((tx) => generateKeys(tx, ctx, user, 'Administrator'));
}

/** POST /api/resource/DocType; fails the test unless it answers 200. */
export async function createDocType(t: TestTenant, definition: object): Promise<any> {
  const res = await postDoctype(t, definition);
  expectOk(res);
  return res.body.data;
}

/** Columns of a table in a schema, from information_schema. */
export async function columnsOf(server: TestServer, schema: string, table: string): Promise<Record<string, { data_type: string; max_length: number | null }>> {
  const { rows } = await server.db.query<{ column_name: string; data_type: string; character_maximum_length: number | null }>(
    `SELECT column_name, data_type, character_maximum_length FROM information_schema.columns
     WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
    [schema, table],
  );
  return Object.fromEntries(rows.map((r) => [r.column_name, { data_type: r.data_type, max_length: r.character_maximum_length }]));
}

/** Schemas holding a table of this name. */
export async function schemasWithTable(server: TestServer, table: string): Promise<string[]> {
  const { rows } = await server.db.query<{ table_schema: string }>(
    `SELECT table_schema FROM information_schema.tables WHERE table_name = $1 ORDER BY table_schema`,
    [table],
  );
  return rows.map((r) => r.table_schema);
}

// ------------------------------------------------------------------------------------ raw HTTP

export interface RawResult {
  status: number;
  body: any;
  text: string;
}

/** One request with an explicit Host header and no X-Frappe-Site-Name (fetch cannot set Host). */
export function rawRequest(port: number, method: string, pathname: string, headers: Record<string, string>, body?: string): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path: pathname, headers: { Accept: 'application/json', ...headers }, setHost: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: parseJson(text), text });
        });
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

// ------------------------------------------------------------------------------------ CLI

export interface CliResult {
  code: number;
  json: any;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/quire.mjs <args> --json` against the test database; stdout must be exactly one JSON object. */
export function quire(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [QUIRE_BIN, ...args, '--json'],
      {
        cwd: ROOT,
        env: throughPooler({ ...process.env, DATABASE_URL: databaseUrl(), LOG_LEVEL: 'silent', NODE_ENV: 'test', ...env }),
        timeout: 60_000,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
        if (err && code === -1) {
          // ExecFileException is typed without Error's shape; the original is kept as the cause.
          reject(new Error(err.message, { cause: err }));
          return;
        }
        const lines = stdout.split('\n').filter((l) => l.trim() !== '');
        const json: unknown = lines.length === 1 ? parseJson(lines[0]!) : undefined;
        resolve({ code, json, stdout, stderr });
      },
    );
  });
}

// ------------------------------------------------------------------------------------ a second API process

export interface ChildServer {
  port: number;
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** `node bin/quire.mjs serve` on a free port against the same database; resolves once it prints its port. */
export function startChildServer(env: Record<string, string> = {}): Promise<ChildServer> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [QUIRE_BIN, 'serve'], {
      cwd: ROOT,
      env: throughPooler({
        ...process.env,
        DATABASE_URL: databaseUrl(),
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        NODE_ENV: 'test',
        METRICS_PORT: '0',
        SHUTDOWN_DELAY_MS: '0',
        ...env,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`child server did not start: ${out} ${err}`));
    }, 60_000);
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on port (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        const port = Number(m[1]);
        resolve({
          port,
          url: `http://127.0.0.1:${port}`,
          process: child,
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null || child.signalCode !== null) {
                done();
                return;
              }
              const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
              child.once('exit', () => {
                clearTimeout(kill);
                done();
              });
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child server exited (${String(code)}): ${out} ${err}`));
    });
  });
}

/** Polls `fn` until it returns true or `timeoutMs` passes; returns the elapsed milliseconds (or Infinity). */
export async function pollUntil(fn: () => Promise<boolean>, timeoutMs: number, everyMs = 10): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await fn()) return performance.now() - start;
    if (performance.now() - start > timeoutMs) return Infinity;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
