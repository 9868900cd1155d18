// `k6/http` for the Node runner: http.asyncRequest over node:http/https with keep-alive agents
// (one connection pool for every VU: k6 keeps one per VU), k6's timings (blocked, connecting,
// tls_handshaking, sending, waiting, receiving; duration = sending + waiting + receiving), its
// built-in HTTP metrics and tags (method, url, name, status, expected_response, scenario, the
// request's tags), expectedStatuses/setResponseCallback, and its error codes for network errors.
// Synchronous requests cannot exist on one event loop: they throw, naming asyncRequest.
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { current, testState, type IterationContext } from '../engine/context';
import { durationMs } from '../engine/duration';
import { registry, type Tags } from '../engine/metrics';
import { addRequest } from '../engine/window';

export interface ExpectedStatuses {
  readonly expected: (status: number) => boolean;
}

export interface Params {
  headers?: Record<string, string>;
  tags?: Record<string, string>;
  timeout?: string | number;
  responseType?: 'text' | 'binary' | 'none';
  responseCallback?: ExpectedStatuses | null;
}

export interface Timings {
  blocked: number;
  connecting: number;
  tls_handshaking: number;
  sending: number;
  waiting: number;
  receiving: number;
  duration: number;
}

export interface Response {
  status: number;
  status_text: string;
  body: string | ArrayBuffer | null;
  headers: Record<string, string>;
  error: string;
  error_code: number;
  url: string;
  proto: string;
  remote_ip: string;
  remote_port: number;
  timings: Timings;
  request: { method: string; url: string; headers: Record<string, string[]>; body: string };
  json(selector?: string): unknown;
}

export type RequestBody = string | ArrayBuffer | Record<string, string> | null | undefined;

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: Infinity, scheduling: 'lifo' }),
  https: new https.Agent({ keepAlive: true, maxSockets: Infinity, scheduling: 'lifo' }),
};

let defaultCallback: ExpectedStatuses | null = expectedStatuses({ min: 200, max: 399 });

/** k6's http.expectedStatuses(200, 404, {min: 200, max: 299}). */
export function expectedStatuses(...statuses: (number | { min: number; max: number })[]): ExpectedStatuses {
  return {
    expected: (status) => statuses.some((s) => (typeof s === 'number' ? s === status : status >= s.min && status <= s.max)),
  };
}

/** k6's http.setResponseCallback: the default for requests that set none (null: every response is expected). */
export function setResponseCallback(callback: ExpectedStatuses | null): void {
  defaultCallback = callback;
}

/** Go's canonical header key (`content-type` → `Content-Type`), as k6 presents response headers. */
function canonical(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m: string, dash: string, c: string) => dash + c.toUpperCase());
}

/** k6's error codes for what went wrong below HTTP. */
function errorCode(err: NodeJS.ErrnoException): number {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 1212;
    case 'ECONNRESET':
    case 'EPIPE':
      return 1220;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 1101;
    case 'ETIMEDOUT':
      return 1211;
    case 'ERR_INVALID_URL':
      return 1020;
    case 'QUIRE_TIMEOUT':
      return 1050;
    default:
      return err.code?.startsWith('ERR_TLS') || err.code?.startsWith('CERT_') ? 1300 : 1000;
  }
}

function encodeBody(body: RequestBody, headers: Record<string, string>): Buffer | undefined {
  if (body === null || body === undefined) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  // An object is sent as a form, as k6 does.
  if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/x-www-form-urlencoded';
  return Buffer.from(
    Object.entries(body)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
      .join('&'),
  );
}

