// `npm run load -- <script> [options]`: runs one of the k6 scripts (or any k6 script written with
// http.asyncRequest) without k6. `k6`, `k6/http`, `k6/metrics`, `k6/execution` and `k6/encoding`
// resolve to shims (hooks.mjs); the script's `options.scenarios` run on k6's executors, its
// thresholds are evaluated as k6 evaluates them, the summary is k6's, and so is the exit code
// (99 when a threshold failed). Without BASE it first starts a local stack of several processes
// (stack/local-stack.ts) and removes it at the end, also on Ctrl-C and on failure.
import fs from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { current, currentEnv } from './engine/context';
import { registry } from './engine/metrics';
import { ConfigError, EXIT, runTest, type ScriptModule } from './engine/run-test';
import { closeConnections } from './k6/http';
import { ROOT, startLocalStack, type LocalStack } from './stack/local-stack';

const SCRIPTS = ['read-mix', 'writes', 'methods', 'oauth', 'day', 'fairness'];

const USAGE = `npm run load -- <script> [options]

  <script>             ${SCRIPTS.join(' | ')} (load-tests/<script>.ts), or the path of a k6 script
  -p, --profile NAME   smoke (default) | ci | capacity | soak
  -e, --env KEY=VALUE  a variable for the script's __ENV, as k6's -e (repeatable)
  --base URL           load a running deployment (with -e TENANTS_FILE=…) instead of a local stack
  --tenants N          tenants in the local stack (default 8)
  --apis N             API processes in the local stack (default 2)
  --no-haproxy         no HAProxy in front: the scripts round-robin over the API ports
  --webhooks           also run a webhooks process (when Redis answers on 127.0.0.1:6379)
  --quiet              no progress lines
  -h, --help

Exit code: 0 when every threshold held, 99 when one failed (as k6), 104 invalid options,
105 interrupted, 107 a script error, 1 when the local stack could not start.`;

function fail(message: string, code: number): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

const { values: args, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        profile: { type: 'string', short: 'p' },
        env: { type: 'string', short: 'e', multiple: true },
        base: { type: 'string' },
        tenants: { type: 'string' },
        apis: { type: 'string' },
        'no-haproxy': { type: 'boolean' },
        webhooks: { type: 'boolean' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    return fail(`${(e as Error).message}\n\n${USAGE}`, 2);
  }
})();

const scriptArg = positionals[0];
if (args.help || !scriptArg) fail(USAGE, args.help ? 0 : 2);
const scriptFile = SCRIPTS.includes(scriptArg) ? path.join(ROOT, 'load-tests', `${scriptArg}.ts`) : path.resolve(scriptArg);
if (!fs.existsSync(scriptFile)) fail(`no script ${scriptArg} (${scriptFile})\n\n${USAGE}`, 2);
const scriptName = path.basename(scriptFile).replace(/\.[cm]?[jt]s$/, '');

