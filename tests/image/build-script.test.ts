import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/process';

/**
 * scripts/build.mjs on a small repository of its own: TypeScript compiled to JavaScript that plain
 * Node runs (`./x` made `./x.js`, `./dir` made `./dir/index.js`, dynamic imports too), files read
 * at run time copied beside it, tests left out, and package exports that do not point the
 * `quire-dist` condition at the compiled file refused with a message saying what to write.
 */

const run = promisify(execFile);
const BUILD = path.join(ROOT, 'scripts/build.mjs');
const made: string[] = [];

afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

function write(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
}

const exportsOf = (dist: string, src: string) => ({ '.': { 'quire-dist': dist, default: src } });

/** A repository with a package (`src/`) and an app (no `src/`, DocType JSON beside its modules). */
function fixture(overrides: Record<string, string> = {}): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-build-'));
  made.push(root);
  write(root, {
    'package.json': JSON.stringify({ name: 'fixture', private: true, type: 'module', workspaces: ['packages/*', 'app'] }),
    'bin/run.mjs': '// copied with --out\n',
    'packages/lib/package.json': JSON.stringify({ name: 'lib', type: 'module', exports: exportsOf('./dist/index.js', './src/index.ts') }),
    'packages/lib/src/index.ts': [
      "import type { Shape } from './types';",
      "import { double } from './math';",
      "export * from './nested';",
      "export { triple } from './math';",
      'export const area = (s: Shape): number => double(s.side);',
      "export const later = async (): Promise<string> => (await import('./lazy')).word;",
    ].join('\n'),
    'packages/lib/src/types.ts': 'export interface Shape { side: number }\n',
    'packages/lib/src/math.ts': 'export const double = (n: number): number => n * 2;\nexport const triple = (n: number): number => n * 3;\n',
    'packages/lib/src/nested/index.ts': "export { greeting } from './greeting';\n",
    'packages/lib/src/nested/greeting.ts': [
      "import fs from 'node:fs';",
      "export const greeting = (): string => fs.readFileSync(new URL('./greeting.txt', import.meta.url), 'utf8').trim();",
    ].join('\n'),
    'packages/lib/src/nested/greeting.txt': 'hello from an asset\n',
    'packages/lib/src/lazy.ts': "export const word = 'lazy';\n",
    'packages/lib/src/math.test.ts': "throw new Error('tests are not built');\n",
    'packages/lib/test/lib.test.ts': "throw new Error('tests are not built');\n",
    'app/package.json': JSON.stringify({ name: 'app', type: 'module', exports: exportsOf('./dist/index.js', './index.ts') }),
    'app/tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2023', verbatimModuleSyntax: true, strict: true } }),
    'app/index.ts': "import { area } from 'lib';\nexport const root = import.meta.url;\nexport const size = area({ side: 4 });\n",
    'app/modules.txt': 'Things\n',
    'app/things/doctype/thing/thing.json': '{"name": "Thing"}\n',
    'app/things/doctype/thing/thing.ts': 'export const controller = {};\n',
    ...overrides,
  });
  fs.mkdirSync(path.join(root, 'node_modules'));
  fs.symlinkSync('../packages/lib', path.join(root, 'node_modules/lib'));
  fs.symlinkSync('../app', path.join(root, 'node_modules/app'));
  return root;
}

function filesUnder(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort();
}

