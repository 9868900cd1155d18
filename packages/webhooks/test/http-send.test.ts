import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_MAX_RESPONSE_BYTES, send, type SendRequest, type SendResult } from '../src/http-send';
import { parseCidrList } from '../src/net-guard';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void;

let server: http.Server;
let port = 0;
let received: Received[] = [];
let handler: Handler = (_req, res) => res.end('ok');
const openSockets = new Set<import('node:net').Socket>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders, body });
      handler(req, res, body);
    });
  });
  server.on('connection', (socket) => {
    openSockets.add(socket);
    socket.on('close', () => openSockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterEach(() => {
  received = [];
  handler = (_req, res) => res.end('ok');
  vi.restoreAllMocks();
  for (const socket of openSockets) socket.destroy();
});

afterAll(async () => {
  for (const socket of openSockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const LOCAL = parseCidrList('127.0.0.1/32');

function request(overrides: Partial<SendRequest> = {}): SendRequest {
  return {
    url: `http://127.0.0.1:${port}/hook`,
    method: 'POST',
    headers: {},
    body: '',
    timeoutMs: 5000,
    allow: LOCAL,
    ...overrides,
  };
}

function expectResponse(result: SendResult): Extract<SendResult, { kind: 'response' }> {
  expect(result.kind).toBe('response');
  return result as Extract<SendResult, { kind: 'response' }>;
}

function expectRefused(result: SendResult): string {
  expect(result.kind).toBe('refused');
  return (result as Extract<SendResult, { kind: 'refused' }>).reason;
}

describe('send: the address guard', () => {
  it('refuses loopback by default and sends nothing', async () => {
    const result = await send(request({ allow: [] }));
    expect(result).toEqual({ kind: 'refused', reason: 'loopback address 127.0.0.1', durationMs: expect.any(Number) });
    expect(received).toHaveLength(0);
  });

  it('connects when the address is allowed', async () => {
    const response = expectResponse(await send(request()));
    expect(response.status).toBe(200);
    expect(response.body).toBe('ok');
    expect(response.address).toBe('127.0.0.1');
    expect(received).toHaveLength(1);
  });

  it('refuses a host name that resolves to loopback (localhost)', async () => {
    const reason = expectRefused(await send(request({ url: `http://localhost:${port}/`, allow: [] })));
    expect(reason).toMatch(/^localhost resolves to loopback address (127\.0\.0\.1|::1)$/);
    expect(received).toHaveLength(0);
  });

  it.each([
    ['IPv6 loopback', () => `http://[::1]:${port}/`, 'loopback address ::1'],
    ['IPv4-mapped IPv6', () => `http://[::ffff:127.0.0.1]:${port}/`, 'loopback address 127.0.0.1 (as ::ffff:7f00:1)'],
    ['decimal IPv4', () => `http://2130706433:${port}/`, 'loopback address 127.0.0.1'],
    ['hex IPv4', () => `http://0x7f.1:${port}/`, 'loopback address 127.0.0.1'],
    ['unspecified', () => `http://0.0.0.0:${port}/`, 'unspecified address 0.0.0.0'],
    ['private', () => 'http://10.0.0.1/', 'private address 10.0.0.1'],
    ['https loopback', () => `https://127.0.0.1:${port}/`, 'loopback address 127.0.0.1'],
  ])('refuses %s', async (_label, url, reason) => {
    expect(expectRefused(await send(request({ url: url(), allow: [] })))).toBe(reason);
    expect(received).toHaveLength(0);
  });

  it('refuses the metadata address without opening a connection', async () => {
    const spy = vi.spyOn(http, 'request');
    const result = await send(request({ url: 'http://169.254.169.254/latest/meta-data/', allow: [] }));
    expect(expectRefused(result)).toBe('metadata address 169.254.169.254');
    expect(spy).not.toHaveBeenCalled();
    expect(result.durationMs).toBeLessThan(100);
  });

  it('refuses when any resolved address is blocked', async () => {
    const lookup = vi.spyOn(dns, 'lookup').mockImplementation(((
      _host: string,
      _options: dns.LookupAllOptions,
      callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
    ) => {
      callback(null, [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.7', family: 4 },
      ]);
    }) as unknown as typeof dns.lookup);
    const reason = expectRefused(await send(request({ url: 'http://mixed.example/', allow: [] })));
    expect(reason).toBe('mixed.example resolves to private address 10.0.0.7');
    expect(lookup).toHaveBeenCalled();
  });

  it('connects to the address it checked (one resolution, no second lookup)', async () => {
    const lookup = vi.spyOn(dns, 'lookup').mockImplementation(((
      _host: string,
      _options: dns.LookupAllOptions,
      callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
    ) => {
      callback(null, [{ address: '127.0.0.1', family: 4 }]);
    }) as unknown as typeof dns.lookup);
    const response = expectResponse(await send(request({ url: `http://hooks.example:${port}/x` })));
    expect(response.address).toBe('127.0.0.1');
    expect(lookup).toHaveBeenCalledTimes(1);
    expect(lookup.mock.calls[0]?.[0]).toBe('hooks.example');
    expect(received[0]?.headers.host).toBe(`hooks.example:${port}`);
  });

  it('reports a name that does not resolve as an error', async () => {
    vi.spyOn(dns, 'lookup').mockImplementation(((
      host: string,
      _options: dns.LookupAllOptions,
      callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
    ) => {
      const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${host}`);
      err.code = 'ENOTFOUND';
      callback(err, []);
    }) as unknown as typeof dns.lookup);
    const result = await send(request({ url: 'http://does-not-exist.invalid/' }));
    expect(result.kind).toBe('error');
    expect(result).toMatchObject({ timedOut: false, error: expect.stringMatching(/ENOTFOUND|EAI_AGAIN/) });
  });
});

describe('send: URLs and requests that are refused', () => {
  it.each([
    ['ftp://example.com/file', 'unsupported URL scheme "ftp:"'],
    ['file:///etc/passwd', 'unsupported URL scheme "file:"'],
    ['javascript:alert(1)', 'unsupported URL scheme "javascript:"'],
    ['gopher://127.0.0.1:25/', 'unsupported URL scheme "gopher:"'],
    ['not a url', 'invalid URL "not a url"'],
    ['', 'invalid URL ""'],
    ['http://', 'invalid URL "http://"'],
  ])('%j', async (url, reason) => {
    expect(expectRefused(await send(request({ url })))).toBe(reason);
  });

  it('refuses invalid headers and methods before sending', async () => {
    expect(expectRefused(await send(request({ headers: { 'X-Evil': 'a\r\nInjected: 1' } })))).toMatch(/^invalid request: /);
    expect(expectRefused(await send(request({ headers: { 'Bad Name': 'x' } })))).toMatch(/^invalid request: /);
    expect(expectRefused(await send(request({ method: 'PO ST' })))).toMatch(/^invalid request: /);
    expect(expectRefused(await send(request({ timeoutMs: 0 })))).toMatch(/^invalid timeout/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received).toHaveLength(0);
  });
});

describe('send: the request as it arrives', () => {
  it('delivers method, path, headers and body intact', async () => {
    const body = JSON.stringify({ name: 'SINV-0001', city: 'Zürich 🚀' });
    await send(
      request({
        url: `http://127.0.0.1:${port}/api/hook?x=1&y=%20z`,
        method: 'PUT',
        headers: { 'Content-Type': 'application/json', 'X-Frappe-Webhook-Signature': 'abc=', 'webhook-id': 'msg_1' },
        body,
      }),
    );
    expect(received).toHaveLength(1);
    const got = received[0] as Received;
    expect(got.method).toBe('PUT');
    expect(got.url).toBe('/api/hook?x=1&y=%20z');
    expect(got.body.toString('utf8')).toBe(body);
    expect(got.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['x-frappe-webhook-signature']).toBe('abc=');
    expect(got.headers['webhook-id']).toBe('msg_1');
    // Header names keep the caller's spelling; nothing but Host, Content-Length and Connection is added.
    const names = got.rawHeaders.filter((_, i) => i % 2 === 0);
    expect(names.sort()).toEqual(['Connection', 'Content-Length', 'Content-Type', 'Host', 'X-Frappe-Webhook-Signature', 'webhook-id'].sort());
  });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH', 'GET'])('sends %s', async (method) => {
    const response = expectResponse(await send(request({ method, body: method === 'GET' ? '' : 'x' })));
    expect(response.status).toBe(200);
    expect(received[0]?.method).toBe(method);
  });

  it('always sets Content-Length from the body, replacing a caller value', async () => {
    await send(request({ headers: { 'content-length': '999', 'Transfer-Encoding': 'chunked' }, body: 'héllo' }));
    expect(received[0]?.headers['content-length']).toBe('6');
    expect(received[0]?.headers['transfer-encoding']).toBeUndefined();
    expect(received[0]?.body.toString()).toBe('héllo');
    await send(request({ body: '' }));
    expect(received[1]?.headers['content-length']).toBe('0');
  });

  it('sends credentials from the URL as basic auth', async () => {
    await send(request({ url: `http://us%40er:p%3Ass@127.0.0.1:${port}/` }));
    expect(received[0]?.headers.authorization).toBe(`Basic ${Buffer.from('us@er:p:ss').toString('base64')}`);
  });
});

describe('send: responses', () => {
  it('returns status, headers and body', async () => {
    handler = (_req, res) => {
      res.setHeader('Set-Cookie', ['a=1', 'b=2']);
      res.setHeader('X-Reply', 'yes');
      res.setHeader('Retry-After', '120');
      res.writeHead(503);
      res.end('busy');
    };
    const response = expectResponse(await send(request()));
    expect(response.status).toBe(503);
    expect(response.body).toBe('busy');
    expect(response.headers['x-reply']).toBe('yes');
    expect(response.headers['retry-after']).toBe('120');
    expect(response.headers['set-cookie']).toBe('a=1, b=2');
    expect(response.truncated).toBeUndefined();
    expect(response.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('does not follow redirects', async () => {
    handler = (req, res) => {
      if (req.url === '/hook') {
        res.writeHead(302, { Location: `http://127.0.0.1:${port}/elsewhere` });
        res.end();
      } else res.end('followed');
    };
    const response = expectResponse(await send(request()));
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe(`http://127.0.0.1:${port}/elsewhere`);
    expect(received.map((r) => r.url)).toEqual(['/hook']);
  });

  it('truncates a large body to maxResponseBytes', async () => {
    handler = (_req, res) => res.end('a'.repeat(200_000));
    const response = expectResponse(await send(request({ maxResponseBytes: 1000 })));
    expect(response.status).toBe(200);
    expect(response.body).toBe('a'.repeat(1000));
    expect(response.truncated).toBe(true);
  });

  it('keeps 64 KiB by default', async () => {
    handler = (_req, res) => res.end('b'.repeat(DEFAULT_MAX_RESPONSE_BYTES + 10));
    const response = expectResponse(await send(request()));
    expect(response.body.length).toBe(DEFAULT_MAX_RESPONSE_BYTES);
    expect(response.truncated).toBe(true);
  });

  it('does not mark a body of exactly the limit as truncated', async () => {
    handler = (_req, res) => res.end('c'.repeat(500));
    const response = expectResponse(await send(request({ maxResponseBytes: 500 })));
    expect(response.body.length).toBe(500);
    expect(response.truncated).toBeUndefined();
  });

  it('stops reading a never-ending body at the limit', async () => {
    handler = (_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write('x'.repeat(1024)), 5);
      res.on('close', () => clearInterval(timer));
    };
    const response = expectResponse(await send(request({ maxResponseBytes: 4096, timeoutMs: 5000 })));
    expect(response.body.length).toBe(4096);
    expect(response.truncated).toBe(true);
  });
});

describe('send: failures', () => {
  it('times out when the receiver never answers', async () => {
    handler = () => {
      /* never respond */
    };
    const result = await send(request({ timeoutMs: 300 }));
    expect(result).toMatchObject({ kind: 'error', timedOut: true, error: 'timed out after 300 ms' });
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
    expect(result.durationMs).toBeLessThan(2000);
  });

  it('times out when the body stalls after the headers', async () => {
    handler = (_req, res) => {
      res.writeHead(200);
      res.write('partial');
    };
    const result = await send(request({ timeoutMs: 300 }));
    expect(result).toMatchObject({ kind: 'error', timedOut: true });
  });

  it('reports a refused connection', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const result = await send(request({ url: `http://127.0.0.1:${closedPort}/` }));
    expect(result).toMatchObject({ kind: 'error', timedOut: false, error: expect.stringContaining('ECONNREFUSED') });
  });

  it('reports a connection dropped mid-response', async () => {
    handler = (req, res) => {
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('only part');
      setTimeout(() => req.socket.destroy(), 20);
    };
    const result = await send(request());
    expect(result).toMatchObject({ kind: 'error', timedOut: false });
  });
});

describe('send: connections', () => {
  /** Closes the receiver's connections and lets the client's pool see it. */
  async function closedConnections(): Promise<void> {
    for (const socket of openSockets) socket.destroy();
    await new Promise((r) => setTimeout(r, 50));
  }

  it('keeps the connection to an origin alive and reuses it', async () => {
    await closedConnections();
    const connections = () => openSockets.size;
    expectResponse(await send(request()));
    expectResponse(await send(request({ url: `http://127.0.0.1:${port}/again` })));
    expect(received.map((r) => r.url)).toEqual(['/hook', '/again']);
    expect(connections()).toBe(1);
  });

  it('sends once more on a new connection when the receiver had closed the reused one', async () => {
    await closedConnections();
    expectResponse(await send(request())); // leaves a pooled connection
    let calls = 0;
    handler = (req, res) => {
      calls++;
      // The receiver drops the idle connection just as the next request arrives on it.
      if (calls === 1) req.socket.destroy();
      else res.end('second connection');
    };
    const response = expectResponse(await send(request({ url: `http://127.0.0.1:${port}/after-idle` })));
    expect(response.body).toBe('second connection');
    expect(received.filter((r) => r.url === '/after-idle')).toHaveLength(2);
  });

  it('does not send again when a new connection fails', async () => {
    await closedConnections();
    handler = (req) => req.socket.destroy();
    const result = await send(request({ url: `http://127.0.0.1:${port}/fresh` }));
    expect(result).toMatchObject({ kind: 'error', timedOut: false });
    expect(received.filter((r) => r.url === '/fresh')).toHaveLength(1);
  });

  it('never lends a connection opened under one allow list to a request under another', async () => {
    expectResponse(await send(request())); // pooled under 127.0.0.1/32
    const refused = await send(request({ allow: parseCidrList('10.0.0.0/8') }));
    expect(expectRefused(refused)).toBe('loopback address 127.0.0.1');
    const viaName = await send(request({ url: `http://localhost:${port}/`, allow: parseCidrList('10.0.0.0/8') }));
    expect(viaName.kind).toBe('refused');
    expect(received).toHaveLength(1);
  });
});
