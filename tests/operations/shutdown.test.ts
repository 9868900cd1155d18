import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, spawnQuire, type Spawned } from '../support/process';
import { databaseUrl, startTestServer, type TestServer } from '../support/server';

/**
 * SIGTERM: unready at once, serving on for SHUTDOWN_DELAY_MS, then no new connections, requests in
 * flight (even one whose body is still arriving) answered to the end, exit 0.
 */

let server: TestServer;
let api: Spawned | undefined;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await api?.stop('SIGKILL');
  await server.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('graceful shutdown', () => {
  it('answers an upload still streaming when SIGTERM comes, refuses new connections after the delay, and exits 0', async () => {
    const t = await server.tenant('bye');
    api = spawnQuire(['serve', 'api'], { DATABASE_URL: databaseUrl(), PORT: '0', SHUTDOWN_DELAY_MS: '400', SHUTDOWN_TIMEOUT_MS: '15000' });
    const port = Number((await api.waitFor(/listening on port (\d+)/, 60_000))[1]);
    const opsPort = Number((await api.waitFor(/health on port (\d+)/))[1]);
    const host = `${t.name}.localhost`;

    const boundary = 'quire-slow-upload';
    const content = 'x'.repeat(64 * 1024);
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="is_private"\r\n\r\n0\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\nContent-Type: text/plain\r\n\r\n`;
    const tail = `\r\n--${boundary}--\r\n`;
    const answer = new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path: '/api/method/upload_file',
          method: 'POST',
          headers: { Host: host, Authorization: t.auth, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
          agent: new http.Agent({ keepAlive: true }),
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
        },
      );
      req.on('error', reject);
      void (async () => {
        req.write(head + content.slice(0, 8192));
        await sleep(200);
        const signalledAt = Date.now();
        api?.child.kill('SIGTERM');
        // Unready at once, still serving during the delay.
        await sleep(100);
        expect((await rawRequest({ port: opsPort, path: '/readyz', host })).body).toMatchObject({ status: 'unready', checks: { shutdown: 'shutting down' } });
        // The rest of the body arrives over ~1.2 s, well past the delay.
        for (let i = 1; i < 8; i++) {
          req.write(content.slice(i * 8192, (i + 1) * 8192));
          await sleep(150);
        }
        expect(Date.now() - signalledAt).toBeGreaterThan(400);
        req.end(tail);
      })().catch(reject);
    });

    // After the delay, nobody new gets in.
    await sleep(1000);
    const refused = await rawRequest({ port, path: '/api/method/ping', host }).then(
      () => 'answered',
      (e: unknown) => (e as NodeJS.ErrnoException).code,
    );
    expect(refused).toBe('ECONNREFUSED');

    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.connection).toBe('close');
    const file = (JSON.parse(res.body) as { message: { file_name: string; file_size: number } }).message;
    expect(file).toMatchObject({ file_name: 'slow.txt', file_size: content.length });
    const stopped = Date.now();
    expect(await api.stop()).toBe(0);
    expect(Date.now() - stopped).toBeLessThan(5000);
    const stored = await t.call('GET', '/api/resource/File', { query: { filters: JSON.stringify([['file_name', '=', 'slow.txt']]) } });
    expect((stored.body as { data: unknown[] }).data).toHaveLength(1);
  });
});
