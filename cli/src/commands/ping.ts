import http from 'node:http';
import https from 'node:https';
import type { CommandResult } from '../output';

export interface PingOptions {
  url: string;
  /** The Host header (a tenant's host) when the URL names a Service or an address. */
  host?: string;
  timeoutMs: number;
}

/** GET with an explicit Host header (fetch does not let a caller set Host). */
function get(url: URL, host: string | undefined, timeoutMs: number): Promise<{ status: number; body: string }> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(url, { headers: { Accept: 'application/json', ...(host ? { Host: host } : {}) }, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

/**
 * `quire ping --url http://quire-api:8000/api/method/ping --host acme.example.com`: the chart's
 * `helm test`, run with the image itself (no curl in it). Succeeds on 200 `{"message":"pong"}`.
 */
export async function ping(options: PingOptions): Promise<CommandResult> {
  const url = new URL(options.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--url must be http(s): ${options.url}`);
  const res = await get(url, options.host, options.timeoutMs);
  let message: unknown;
  try {
    message = (JSON.parse(res.body) as { message?: unknown }).message;
  } catch {
    message = undefined;
  }
  if (res.status !== 200 || message !== 'pong') throw new Error(`${options.url} answered ${res.status} ${res.body.slice(0, 200)}`);
  return { json: { url: options.url, status: res.status, message }, text: `pong from ${options.url}` };
}
