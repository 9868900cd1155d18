import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  server: http.Server;
  /** The port bound (the one asked for, or the free one picked for 0). */
  port: number;
  /** Stops accepting, closes idle keep-alive connections, and resolves when in-flight requests are done. */
  close(): Promise<void>;
}

export interface ListenOptions {
  port: number;
  /** Unset listens on every address, IPv4 and IPv6. */
  host?: string | undefined;
}

/** Serves `handler` (an express app or a plain listener) on a port; how every Quire process listens. */
export async function listen(handler: http.RequestListener, options: ListenOptions): Promise<Listening> {
  const server = http.createServer(handler);
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
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
