// A local Quire deployment of several processes for `npm run load` without BASE: a fresh database
// on this machine's Postgres (dropped at the end), the release migrated and N tenants created
// (seed.ts), API processes (`quire serve api`), the auth service (`quire serve auth`), optionally
// a webhooks process on Redis, and HAProxy in front as a cluster's ingress would be: `/oauth/` and
// `/.well-known/` to auth, the rest round-robin to the APIs, each backend health-checked on its
// /readyz. Without HAProxy the scripts get every API origin (they round-robin themselves) and the
// auth origin. Everything listens on 127.0.0.1 only.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { canConnect, freePort } from '../../../tests/support/ports';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const HAPROXY = process.env.HAPROXY_BIN ?? '/usr/sbin/haproxy';

export interface LocalStackOptions {
  tenants: number;
  /** `quire serve api` processes. */
  apis: number;
  /** Put HAProxy in front (when its binary exists). */
  haproxy: boolean;
  /** Start `quire serve webhooks` (and give every process REDIS_URL) when Redis answers on 127.0.0.1:6379. */
  webhooks: boolean;
  /** Postgres to create the database on (a superuser URL). */
  adminUrl: string;
  log(line: string): void;
}

export interface LocalStack {
  /** What the scripts' BASE and AUTH_BASE get. */
  bases: string[];
  authBases: string[];
  /** The tenants file (JSON lines of `tenant create` outputs). */
  tenantsFile: string;
  /** One line saying what runs. */
  about: string;
  stop(): Promise<void>;
}

interface Proc {
  name: string;
  child: ChildProcess;
  /** The last of stdout and stderr together. */
  output(): string;
  /** All of stdout. */
  stdout(): string;
}

