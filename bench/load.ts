import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

/**
 * One load measurement, the same way for every side of a benchmark: wrk when it is installed (a C
 * load generator: little CPU taken from the servers on a two-core machine; `apt-get install wrk`),
 * else autocannon. Paths rotate through `paths` (random pick per request) so a GET by name is not
 * one cached row.
 */
export interface LoadOptions {
  /** Origin, e.g. http://127.0.0.1:8000 */
  origin: string;
  /** Request paths, one picked at random per request. */
  paths: readonly string[];
  headers?: Record<string, string>;
  /** Header sets, one picked at random per request (over `headers`): e.g. one Host per tenant. */
  headerSets?: readonly Record<string, string>[];
  /** GET by default; with `body`, e.g. POST or PUT of a JSON document (the same body every request). */
  method?: 'GET' | 'POST' | 'PUT';
  body?: string;
  seconds: number;
  connections: number;
  threads?: number;
}

export interface LoadResult {
  rps: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  errors: number;
}

let wrkPath: string | null | undefined;

export function loadGenerator(): 'wrk' | 'autocannon' {
  if (wrkPath === undefined) {
    try {
      wrkPath = execFileSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).trim() || null;
    } catch {
      wrkPath = null;
    }
  }
  return wrkPath ? 'wrk' : 'autocannon';
}

export function measure(options: LoadOptions): Promise<LoadResult> {
  return loadGenerator() === 'wrk' ? withWrk(options) : withAutocannon(options);
}

function luaString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

async function withWrk(o: LoadOptions): Promise<LoadResult> {
  const wrk = wrkPath ?? 'wrk';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-wrk-'));
  const script = path.join(dir, 'paths.lua');
  fs.writeFileSync(
    script,
    [
      `local paths = {${o.paths.map(luaString).join(',')}}`,
      ...Object.entries(o.headers ?? {}).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`),
      `local method, body = ${luaString(o.method ?? 'GET')}, ${o.body === undefined ? 'nil' : luaString(o.body)}`,
      // wrk.format takes the whole header table, so each set carries `headers` too.
      `local sets = {${(o.headerSets ?? [])
        .map(
          (set) =>
            `{${Object.entries({ ...o.headers, ...set })
              .map(([k, v]) => `[${luaString(k)}] = ${luaString(v)}`)
              .join(', ')}}`,
        )
        .join(',\n')}}`,
      // Each thread's Lua state starts from the same seed: seed them apart, and apart from the last run.
      'local threads = 0',
      'setup = function(thread) threads = threads + 1; thread:set("seed", os.time() * 64 + threads) end',
      'init = function() math.randomseed(seed) end',
      'request = function()',
      '  local headers = nil',
      '  if #sets > 0 then headers = sets[math.random(#sets)] end',
      '  return wrk.format(method, paths[math.random(#paths)], headers, body)',
      'end',
    ].join('\n'),
  );
  const args = [`-t${o.threads ?? 2}`, `-c${o.connections}`, `-d${o.seconds}s`, '--latency', '-s', script, o.origin];
  const out = await new Promise<string>((resolve, reject) =>
    execFile(wrk, args, { maxBuffer: 1 << 20 }, (err, stdout) => {
      if (err) reject(new Error(`wrk failed: ${err.message}`));
      else resolve(stdout);
    }),
  );
  fs.rmSync(dir, { recursive: true, force: true });
  const number = (re: RegExp): number => Number(re.exec(out)?.[1] ?? NaN);
  const latency = (pct: string): number => {
    const m = new RegExp(`^\\s*${pct}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(out);
    if (!m) return NaN;
    const v = Number(m[1]);
    return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
  };
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = number(/Non-2xx or 3xx responses: (\d+)/) || 0;
  return {
    rps: number(/Requests\/sec:\s+([\d.]+)/),
    p50: latency('50'),
    p99: latency('99'),
    errors: errors + (socketErrors ? socketErrors.slice(1).reduce((s, x) => s + Number(x), 0) : 0),
  };
}

async function withAutocannon(o: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: o.origin,
    connections: o.connections,
    duration: o.seconds,
    headers: o.headers ?? {},
    method: o.method ?? 'GET',
    ...(o.body === undefined ? {} : { body: o.body }),
    requests: [
      {
        setupRequest: (req) => {
          const set = o.headerSets?.[Math.floor(Math.random() * o.headerSets.length)];
          return { ...req, path: o.paths[Math.floor(Math.random() * o.paths.length)] ?? '/', ...(set ? { headers: { ...req.headers, ...set } } : {}) };
        },
      },
    ],
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after "pid (comm) ".
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
