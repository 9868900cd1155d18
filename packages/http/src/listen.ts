import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  server: http.Server;
  /** The port bound (the one asked for, or the free one picked for 0). */
  port: number;
  /**
   * Stops accepting, answers `Connection: close` on keep-alive connections from now on, closes idle
   * ones, and resolves when in-flight requests are done (a request whose body is still arriving is
   * served to the end) or, after `timeoutMs`, cuts what is left.
   */
  close(timeoutMs?: number): Promise<void>;
}

export interface ListenOptions {
  port: number;
  /** Unset listens on every address, IPv4 and IPv6. */
  host?: string | undefined;
}

/** How long `close()` waits for in-flight requests unless told otherwise. */
const DEFAULT_DRAIN_MS = 20_000;

/**
 * Serves `handler` (an express app or a plain listener) on a port; how every Quire process listens.
 * Fails (rejects) when the port cannot be bound, so the process can exit at once.
 */
export async function listen(handler: http.RequestListener, options: ListenOptions): Promise<Listening> {
  let draining = false;
  /** Responses whose headers are not sent yet: told `Connection: close` when draining starts. */
  const unanswered = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    // A keep-alive client learns with this response that the connection ends, and reconnects elsewhere.
    if (draining) res.setHeader('Connection', 'close');
    else {
      unanswered.add(res);
      res.on('close', () => unanswered.delete(res)); // emitted once; `on` spares once()'s wrapper
    }
    handler(req, res);
  });
  // Longer than common load balancers' idle timeouts, so they close idle connections first.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  let closing: Promise<void> | undefined;
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: (timeoutMs = DEFAULT_DRAIN_MS) =>
      (closing ??= new Promise<void>((resolve) => {
        draining = true;
        for (const res of unanswered) if (!res.headersSent) res.setHeader('Connection', 'close');
        unanswered.clear();
        const deadline = setTimeout(() => server.closeAllConnections(), timeoutMs);
        // A connection whose response was already on its way goes idle later: close those as they do.
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        server.close(() => {
          clearTimeout(deadline);
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      })),
  };
}