function probe(port: number, urlPath: string, host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, headers: { Host: host }, agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

async function until(what: string, ms: number, test: () => Promise<boolean>, procs: Proc[]): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await test()) return;
    const dead = procs.find((p) => p.child.exitCode !== null || p.child.signalCode !== null);
    if (dead) throw new Error(`${dead.name} exited (${dead.child.exitCode ?? dead.child.signalCode}) while waiting for ${what}:\n${dead.output()}`);
    if (Date.now() > deadline) throw new Error(`timed out after ${ms / 1000}s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every child still running: killed outright if this process exits without stopping them. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function start(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  // In a process group of its own: Ctrl-C reaches the runner only, which stops the test first
  // (teardown, summary) and then the stack, in that order.
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let out = '';
  let stdout = '';
  const keep = (c: Buffer): void => {
    out = (out + c.toString()).slice(-8000);
  };
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
    keep(c);
  });
  child.stderr.on('data', keep);
  return { name, child, output: () => out, stdout: () => stdout };
}

function stopProc(p: Proc, ms = 10_000): Promise<void> {
  return new Promise((resolve) => {
    if (p.child.exitCode !== null || p.child.signalCode !== null) {
      resolve();
      return;
    }
    const kill = setTimeout(() => p.child.kill('SIGKILL'), ms);
    p.child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    p.child.kill('SIGTERM');
  });
}

async function admin(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function haproxyConfig(port: number, apis: { port: number; ops: number }[], auth: { port: number; ops: number }): string {
  return [
    'global',
    '  maxconn 4000',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  option http-keep-alive',
    '  http-reuse safe',
    '  retries 2',
    '  retry-on conn-failure',
    'frontend quire',
    `  bind 127.0.0.1:${port}`,
    // The chart's ingress: the OAuth service takes /oauth/ and /.well-known/, the API the rest.
    '  acl oauth path_beg /oauth/ /.well-known/',
    '  use_backend auth if oauth',
    '  default_backend api',
    'backend api',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    ...apis.map((a, i) => `  server api${i} 127.0.0.1:${a.port} check port ${a.ops} inter 1s`),
    'backend auth',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    `  server auth0 127.0.0.1:${auth.port} check port ${auth.ops} inter 1s`,
    '',
  ].join('\n');
}

export async function startLocalStack(o: LocalStackOptions): Promise<LocalStack> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-load-'));
  const database = `quire_load_${process.pid}_${Date.now().toString(36)}`;
  const databaseUrl = new URL(o.adminUrl);
  databaseUrl.pathname = `/${database}`;
  const procs: Proc[] = [];
  let created = false;
  const stop = async (): Promise<void> => {
    await Promise.all(procs.map((p) => stopProc(p)));
    if (created)
      await admin(o.adminUrl, `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch((e: unknown) => o.log(`could not drop ${database}: ${String(e)}`));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const t0 = Date.now();
    await admin(o.adminUrl, `CREATE DATABASE "${database}"`);
    created = true;
    const redis =
      o.webhooks &&
      (await new Promise<boolean>((resolve) => {
        const s = net.connect(6379, '127.0.0.1');
        s.once('connect', () => {
          s.destroy();
          resolve(true);
        });
        s.once('error', () => resolve(false));
      }));
    if (o.webhooks && !redis) o.log('no Redis at 127.0.0.1:6379: no webhooks process');
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: databaseUrl.toString(),
      BASE_DOMAIN: 'localhost',
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      DB_POOL_SIZE: '10',
      SHUTDOWN_DELAY_MS: '0',
      SHUTDOWN_TIMEOUT_MS: '5000',
      QUIRE_FILES_DIR: path.join(dir, 'files'),
      // One key for every process: none of them races to make one in the database.
      QUIRE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      ...(redis ? { REDIS_URL: `redis://127.0.0.1:6379/${10 + (process.pid % 5)}`, WEBHOOK_QUEUE_PREFIX: `quire-load-${database}` } : {}),
    };
    const quire = (name: string, args: string[], extra: NodeJS.ProcessEnv): Proc => {
      const p = start(name, process.execPath, [path.join(ROOT, 'bin/quire.mjs'), ...args], { ...env, ...extra });
      procs.push(p);
      return p;
    };

    // The seed and the services start together: a service waits for the migration by itself.
    const seed = start('seed', process.execPath, ['--import', 'tsx', path.join(ROOT, 'load-tests/node/stack/seed.ts'), String(o.tenants), 'load'], env);
    procs.push(seed);
    const apis: { port: number; ops: number }[] = [];
    for (let i = 0; i < o.apis; i++) {
      const a = { port: await freePort(), ops: await freePort() };
      apis.push(a);
      quire(`api${i}`, ['serve', 'api'], { PORT: String(a.port), METRICS_PORT: String(a.ops) });
    }
    const auth = { port: await freePort(), ops: await freePort() };
    quire('auth', ['serve', 'auth'], { AUTH_PORT: String(auth.port), METRICS_PORT: String(auth.ops), DB_POOL_SIZE: '4' });
    if (redis) quire('webhooks', ['serve', 'webhooks'], { METRICS_PORT: String(await freePort()), DB_POOL_SIZE: '4' });

    const seedExit = await new Promise<number | null>((resolve) => seed.child.once('exit', resolve));
    procs.splice(procs.indexOf(seed), 1);
    if (seedExit !== 0) throw new Error(`the seed step failed (${seedExit}):\n${seed.output()}`);
    const lines = seed
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    const tenantsFile = path.join(dir, 'tenants.jsonl');
    fs.writeFileSync(tenantsFile, `${lines.join('\n')}\n`, { mode: 0o600 });
    const hosts = lines.map((l) => (JSON.parse(l) as { hosts: string[] }).hosts[0] ?? '');
    const last = hosts.at(-1);
    if (!last) throw new Error(`the seed step printed no tenant:\n${seed.output()}`);
    o.log(`migrated and created ${lines.length} tenants in ${((Date.now() - t0) / 1000).toFixed(1)}s`);

    // Ready, and every process serves every tenant. (A process that started while the seed ran
    // may learn of the first tenants only at its next CACHE_REFRESH_INTERVAL_MS re-check.)
    const services = [
      ...apis.map((a, i) => ({ ...a, name: `api${i}`, path: '/api/method/ping' })),
      { ...auth, name: 'auth', path: '/.well-known/openid-configuration' },
    ];
    await Promise.all(
      services.map((s) =>
        until(
          `${s.name} to be ready and serve every tenant`,
          60_000,
          async () => (await probe(s.ops, '/readyz')) === 200 && (await Promise.all(hosts.map((h) => probe(s.port, s.path, h)))).every((c) => c === 200),
          procs,
        ),
      ),
    );

    let bases = apis.map((a) => `http://127.0.0.1:${a.port}`);
    let authBases = [`http://127.0.0.1:${auth.port}`];
    let front = `${o.apis} API processes (the scripts round-robin over them), auth`;
    if (o.haproxy && fs.existsSync(HAPROXY)) {
      const port = await freePort();
      const config = path.join(dir, 'haproxy.cfg');
      fs.writeFileSync(config, haproxyConfig(port, apis, auth));
      const proxy = start('haproxy', HAPROXY, ['-db', '-f', config], { PATH: process.env.PATH });
      procs.push(proxy);
      await until('haproxy', 10_000, () => canConnect(port), procs);
      // Until every backend is up behind it (a check must pass first).
      let streak = 0;
      await until(
        'haproxy to route to every API process and to auth',
        15_000,
        async () => {
          const api = await probe(port, '/api/method/ping', last);
          const oidc = await probe(port, '/.well-known/openid-configuration', last);
          streak = api === 200 && oidc === 200 ? streak + 1 : 0;
          return streak >= o.apis * 2;
        },
        procs,
      );
      bases = [`http://127.0.0.1:${port}`];
      authBases = bases;
      front = `HAProxy on port ${port} → ${o.apis} API processes + auth`;
    } else if (o.haproxy) o.log(`no HAProxy at ${HAPROXY}: the scripts round-robin over the API ports themselves`);
    const about = `local stack: database ${database}, ${lines.length} tenants, ${front}${redis ? ', webhooks on Redis' : ''} (up in ${((Date.now() - t0) / 1000).toFixed(1)}s)`;
    o.log(about);
    return { bases, authBases, tenantsFile, about, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