/** The samples of one response, tagged with the iteration that sent it (events may fire in another's context). */
function record(ctx: IterationContext | undefined, res: Response, method: string, params: Params, expected: boolean): void {
  if (ctx?.interrupted) return;
  const tags: Tags = {
    ...(ctx?.tags ?? {}),
    method,
    url: res.url,
    name: params.tags?.name ?? res.url,
    status: String(res.status),
    proto: res.proto,
    expected_response: String(expected),
    ...(res.error_code ? { error_code: String(res.error_code) } : {}),
    ...(params.tags ?? {}),
  };
  const t = res.timings;
  registry.add('http_reqs', 1, tags);
  registry.add('http_req_duration', t.duration, tags);
  registry.add('http_req_blocked', t.blocked, tags);
  registry.add('http_req_connecting', t.connecting, tags);
  registry.add('http_req_tls_handshaking', t.tls_handshaking, tags);
  registry.add('http_req_sending', t.sending, tags);
  registry.add('http_req_waiting', t.waiting, tags);
  registry.add('http_req_receiving', t.receiving, tags);
  registry.add('http_req_failed', expected ? 0 : 1, tags);
  addRequest(t.duration, !expected);
}

function recordBytes(ctx: IterationContext | undefined, sent: number, received: number): void {
  if (ctx?.interrupted) return;
  const tags = ctx?.tags ?? {};
  if (sent > 0) registry.add('data_sent', sent, tags);
  if (received > 0) registry.add('data_received', received, tags);
}

