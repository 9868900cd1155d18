import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { PgDatabase } from '@quire/db';
import { freshDatabase, type FreshDatabase } from '../platform/migrate-support';
import { quireJson, spawnQuire, type Spawned } from '../support/process';
import { call, type TestTenant } from '../support/server';

/**
 * What the hostile suites attack: `quire serve` (the API, OAuth and in-process webhooks, as `npm
 * start` runs them) in production mode, as a child process so that a request that stops it is
 * seen as a stopped process, not a failed test worker; in a database of its own, so its webhook
 * sweeper never touches another suite's events.
 */
export interface Target {
  port: number;
  url: string;
  /** The operations port (/metrics). */
  opsPort: number;
  pid: number;
  filesDir: string;
  /** The environment every `quire` command against this target runs with. */
  env: NodeJS.ProcessEnv;
  db: PgDatabase;
  process: Spawned;
  /** A fresh tenant, made with `quire tenant create`, and its Administrator's API calls. */
  tenant(prefix?: string): Promise<TestTenant>;
  alive(): boolean;
  /** The process's resident memory, in KiB (/proc). */
  rssKiB(): number;
  /** One value of the target's Prometheus metrics (summed over labels). */
  metric(name: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startTarget(env: NodeJS.ProcessEnv = {}): Promise<Target> {
  const fresh: FreshDatabase = await freshDatabase();
  const filesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-hostile-files-'));
  const base: NodeJS.ProcessEnv = {
    DATABASE_URL: fresh.url,
    NODE_ENV: 'production',
    QUIRE_FILES_DIR: filesDir,
    BASE_DOMAIN: 'localhost',
    CACHE_REFRESH_INTERVAL_MS: '1000',
    DB_POOL_SIZE: '5',
    ...env,
  };
  // The release and its tenant template first, so `serve` starts at once and tenants are quick to make.
  const migrated = await quireJson(['migrate'], base);
  if (migrated.code !== 0) throw new Error(`quire migrate failed: ${JSON.stringify(migrated.json)}`);
  const p = spawnQuire(['serve'], { ...base, PORT: '0' });
  const [, port] = (await p.waitFor(/listening on port (\d+)/, 60_000)).map(Number);
  const [, opsPort] = (await p.waitFor(/health on port (\d+)/, 60_000)).map(Number);
  const url = `http://127.0.0.1:${port}`;
  const pid = p.child.pid ?? 0;
  return {
    port: port ?? 0,
    url,
    opsPort: opsPort ?? 0,
    pid,
    filesDir,
    env: base,
    db: fresh.db,
    process: p,
    async tenant(prefix = 'h') {
      const name = `${prefix}${randomBytes(4).toString('hex')}`;
      const made = await quireJson(['tenant', 'create', name], base);
      if (made.code !== 0) throw new Error(`tenant create failed: ${JSON.stringify(made.json)}`);
      const created = made.json as { name: string; schema: string; cluster: string; hosts: string[]; api_key: string; api_secret: string };
      const auth = `token ${created.api_key}:${created.api_secret}`;
      // The server hears of the tenant through NOTIFY; wait until it answers for it.
      for (let i = 0; i < 100; i++) {
        const ping = await call(url, name, 'GET', '/api/method/ping');
        if (ping.status === 200) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      return { ...created, auth, call: (method, p2, o = {}) => call(url, name, method, p2, { auth, ...o }) };
    },
    alive: () => p.child.exitCode === null && p.child.signalCode === null,
    rssKiB() {
      const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    },
    async metric(name: string) {
      const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
      let sum = 0;
      for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(m[1]);
      return sum;
    },
    async stop() {
      await p.stop();
      await fresh.drop();
      fs.rmSync(filesDir, { recursive: true, force: true });
    },
  };
}
