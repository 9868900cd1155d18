import type { CommandResult } from '../output';

export interface PingOptions {
  url: string;
  /** The Host header (a tenant's host) when the URL names a Service or an address. */
  host?: string;
  timeoutMs: number;
}

/**
 * `quire ping --url http://quire-api:8000/api/method/ping --host acme.example.com`: the chart's
 * `helm test`, run with the image itself (no curl in it). Succeeds on 200 `{"message":"pong"}`.
 */
export async function ping(options: PingOptions): Promise<CommandResult> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (options.host) headers.Host = options.host;
  const res = await fetch(options.url, { headers, signal: AbortSignal.timeout(options.timeoutMs) });
  const body = (await res.json().catch(() => undefined)) as { message?: unknown } | undefined;
  if (res.status !== 200 || body?.message !== 'pong') {
    throw new Error(`${options.url} answered ${res.status}${body ? ` ${JSON.stringify(body).slice(0, 200)}` : ''}`);
  }
  return { json: { url: options.url, status: res.status, message: body.message }, text: `pong from ${options.url}` };
}
