/**
 * One webhook HTTP request with the address guard applied where it cannot be bypassed: at connect time.
 *
 * Host names are resolved by our own `lookup` (every resolved address must pass `isBlockedAddress`) and
 * the socket connects to exactly the addresses that were checked, so a DNS answer that changes between
 * check and connect (rebinding) cannot sneak through. IP-literal hosts, for which Node skips `lookup`,
 * are checked before anything is opened. Redirects are never followed, the whole exchange has one
 * deadline, and only the first `maxResponseBytes` of the response body are kept.
 *
 * Connections are kept alive and reused per origin (one pool per allow list): a pooled socket stays
 * connected to the address that was checked when it was opened, so reuse cannot reach anything the
 * guard refused. A request whose reused socket turns out to have been closed by the receiver before
 * any answer (the usual keep-alive race) is sent once more on a new connection.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isBlockedAddress, type Cidr } from './net-guard';

export interface SendRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allow: readonly Cidr[];
  maxResponseBytes?: number;
}

export type SendResult =
  | {
      kind: 'response';
      status: number;
      headers: Record<string, string>;
      body: string;
      durationMs: number;
      address: string;
      /** Set when the body was cut at `maxResponseBytes`. */
      truncated?: boolean;
    }
  /** Blocked target, bad URL/scheme/header: nothing was sent. */
  | { kind: 'refused'; reason: string; durationMs: number }
  /** Network failure or timeout. */
  | { kind: 'error'; error: string; timedOut: boolean; durationMs: number };

export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

/** Raised from our `lookup` when a host name resolves to a blocked address. */
class BlockedAddressError extends Error {
  readonly code = 'EWEBHOOKBLOCKED';
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'BlockedAddressError';
  }
}

function guardedLookup(allow: readonly Cidr[]): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { all: true, family: options.family ?? 0, hints: options.hints ?? 0 }, (err, addresses) => {
      if (err) {
        callback(err, '');
        return;
      }
      const first = addresses[0];
      if (!first) {
        const notFound: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        notFound.code = 'ENOTFOUND';
        callback(notFound, '');
        return;
      }
      for (const a of addresses) {
        const check = isBlockedAddress(a.address, allow);
        if (check.blocked) {
          callback(new BlockedAddressError(`${hostname} resolves to ${check.reason ?? a.address}`), '');
          return;
        }
      }
      if (options.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as NodeJS.ErrnoException).code;
  return code && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
}

function flattenHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

interface Agents {
  http: http.Agent;
  https: https.Agent;
}

/** Keep-alive pools, one per allow list (a socket opened under one list is never lent to another). */
const pools = new Map<string, Agents>();

function agentsFor(allow: readonly Cidr[]): Agents {
  const key = allow.map((c) => c.text).join(',');
  let agents = pools.get(key);
  if (!agents) {
    // `timeout` closes a pooled socket idle this long (sooner when the receiver's Keep-Alive says so).
    const options = { keepAlive: true, keepAliveMsecs: 1000, maxFreeSockets: 64, timeout: 4000, scheduling: 'lifo' as const };
    agents = { http: new http.Agent(options), https: new https.Agent(options) };
    pools.set(key, agents);
  }
  return agents;
}

/** An error that, on a reused socket before any response, means the receiver had closed it while idle. */
function closedWhileIdle(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/** Sends one request; never throws and never follows redirects. */
export function send(req: SendRequest): Promise<SendResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const refused = (reason: string): Promise<SendResult> => Promise.resolve({ kind: 'refused', reason, durationMs: elapsed() });

  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return refused(`invalid URL "${req.url}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return refused(`unsupported URL scheme "${url.protocol}"`);
  const host = url.hostname.startsWith('[') && url.hostname.endsWith(']') ? url.hostname.slice(1, -1) : url.hostname;
  if (host === '') return refused(`URL has no host "${req.url}"`);
  if (isIP(host)) {
    const check = isBlockedAddress(host, req.allow);
    if (check.blocked) return refused(check.reason ?? `blocked address ${host}`);
  }
  if (!Number.isFinite(req.timeoutMs) || req.timeoutMs <= 0) return refused(`invalid timeout ${req.timeoutMs}`);
  const maxBytes = Math.max(0, req.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    const lower = name.toLowerCase();
    if (lower !== 'content-length' && lower !== 'transfer-encoding') headers[name] = value;
  }
  headers['Content-Length'] = String(Buffer.byteLength(req.body, 'utf8'));
  const https_ = url.protocol === 'https:';
  const agents = agentsFor(req.allow);

  return new Promise<SendResult>((resolve) => {
    let settled = false;
    let timedOut = false;
    let request: http.ClientRequest | undefined;
    const finish = (result: SendResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const failWith = (err: unknown): void => {
      if (timedOut) return;
      if (err instanceof BlockedAddressError) finish({ kind: 'refused', reason: err.reason, durationMs: elapsed() });
      else finish({ kind: 'error', error: describeError(err), timedOut: false, durationMs: elapsed() });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      finish({ kind: 'error', error: `timed out after ${req.timeoutMs} ms`, timedOut: true, durationMs: elapsed() });
      request?.destroy();
    }, req.timeoutMs);

    const options: http.RequestOptions = {
      protocol: url.protocol,
      hostname: host,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: req.method,
      headers,
      lookup: guardedLookup(req.allow),
    };
    if (url.username !== '' || url.password !== '') {
      options.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    }

    /** One exchange; `pooled` false opens a connection of its own (the resend after a stale socket). */
    const attempt = (pooled: boolean): void => {
      let responded = false;
      try {
        const agent = pooled ? (https_ ? agents.https : agents.http) : false;
        request = (https_ ? https : http).request({ ...options, agent });
      } catch (err) {
        // Invalid method or header (e.g. a newline in a value): Node refuses before opening anything.
        finish({ kind: 'refused', reason: `invalid request: ${describeError(err)}`, durationMs: elapsed() });
        return;
      }
      const sent = request;
      sent.on('error', (err) => {
        if (settled) return;
        if (pooled && sent.reusedSocket && !responded && closedWhileIdle(err)) attempt(false);
        else failWith(err);
      });
      sent.on('response', (res) => {
        responded = true;
        const address = res.socket.remoteAddress ?? host;
        const chunks: Buffer[] = [];
        let size = 0;
        const done = (truncated: boolean): void => {
          const result: SendResult = {
            kind: 'response',
            status: res.statusCode ?? 0,
            headers: flattenHeaders(res.headers),
            body: Buffer.concat(chunks, size).toString('utf8'),
            durationMs: elapsed(),
            address,
          };
          if (truncated) result.truncated = true;
          finish(result);
        };
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          if (size + chunk.length > maxBytes) {
            chunks.push(chunk.subarray(0, maxBytes - size));
            size = maxBytes;
            done(true);
            res.destroy();
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () => done(false));
        res.on('error', failWith);
        res.on('close', () => {
          if (!settled) failWith(new Error('connection closed before the response was complete'));
        });
      });
      sent.end(req.body, 'utf8');
    };
    attempt(true);
  });
}
