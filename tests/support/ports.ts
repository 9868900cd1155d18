import type { ChildProcess } from 'node:child_process';
import net from 'node:net';

/** A port free on 127.0.0.1 right now (for a child process that must be told its port). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Waits until `port` accepts connections, or `child` has exited (an error then). */
export async function waitForPort(port: number, exited: () => number | null, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (exited() !== null) throw new Error(`${what} exited (${exited()})`);
    if (await canConnect(port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not listen on ${port}`);
}

/** SIGTERM to a helper server (HAProxy, PgBouncer), resolved when it has exited. */
export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null) {
      resolve();
      return;
    }
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
