import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, stopChild, waitForPort } from './ports';

/**
 * Debian's HAProxy as the load balancer in front of API processes, health-checking each one's
 * `/readyz` on its operations port, as a Kubernetes Service with readiness probes would route.
 */
export interface Backend {
  /** The API's main port. */
  port: number;
  /** Its operations port (/readyz). */
  opsPort: number;
}

export interface HaProxy {
  port: number;
  stop(): Promise<void>;
}

const BINARY = process.env.HAPROXY_BIN ?? '/usr/sbin/haproxy';

export async function startHaProxy(backends: readonly Backend[], options: { checkIntervalMs?: number } = {}): Promise<HaProxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-haproxy-'));
  const port = await freePort();
  const inter = options.checkIntervalMs ?? 200;
  const config = [
    'global',
    '  maxconn 2000',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    // Without it a check times out after `inter` (200 ms): on a loaded machine a slow but healthy
    // /readyz would mark every server down at once and HAProxy itself would answer 503.
    '  timeout check 2s',
    '  option http-keep-alive',
    '  http-reuse safe',
    // A connection refused before the request went out is retried on another server: safe for any method.
    '  retries 3',
    '  option redispatch',
    '  retry-on conn-failure',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    '  default_backend quire',
    'backend quire',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    ...backends.map((b, i) => `  server api${i} 127.0.0.1:${b.port} check port ${b.opsPort} inter ${inter} fall 2 rise 2`),
    '',
  ].join('\n');
  const file = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(file, config);
  const child: ChildProcess = spawn(BINARY, ['-db', '-f', file], { stdio: 'ignore' });
  await waitForPort(port, () => child.exitCode, `haproxy with config:\n${config}\n`);
  return {
    port,
    stop: () => stopChild(child),
  };
}
