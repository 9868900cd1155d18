import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A real local HTTP server that records what webhooks send it and answers as told. */
export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Responder = (req: Received, index: number) => { status: number; headers?: Record<string, string>; body?: string; delayMs?: number };

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Changes how the receiver answers from now on. */
  respond(responder: Responder): void;
  /** Waits until `count` requests (optionally matching) have arrived. */
  waitFor(count: number, ms?: number, match?: (r: Received) => boolean): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(responder: Responder = () => ({ status: 200, body: 'ok' })): Promise<Receiver> {
  const received: Received[] = [];
  let answer = responder;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(r);
      const a = answer(r, received.length - 1);
      const reply = () => {
        res.writeHead(a.status, a.headers ?? {});
        res.end(a.body ?? '');
      };
      if (a.delayMs) setTimeout(reply, a.delayMs);
      else reply();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    respond: (r) => void (answer = r),
    async waitFor(count, ms = 15_000, match = () => true) {
      const started = Date.now();
      for (;;) {
        const hits = received.filter(match);
        if (hits.length >= count) return hits;
        if (Date.now() - started > ms) throw new Error(`received ${hits.length} of ${count} webhook requests in ${ms} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
