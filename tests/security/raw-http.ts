import net from 'node:net';

/**
 * HTTP/1.1 over a plain socket, for requests a client library would refuse to send (a Host with
 * `@`, a NUL in a multipart header, a body cut short) and to see exactly what comes back, or that
 * nothing does. Every request asks for `Connection: close`, so the answer is whatever arrives
 * before the server closes.
 */

export interface RawResponse {
  /** 0 when no status line arrived (nothing answered before the timeout or the close). */
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: string;
  /** The server neither answered nor closed within the timeout. */
  timedOut: boolean;
  /** Milliseconds until the answer was complete (or the timeout). */
  ms: number;
}

export interface RawRequest {
  method?: string;
  path: string;
  host?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Declare this length instead of the body's own (a body cut short). */
  contentLength?: number;
  timeoutMs?: number;
}

/** The bytes of a request: request line, headers (Host first, Connection: close last), body. */
export function requestBytes(r: RawRequest): Buffer {
  const body = r.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body, 'utf8');
  const lines = [`${r.method ?? 'GET'} ${r.path} HTTP/1.1`];
  if (r.host !== undefined) lines.push(`Host: ${r.host}`);
  for (const [name, value] of Object.entries(r.headers ?? {})) lines.push(`${name}: ${value}`);
  if (r.body !== undefined || r.contentLength !== undefined) lines.push(`Content-Length: ${r.contentLength ?? body.length}`);
  lines.push('Connection: close');
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}

export function rawHttp(port: number, request: RawRequest | Buffer, timeoutMs = 5000): Promise<RawResponse> {
  const bytes = Buffer.isBuffer(request) ? request : requestBytes(request);
  const limit = Buffer.isBuffer(request) ? timeoutMs : (request.timeoutMs ?? timeoutMs);
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (timedOut: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parse(Buffer.concat(chunks)), timedOut, ms: performance.now() - started });
    };
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    const timer = setTimeout(() => finish(true), limit);
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (complete(Buffer.concat(chunks))) finish(false);
    });
    socket.on('end', () => finish(false));
    socket.on('close', () => finish(false));
    socket.on('error', () => finish(false));
  });
}

function split(raw: Buffer): { head: string; body: Buffer } | undefined {
  const end = raw.indexOf('\r\n\r\n');
  return end === -1 ? undefined : { head: raw.subarray(0, end).toString('latin1'), body: raw.subarray(end + 4) };
}

function headersOf(head: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return headers;
}

/** Whether a whole answer has arrived (by Content-Length or the chunked terminator). */
function complete(raw: Buffer): boolean {
  const parts = split(raw);
  if (!parts) return false;
  const headers = headersOf(parts.head);
  if (headers['transfer-encoding']?.includes('chunked')) return parts.body.includes('0\r\n\r\n');
  const length = Number(headers['content-length'] ?? NaN);
  return Number.isFinite(length) && parts.body.length >= length;
}

function dechunk(body: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd === -1) break;
    const size = Number.parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(out);
}

function parse(raw: Buffer): Omit<RawResponse, 'timedOut' | 'ms'> {
  const parts = split(raw);
  if (!parts) return { status: 0, headers: {}, body: '' };
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(parts.head)?.[1] ?? 0);
  const headers = headersOf(parts.head);
  const body = headers['transfer-encoding']?.includes('chunked') ? dechunk(parts.body) : parts.body;
  return { status, headers, body: body.toString('utf8') };
}
