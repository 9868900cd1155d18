import { spawn } from 'node:child_process';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/process';

/**
 * `npm run load -- read-mix` end to end, as the "done when" states it: a local stack of
 * several processes (a fresh database, two API processes, the auth service, HAProxy), the smoke
 * profile (shortened to 5 s here), every threshold held; and nothing left behind.
 */
const ADMIN_URL = process.env.QUIRE_TEST_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

describe('npm run load -- read-mix', () => {
  it('passes its thresholds against a local stack, and removes the stack', { timeout: 90_000 }, async () => {
    const child = spawn('npm', ['run', '--silent', 'load', '--', 'read-mix', '--quiet', '-e', 'DURATION=5s'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, `${stdout}\n${stderr}`).toBe(0);

    expect(stderr).toMatch(/local stack: database quire_load_\w+, 8 tenants, HAProxy on port \d+ → 2 API processes \+ auth/);
    expect(stderr).toContain('setup: 8 tenant(s) ready');
    expect(stdout).toContain('read-mix (profile smoke)');
    expect(stdout).toMatch(/✓ 'p\(95\)<150' p\(95\)=[\d.]+(ms|µs)/);
    expect(stdout).toMatch(/http_reqs\{scenario:reads\}\n\s+✓ 'count>0' count=200\n/); // 20 iterations/s × 5 s × 2 requests
    expect(stdout).toContain('✓ every threshold held');
    expect(stdout).toMatch(/JSON summary: \S+quire-load-read-mix-smoke\.json/);

    // The database is gone.
    const database = /database (quire_load_\w+)/.exec(stderr)![1]!;
    const client = new pg.Client({ connectionString: ADMIN_URL });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
      expect(rows).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