const flags: Record<string, string> = {};
for (const kv of args.env ?? []) {
  const i = kv.indexOf('=');
  if (i <= 0) fail(`-e ${kv}: expected KEY=VALUE`, 2);
  flags[kv.slice(0, i)] = kv.slice(i + 1);
}
const systemEnv = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => typeof e[1] === 'string'));
const base = args.base ?? flags.BASE ?? systemEnv.BASE;
const positive = (v: string | undefined, d: number): number => {
  const n = Number(v ?? d);
  return Number.isInteger(n) && n > 0 ? n : fail(`expected a positive whole number, got ${v}`, 2);
};

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const interrupt = new AbortController();
let stack: LocalStack | undefined;
let stopping: Promise<void> | undefined;
const stopStack = (): Promise<void> => (stopping ??= stack ? stack.stop() : Promise.resolve());
let signals = 0;
const onSignal = (signal: NodeJS.Signals): void => {
  signals++;
  if (signals === 1) {
    log(`${signal}: stopping the test (teardown and summary still run); again to stop at once`);
    interrupt.abort();
  } else {
    log(`${signal} again: stopping now`);
    void stopStack().finally(() => process.exit(EXIT.interrupted));
  }
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
const crash = (e: unknown): void => {
  log(`load runner failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  void stopStack().finally(() => process.exit(1));
};
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);

async function main(): Promise<number> {
  const env: Record<string, string> = { ...systemEnv, PWD: process.cwd(), QUIRE_LOAD_RUNNER: 'node' };
  if (args.profile) env.PROFILE = args.profile;
  if (base === undefined) {
    try {
      stack = await startLocalStack({
        tenants: positive(args.tenants, 8),
        apis: positive(args.apis, 2),
        haproxy: !args['no-haproxy'],
        webhooks: args.webhooks === true,
        adminUrl: process.env.QUIRE_LOAD_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
        log,
      });
    } catch (e) {
      log(`the local stack did not start: ${e instanceof Error ? e.message : String(e)}`);
      return 1;
    }
    if (interrupt.signal.aborted) return EXIT.interrupted;
    Object.assign(env, {
      BASE: stack.bases.join(','),
      AUTH_BASE: stack.authBases.join(','),
      TENANTS_FILE: stack.tenantsFile,
      // A full list page needs 30 ToDos (2 in 3 are Open); 100 keeps setup() short.
      SEED_TODOS: '100',
      // The fairness script's flooding tenant: 2,000 fill its heavy list's 500 rows (1,271 have a 1
      // in their description) and already flood two API processes here, in 3 s of setup (the
      // bench's 30,000 take 12 s; -e FLOOD_TODOS=30000 for them).
      FLOOD_TODOS: '2000',
      RUN_ABOUT: stack.about,
    });
  } else env.BASE = base;
  Object.assign(env, flags);
  if (!env.PROFILE) env.PROFILE = 'smoke';

  // What k6 puts in the global scope, answering for the iteration that asks.
  Object.defineProperties(globalThis, {
    __ENV: { get: currentEnv, configurable: true },
    __VU: { get: () => current()?.vu.idInTest ?? 0, configurable: true },
    __ITER: { get: () => current()?.vu.iterationInInstance ?? 0, configurable: true },
    open: {
      value: (file: string, mode?: string): string | ArrayBuffer => {
        const buf = fs.readFileSync(file);
        return mode === 'b' ? buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length) : buf.toString('utf8');
      },
      configurable: true,
      writable: true,
    },
  });
  // k6 logs the script's console to stderr: stdout carries only the summary.
  console.log =
    console.info =
    console.debug =
      (...items: unknown[]) => {
        console.error(...items);
      };
  const { testState } = await import('./engine/context');
  testState.env = env;
  register('./hooks.mjs', import.meta.url);

  let mod: ScriptModule;
  try {
    mod = (await import(pathToFileURL(scriptFile).href)) as ScriptModule;
  } catch (e) {
    log(`${scriptName}: the script failed in its init context: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    return EXIT.scriptException;
  }
  log(`${scriptName}: profile ${env.PROFILE}, BASE ${env.BASE}`);
  try {
    const result = await runTest(mod, { registry, env, interrupt: interrupt.signal, progressEveryMs: args.quiet ? 0 : 5000, log });
    const delay = result.eventLoopDelay;
    log(
      `load generator event-loop delay: p50 ${delay.p50}ms, p99 ${delay.p99}ms, max ${delay.max}ms${delay.p99 > 20 ? ' (high: measured latencies include this client-side delay)' : ''}`,
    );
    log(
      result.exitCode === EXIT.ok
        ? `${scriptName}: every threshold held`
        : `${scriptName}: exit ${result.exitCode}${result.failedThresholds.length ? ` — failed: ${result.failedThresholds.join('; ')}` : ''}${result.stopped ? ` (${result.stopped})` : ''}`,
    );
    return result.exitCode;
  } catch (e) {
    if (e instanceof ConfigError) {
      log(`${scriptName}: ${e.message}`);
      return EXIT.invalidConfig;
    }
    throw e;
  }
}

let code: number;
try {
  code = await main();
} catch (e) {
  log(`load runner failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  code = 1;
} finally {
  closeConnections();
  await stopStack();
}
process.exit(code);