async function build(root: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BUILD, '--root', root, ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('scripts/build.mjs', () => {
  it('compiles each workspace to JavaScript that plain node runs under the quire-dist condition', async () => {
    const root = fixture();
    const built = await build(root);
    expect(built).toMatchObject({ code: 0, stdout: expect.stringMatching(/^build: 11 files of 2 workspaces/) });
    expect(filesUnder(path.join(root, 'packages/lib/dist'))).toEqual([
      'index.js',
      'lazy.js',
      'math.js',
      'nested/greeting.js',
      'nested/greeting.txt',
      'nested/index.js',
      'types.js',
    ]);
    expect(filesUnder(path.join(root, 'app/dist'))).toEqual(['index.js', 'modules.txt', 'things/doctype/thing/thing.js', 'things/doctype/thing/thing.json']);
    const index = fs.readFileSync(path.join(root, 'packages/lib/dist/index.js'), 'utf8');
    expect(index).toContain('"./math.js"');
    expect(index).toContain('"./nested/index.js"');
    expect(index).toContain('import("./lazy.js")');
    expect(index).not.toContain('./types');

    const script =
      "const app = await import('app'); const lib = await import('lib'); console.log(JSON.stringify([app.root, app.size, lib.triple(2), lib.greeting(), await lib.later()]));";
    const { stdout } = await run(process.execPath, ['--conditions=quire-dist', '--input-type=module', '-e', script], { cwd: root });
    const [appRoot, ...values] = JSON.parse(stdout) as unknown[];
    expect(appRoot).toBe(`file://${fs.realpathSync(root)}/app/dist/index.js`);
    expect(values).toEqual([8, 6, 'hello from an asset', 'lazy']);
  });

  it('with --out, writes the manifests, bin/ and dist/ folders and no TypeScript; --manifests writes only the manifests', async () => {
    const root = fixture();
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-build-out-'));
    const manifests = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-build-manifests-'));
    made.push(out, manifests);
    expect((await build(root, '--out', out)).code).toBe(0);
    const files = filesUnder(out);
    expect(files).toContain('bin/run.mjs');
    expect(files).toContain('app/package.json');
    expect(files).toContain('packages/lib/dist/index.js');
    expect(files.filter((f) => f.endsWith('.ts'))).toEqual([]);
    expect(fs.existsSync(path.join(root, 'packages/lib/dist'))).toBe(false);

    expect((await build(root, '--manifests', manifests)).code).toBe(0);
    expect(filesUnder(manifests)).toEqual(['app/package.json', 'package.json', 'packages/lib/package.json']);
  });

  it('bundles a workspace with a vite.config.ts (a browser app) with Vite instead of transpiling it', async () => {
    const root = fixture();
    write(root, {
      'package.json': JSON.stringify({ name: 'fixture', private: true, type: 'module', workspaces: ['packages/*', 'app', 'web'] }),
      'web/package.json': JSON.stringify({ name: 'web', private: true, type: 'module' }),
      'web/vite.config.ts': "export default { base: '/assets/web/', build: { assetsDir: '' } };\n",
      'web/index.html': '<!doctype html><html><body><script type="module" src="/src/main.ts"></script></body></html>\n',
      'web/src/main.ts': "const label: string = 'bundled by vite';\ndocument.body.append(label);\n",
    });
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-build-out-'));
    made.push(out);
    expect((await build(root, '--out', out)).code).toBe(0);
    const files = filesUnder(path.join(out, 'web/dist'));
    expect(files).toContain('index.html');
    const bundle = files.find((f) => /^main-[\w-]+\.js$/.test(f) || /^index-[\w-]+\.js$/.test(f));
    expect(bundle).toBeDefined();
    expect(fs.readFileSync(path.join(out, 'web/dist/index.html'), 'utf8')).toContain(`/assets/web/${bundle!}`);
    expect(fs.readFileSync(path.join(out, 'web/dist', bundle!), 'utf8')).toContain('bundled by vite');
  });

  it('refuses an export without the quire-dist condition, saying what to write', async () => {
    const root = fixture({ 'packages/lib/package.json': JSON.stringify({ name: 'lib', type: 'module', exports: { '.': './src/index.ts' } }) });
    const built = await build(root);
    expect(built.code).toBe(1);
    expect(built.stderr).toContain('packages/lib/package.json: exports["."] must read { "quire-dist": "./dist/index.js", "default": "./src/index.ts" }');
  });

  it('refuses a relative import it cannot resolve, naming the file', async () => {
    const root = fixture({ 'packages/lib/src/lazy.ts': "export { word } from './missing';\n" });
    const built = await build(root);
    expect(built.code).toBe(1);
    expect(built.stderr).toContain(`${path.join(root, 'packages/lib/src/lazy.ts')}: cannot resolve './missing'`);
  });
});
