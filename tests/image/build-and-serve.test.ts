import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, ROOT } from '../support/process';
import { databaseUrl } from '../support/server';

/**
 * The container image's build and start, outside Docker. `scripts/build.mjs --out` makes the tree
 * the Dockerfile copies into the image: package.json files, bin/ and each workspace's compiled
 * dist/, no TypeScript. Its node_modules stand for the image's `npm ci --omit=dev`: links to this
 * checkout's installed production packages (`npm ls --omit=dev`), minus tsx, so nothing can load
 * a .ts file. The compiled CLI then runs on plain `node --conditions=quire-dist bin/quire.mjs`, the
 * image's entrypoint: migrate, create a tenant, serve the API, stop on SIGTERM; and writes nothing
 * into the tree (the image's root filesystem is read-only).
 */

const run = promisify(execFile);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-image-'));
const app = path.join(scratch, 'app');
const running: Array<ReturnType<typeof spawn>> = [];

afterAll(() => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** What `npm ci --omit=dev` puts in the tree, as links: the production packages, the workspaces. */
async function linkProductionModules(out: string): Promise<void> {
  const { stdout } = await run('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }).catch(
    (err: unknown) => err as { stdout: string },
  );
  const workspaces = new Map<string, string>();
  for (const link of fs.readdirSync(path.join(ROOT, 'node_modules/@quire'))) {
    workspaces.set(`@quire/${link}`, path.relative(ROOT, fs.realpathSync(path.join(ROOT, 'node_modules/@quire', link))));
  }
  const wsPattern = [...workspaces.values()].map((ws) => ws.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  // A package the root or a workspace has in its own node_modules (nested ones come with their parent).
  const installed = new RegExp(`^(?:(?:${wsPattern})/)?node_modules/(?:@[^/]+/)?[^/]+$`);
  const links = stdout
    .split('\n')
    .map((p) => path.relative(ROOT, p.trim()))
    .filter((rel) => installed.test(rel) && !rel.startsWith('node_modules/@quire/') && rel !== 'node_modules/tsx');
  expect(links).toContain('node_modules/pg');
  for (const rel of links) {
    fs.mkdirSync(path.dirname(path.join(out, rel)), { recursive: true });
    fs.symlinkSync(path.join(ROOT, rel), path.join(out, rel));
  }
  for (const [name, ws] of workspaces) {
    fs.mkdirSync(path.dirname(path.join(out, 'node_modules', name)), { recursive: true });
    fs.symlinkSync(path.relative(path.dirname(path.join(out, 'node_modules', name)), path.join(out, ws)), path.join(out, 'node_modules', name));
  }
}

/** Every file of the tree but its node_modules. */
function treeFiles(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => !f.split(path.sep).includes('node_modules')).sort();
}

interface Quire {
  child: ReturnType<typeof spawn>;
  output(): string;
  exited: Promise<number | null>;
}

/** `node --conditions=quire-dist bin/quire.mjs …` in the built tree: the image's entrypoint. */
function quire(args: string[], env: NodeJS.ProcessEnv): Quire {
  const child = spawn(process.execPath, ['--conditions=quire-dist', path.join(app, 'bin/quire.mjs'), ...args], {
    cwd: app,
    env: { PATH: process.env.PATH, HOME: scratch, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function waitFor(p: Quire, pattern: RegExp, ms = 30_000): Promise<RegExpExecArray> {
  const started = Date.now();
  for (;;) {
    const m = pattern.exec(p.output());
    if (m) return m;
    if (p.child.exitCode !== null) throw new Error(`exited (${String(p.child.exitCode)}) before ${String(pattern)}:\n${p.output()}`);
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${String(pattern)}:\n${p.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  const { stdout } = await run(process.execPath, [path.join(ROOT, 'scripts/build.mjs'), '--out', app]);
  expect(stdout).toMatch(/^build: \d+ files of \d+ workspaces/);
  await linkProductionModules(app);
}, 60_000);

describe('the image build, run on plain node', () => {
  it('has no TypeScript and no tsx to load', () => {
    const files = treeFiles(app);
    expect(files).toContain(path.join('cli', 'dist', 'index.js'));
    expect(files).toContain(path.join('apps', 'frappe', 'dist', 'desk', 'doctype', 'todo', 'todo.json'));
    expect(files).toContain(path.join('apps', 'frappe', 'dist', 'modules.txt'));
    // The desk is there bundled by Vite (its TSX never transpiled as a server workspace).
    expect(files).toContain(path.join('desk', 'dist', 'index.html'));
    expect(files.filter((f) => f.startsWith(path.join('desk', 'dist')) && f.endsWith('.js'))).not.toEqual([]);
    expect(files.filter((f) => /\.[mc]?ts$/.test(f))).toEqual([]);
    expect(fs.existsSync(path.join(app, 'node_modules/tsx'))).toBe(false);
  });

  it('migrates, creates a tenant, serves the API and stops on SIGTERM', async () => {
    const before = treeFiles(app);
    const data = path.join(scratch, 'data');
    const env: NodeJS.ProcessEnv = {
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl(),
      BASE_DOMAIN: 'localhost',
      QUIRE_FILES_DIR: path.join(data, 'files'),
      QUIRE_DATA_DIR: path.join(data, 'db'),
      LOG_LEVEL: 'warn',
      PORT: '0',
      METRICS_PORT: '0',
      SHUTDOWN_DELAY_MS: '0',
    };

    const migrate = quire(['migrate'], env);
    expect(await migrate.exited, migrate.output()).toBe(0);

    const tenant = `img${randomBytes(4).toString('hex')}`;
    const created = quire(['tenant', 'create', tenant, '--json'], env);
    expect(await created.exited, created.output()).toBe(0);
    const { api_key, api_secret } = JSON.parse(created.output()) as { api_key: string; api_secret: string };

    const api = quire(['serve', 'api'], env);
    const port = Number((await waitFor(api, /listening on port (\d+)/))[1]);
    const host = `${tenant}.localhost`;
    expect(await rawRequest({ port, host, path: '/api/method/ping' })).toEqual({ status: 200, body: { message: 'pong' } });
    const todos = await rawRequest({ port, host, path: '/api/resource/ToDo', headers: { Authorization: `token ${api_key}:${api_secret}` } });
    expect(todos).toEqual({ status: 200, body: { data: [] } });
    const desk = await rawRequest({ port, host, path: '/login' });
    expect(desk.status).toBe(200);
    expect(desk.body).toContain('<div id="root">');

    api.child.kill('SIGTERM');
    expect(await api.exited, api.output()).toBe(0);
    expect(treeFiles(app)).toEqual(before);
  }, 90_000);
});