/** http.asyncRequest(method, url, body, params): resolves with the response, never rejects on HTTP or network errors. */
export function asyncRequest(method: string, url: string, body?: RequestBody, params?: Params | null): Promise<Response> {
  const p: Params = params ?? {};
  const ctx = current();
  const upper = method.toUpperCase();
  const headers: Record<string, string> = { ...(p.headers ?? {}) };
  const userAgent = testState.options.userAgent;
  if (typeof userAgent === 'string' && !Object.keys(headers).some((h) => h.toLowerCase() === 'user-agent')) headers['User-Agent'] = userAgent;
  const payload = encodeBody(body, headers);
  if (payload) headers['Content-Length'] = String(payload.length);
  const callback = p.responseCallback === undefined ? defaultCallback : p.responseCallback;
  const timeoutMs = durationMs(p.timeout, 60_000);
  const requestHeaders = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]]));

  return new Promise<Response>((resolve) => {
    const t0 = performance.now();
    let tSocket = t0;
    let tConnected = t0;
    let tTls = 0;
    let tSent = 0;
    let tResponse = 0;
    let socket: Socket | undefined;
    let written0 = 0;
    let read0 = 0;
    let done = false;
    // Set below, once the request exists; read by respond() and onAbort().
    const pending: { timer?: NodeJS.Timeout; req?: http.ClientRequest } = {};
    function onAbort(): void {
      pending.req?.destroy(Object.assign(new Error('iteration interrupted'), { code: 'QUIRE_INTERRUPTED' }));
    }

    const respond = (partial: Partial<Response> & { status: number }, chunks: Buffer[] = []): void => {
      if (done) return;
      done = true;
      clearTimeout(pending.timer);
      ctx?.signal.removeEventListener('abort', onAbort);
      const tEnd = performance.now();
      const sentAt = tSent || tEnd;
      const respondedAt = tResponse || tEnd;
      const connectedAt = Math.max(tConnected, tTls);
      const timings: Timings = {
        blocked: tSocket - t0,
        connecting: tConnected - tSocket,
        tls_handshaking: tTls ? tTls - tConnected : 0,
        sending: Math.max(0, sentAt - connectedAt),
        waiting: Math.max(0, respondedAt - sentAt),
        receiving: tResponse ? tEnd - tResponse : 0,
        duration: 0,
      };
      timings.duration = timings.sending + timings.waiting + timings.receiving;
      const buffer = Buffer.concat(chunks);
      const text =
        p.responseType === 'none'
          ? null
          : p.responseType === 'binary'
            ? buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.length)
            : buffer.toString('utf8');
      const res: Response = {
        status: partial.status,
        status_text: partial.status_text ?? '',
        body: partial.status === 0 ? null : text,
        headers: partial.headers ?? {},
        error: partial.error ?? '',
        error_code: partial.error_code ?? (partial.status >= 400 ? 1000 + partial.status : 0),
        url,
        proto: 'HTTP/1.1',
        remote_ip: socket?.remoteAddress ?? '',
        remote_port: socket?.remotePort ?? 0,
        timings,
        request: { method: upper, url, headers: requestHeaders, body: payload?.toString('utf8') ?? '' },
        json(selector?: string) {
          if (selector !== undefined) throw new Error('response.json(selector) is not supported by the Node runner');
          if (typeof res.body !== 'string') throw new Error('the response has no text body');
          return JSON.parse(res.body) as unknown;
        },
      };
      if (socket) recordBytes(ctx, socket.bytesWritten - written0, socket.bytesRead - read0);
      const expected = callback === null ? true : res.status !== 0 && callback.expected(res.status);
      record(ctx, res, upper, p, expected);
      resolve(res);
    };

    const fail = (err: NodeJS.ErrnoException): void => respond({ status: 0, error: err.message, error_code: errorCode(err) });

    let target: URL;
    try {
      target = new URL(url);
    } catch (e) {
      fail(Object.assign(new Error(`invalid URL ${url}: ${String(e)}`), { code: 'ERR_INVALID_URL' }));
      return;
    }
    const secure = target.protocol === 'https:';
    const req = (secure ? https : http).request({
      method: upper,
      protocol: target.protocol,
      hostname: target.hostname.replace(/^\[|\]$/g, ''),
      port: target.port || (secure ? 443 : 80),
      path: `${target.pathname}${target.search}`,
      headers,
      agent: secure ? agents.https : agents.http,
      ...(secure && testState.options.insecureSkipTLSVerify === true ? { rejectUnauthorized: false } : {}),
    });
    pending.req = req;
    pending.timer = setTimeout(() => {
      req.destroy(Object.assign(new Error(`request timeout after ${timeoutMs}ms`), { code: 'QUIRE_TIMEOUT' }));
    }, timeoutMs);
    if (ctx?.signal.aborted) onAbort();
    else ctx?.signal.addEventListener('abort', onAbort, { once: true });

    req.on('socket', (s: Socket) => {
      socket = s;
      tSocket = performance.now();
      tConnected = tSocket;
      written0 = s.bytesWritten;
      read0 = s.bytesRead;
      if (s.connecting) {
        s.once('connect', () => (tConnected = performance.now()));
        if (secure) s.once('secureConnect', () => (tTls = performance.now()));
      }
    });
    req.on('finish', () => (tSent = performance.now()));
    req.on('error', fail);
    req.on('response', (res: http.IncomingMessage) => {
      tResponse = performance.now();
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', fail);
      res.on('end', () => {
        const headersOut: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headersOut[canonical(k)] = Array.isArray(v) ? v.join(', ') : v;
        respond({ status: res.statusCode ?? 0, status_text: `${res.statusCode ?? 0} ${res.statusMessage ?? ''}`, headers: headersOut }, chunks);
      });
    });
    req.end(payload);
  });
}

function synchronous(name: string): never {
  throw new Error(`http.${name}() is synchronous, which the Node runner cannot do on one event loop: use \`await http.asyncRequest(...)\``);
}

export const request = (): never => synchronous('request');
export const get = (): never => synchronous('get');
export const post = (): never => synchronous('post');
export const put = (): never => synchronous('put');
export const patch = (): never => synchronous('patch');
export const del = (): never => synchronous('del');
export const head = (): never => synchronous('head');
export const options = (): never => synchronous('options');
export const batch = (): never => synchronous('batch');

/** Closes idle keep-alive connections (the runner, at the end). */
export function closeConnections(): void {
  agents.http.destroy();
  agents.https.destroy();
}

export default {
  asyncRequest,
  expectedStatuses,
  setResponseCallback,
  request,
  get,
  post,
  put,
  patch,
  del,
  head,
  options,
  batch,
};
