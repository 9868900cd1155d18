#!/usr/bin/env node
// @ts-check
/**
 * Compiles every workspace's TypeScript to JavaScript in its `dist/` folder, so Quire runs on plain
 * Node without tsx: `node --conditions=quire-dist bin/quire.mjs …`, as the container image does.
 *
 *   node scripts/build.mjs                   each workspace's dist/, in place (`npm run build`)
 *   node scripts/build.mjs --out DIR         the tree the image runs, in DIR: the root and workspace
 *                                            package.json files, package-lock.json, bin/ and each
 *                                            workspace's dist/ (no TypeScript); `npm ci --omit=dev` in
 *                                            DIR completes it
 *   node scripts/build.mjs --manifests DIR   only the package.json files and package-lock.json (the
 *                                            image's dependency layers, cached until these change)
 *   --root DIR                               the repository to build (default: this script's)
 *
 * Each file goes through TypeScript's own emit (transpileModule: the sources are isolatedModules
 * and verbatimModuleSyntax, so no file needs another to compile; type checking is
 * `npm run typecheck`'s job). Relative specifiers are made explicit, as Node's ESM resolver needs:
 * `./x` -> `./x.js`, `./dir` -> `./dir/index.js`. Files other than TypeScript beside the sources
 * (an app's DocType JSON, modules.txt) are copied next to the JavaScript. A workspace's sources
 * are its src/ folder, or the workspace folder itself when it has none (apps/frappe); test
 * folders and *.test.ts files are left out. Every `exports` entry of a workspace must map the
 * `quire-dist` condition to the compiled file of its default (TypeScript) target, which is checked.
 *
 * A workspace with a `vite.config.ts` is a browser app (desk/): no server code, so it has no
 * exports and is not transpiled file by file; Vite bundles it into its dist/ (index.html and
 * hashed assets), which the API serves.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The export condition under which packages resolve to their compiled JavaScript. */
export const CONDITION = 'quire-dist';
const OUT_DIR = 'dist';
/** Folders never compiled nor copied. */
const SKIP_DIRS = new Set(['node_modules', OUT_DIR, 'test', 'coverage']);

class BuildError extends Error {}

/** @param {string} file */
function readJson(file) {
  return /** @type {Record<string, any>} */ (JSON.parse(fs.readFileSync(file, 'utf8')));
}

/**
 * The workspaces the root package.json names (`dir/*` or a folder), as paths relative to root.
 * @param {string} root
 * @returns {string[]}
 */
export function workspacesOf(root) {
  /** @type {unknown} */
  const patterns = readJson(path.join(root, 'package.json')).workspaces ?? [];
  if (!Array.isArray(patterns)) throw new BuildError('package.json: workspaces must be an array');
  /** @type {string[]} */
  const found = [];
  for (const pattern of /** @type {string[]} */ (patterns)) {
    if (pattern.endsWith('/*')) {
      const parent = pattern.slice(0, -2);
      const dirs = fs.existsSync(path.join(root, parent)) ? fs.readdirSync(path.join(root, parent), { withFileTypes: true }) : [];
      for (const d of dirs) {
        if (d.isDirectory() && fs.existsSync(path.join(root, parent, d.name, 'package.json'))) found.push(`${parent}/${d.name}`);
      }
    } else if (!pattern.includes('*')) {
      if (fs.existsSync(path.join(root, pattern, 'package.json'))) found.push(pattern.replace(/\/$/, ''));
    } else {
      throw new BuildError(`package.json: unsupported workspace pattern ${pattern}`);
    }
  }
  return found.sort();
}

/**
 * A workspace's source folder, relative to the workspace: src/ when it has one, else itself.
 * @param {string} wsDir
 */
function sourceRootOf(wsDir) {
  return fs.existsSync(path.join(wsDir, 'src')) ? 'src' : '.';
}

/**
 * Every file of a source folder that belongs in the build, relative to it, sorted.
 * @param {string} dir
 * @param {boolean} isWorkspaceRoot the folder is the workspace itself (its package.json, tsconfig stay out)
 * @returns {string[]}
 */
function sourceFiles(dir, isWorkspaceRoot) {
  /** @type {string[]} */
  const out = [];
  /** @param {string} rel */
  const walk = (rel) => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(child);
      } else if (entry.isFile()) {
        if (isWorkspaceRoot && !rel && (entry.name === 'package.json' || /^tsconfig.*\.json$/.test(entry.name))) continue;
        if (/\.test\.tsx?$/.test(entry.name) || entry.name.endsWith('.d.ts') || entry.name.endsWith('.md') || entry.name.endsWith('.tsbuildinfo')) continue;
        out.push(child);
      }
    }
  };
  walk('');
  return out.sort();
}

/**
 * The explicit form of a relative specifier written without an extension, resolved against the
 * TypeScript sources: `./x` -> `./x.js` (x.ts), `./dir` -> `./dir/index.js` (dir/index.ts).
 * Specifiers that are not relative, or already name a file, are returned as they are.
 * @param {string} specifier
 * @param {string} fromFile absolute path of the importing source file
 * @param {(file: string) => boolean} isFile
 * @returns {string}
 */
export function explicitSpecifier(specifier, fromFile, isFile) {
  if (!/^\.\.?(\/|$)/.test(specifier)) return specifier;
  if (/\.(m?js|cjs|json|node)$/.test(specifier)) return specifier;
  if (/\.m?tsx?$/.test(specifier)) return specifier.replace(/\.(m?)tsx?$/, '.$1js');
  const target = path.resolve(path.dirname(fromFile), specifier);
  const bare = specifier.replace(/\/$/, '');
  if (isFile(`${target}.ts`)) return `${bare}.js`;
  if (isFile(path.join(target, 'index.ts'))) return `${bare}/index.js`;
  if (isFile(`${target}.js`)) return `${bare}.js`;
  if (isFile(path.join(target, 'index.js'))) return `${bare}/index.js`;
  throw new BuildError(`${fromFile}: cannot resolve '${specifier}' (no ${path.basename(target)}.ts nor ${path.basename(target)}/index.ts)`);
}

/**
 * A `before` transformer giving every relative import, re-export and dynamic import() with a
 * literal specifier its explicit form. Type-only imports are left alone: they are erased.
 * @param {typeof import('typescript')} ts
 * @param {(specifier: string) => string} rewrite
 * @returns {import('typescript').TransformerFactory<import('typescript').SourceFile>}
 */
function specifierTransformer(ts, rewrite) {
  return (context) => (sourceFile) => {
    const { factory } = context;
    /** @param {import('typescript').StringLiteralLike} lit */
    const literal = (lit) => factory.createStringLiteral(rewrite(lit.text));
    /** @type {(node: import('typescript').Node) => import('typescript').Node} */
    const visit = (node) => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && !node.importClause?.isTypeOnly) {
        return factory.updateImportDeclaration(node, node.modifiers, node.importClause, literal(node.moduleSpecifier), node.attributes);
      }
      if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) && !node.isTypeOnly) {
        return factory.updateExportDeclaration(node, node.modifiers, node.isTypeOnly, node.exportClause, literal(node.moduleSpecifier), node.attributes);
      }
      const arg = ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword ? node.arguments[0] : undefined;
      if (arg && ts.isCallExpression(node) && ts.isStringLiteralLike(arg)) {
        return factory.updateCallExpression(node, node.expression, node.typeArguments, [literal(arg), ...node.arguments.slice(1)]);
      }
      return ts.visitEachChild(node, visit, context);
    };
    return /** @type {import('typescript').SourceFile} */ (ts.visitNode(sourceFile, visit));
  };
}

/**
 * The compiler options a workspace's tsconfig.json gives, made to emit plain ES modules.
 * @param {typeof import('typescript')} ts
 * @param {string} wsDir
 * @returns {import('typescript').CompilerOptions}
 */
function compilerOptionsOf(ts, wsDir) {
  const configFile = path.join(wsDir, 'tsconfig.json');
  /** @type {import('typescript').CompilerOptions} */
  let options = { target: ts.ScriptTarget.ES2023, verbatimModuleSyntax: true };
  if (fs.existsSync(configFile)) {
    const read = ts.readConfigFile(configFile, (f) => ts.sys.readFile(f));
    if (read.error) throw new BuildError(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
    options = ts.parseJsonConfigFileContent(read.config, ts.sys, wsDir, undefined, configFile).options;
  }
  return {
    ...options,
    module: ts.ModuleKind.ESNext,
    noEmit: false,
    declaration: false,
    declarationMap: false,
    sourceMap: false,
    inlineSourceMap: false,
    composite: false,
    incremental: false,
  };
}

/**
 * The `exports` of a workspace checked against what the build emits: every entry must be
 * `{ "quire-dist": "./dist/….js", …, "default": "./….ts" }` with the JavaScript of that source.
 * @param {string} ws
 * @param {Record<string, any>} pkg
 * @param {string} srcRoot
 * @returns {string[]} the compiled targets, relative to the workspace
 */
function checkExports(ws, pkg, srcRoot) {
  /** @type {unknown} */
  const exportsField = pkg.exports;
  if (typeof exportsField !== 'object' || exportsField === null)
    throw new BuildError(`${ws}/package.json: "exports" must map each subpath to { "${CONDITION}": …, "default": … }`);
  /** @type {string[]} */
  const targets = [];
  for (const [subpath, value] of Object.entries(exportsField)) {
    const source = typeof value === 'string' ? value : /** @type {Record<string, unknown>} */ (value).default;
    if (typeof source !== 'string' || !source.endsWith('.ts'))
      throw new BuildError(`${ws}/package.json: exports["${subpath}"] has no default TypeScript target`);
    const rel = path.posix.relative(srcRoot === '.' ? '.' : `./${srcRoot}`, source);
    const expected = `./${OUT_DIR}/${rel.replace(/\.ts$/, '.js')}`;
    const given = typeof value === 'string' ? undefined : /** @type {Record<string, unknown>} */ (value)[CONDITION];
    if (given !== expected) {
      throw new BuildError(
        `${ws}/package.json: exports["${subpath}"] must read { "${CONDITION}": "${expected}", "default": "${source}" } (the compiled file first, for node --conditions=${CONDITION})`,
      );
    }
    targets.push(expected);
  }
  return targets;
}

/**
 * Compiles one workspace into `outDir`: JavaScript for its TypeScript, its other files copied.
 * @param {typeof import('typescript')} ts
 * @param {string} root
 * @param {string} ws
 * @param {string} outDir
 * @returns {number} files written
 */
function compileWorkspace(ts, root, ws, outDir) {
  const wsDir = path.join(root, ws);
  const pkg = readJson(path.join(wsDir, 'package.json'));
  const srcRoot = sourceRootOf(wsDir);
  const srcDir = path.join(wsDir, srcRoot);
  const targets = checkExports(ws, pkg, srcRoot);
  const options = compilerOptionsOf(ts, wsDir);
  const isFile = (/** @type {string} */ f) => fs.statSync(f, { throwIfNoEntry: false })?.isFile() ?? false;
  fs.rmSync(outDir, { recursive: true, force: true });
  const files = sourceFiles(srcDir, srcRoot === '.');
  for (const rel of files) {
    const from = path.join(srcDir, rel);
    if (!rel.endsWith('.ts')) {
      fs.mkdirSync(path.dirname(path.join(outDir, rel)), { recursive: true });
      fs.copyFileSync(from, path.join(outDir, rel));
      continue;
    }
    const result = ts.transpileModule(fs.readFileSync(from, 'utf8'), {
      fileName: from,
      compilerOptions: options,
      reportDiagnostics: true,
      transformers: { before: [specifierTransformer(ts, (spec) => explicitSpecifier(spec, from, isFile))] },
    });
    const errors = (result.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length > 0) {
      throw new BuildError(errors.map((d) => `${from}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`).join('\n'));
    }
    const to = path.join(outDir, rel.replace(/\.ts$/, '.js'));
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.writeFileSync(to, result.outputText);
  }
  for (const target of targets) {
    if (!isFile(path.join(outDir, '..', target))) throw new BuildError(`${ws}: ${target} was not produced (is its source in ${srcRoot}?)`);
  }
  return files.length;
}

/**
 * Bundles a browser app with Vite (this repository's, so a fixture needs none of its own) into
 * `outDir`. The Vite build is run as its own process: its config is TypeScript that it loads itself.
 * @param {string} root
 * @param {string} ws
 * @param {string} outDir
 * @returns {number} files written
 */
function bundleBrowserApp(root, ws, outDir) {
  const vite = path.join(path.dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin', 'vite.js');
  try {
    execFileSync(process.execPath, [vite, 'build', '--outDir', outDir, '--emptyOutDir', '--logLevel', 'warn'], {
      cwd: path.join(root, ws),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } catch (err) {
    const stderr = /** @type {{ stderr?: Buffer }} */ (err).stderr?.toString() ?? '';
    throw new BuildError(`${ws}: vite build failed\n${stderr}`);
  }
  return /** @type {string[]} */ (fs.readdirSync(outDir, { recursive: true })).length;
}

/** @param {string} wsDir */
function isBrowserApp(wsDir) {
  return fs.existsSync(path.join(wsDir, 'vite.config.ts'));
}

/**
 * Copies the package.json files and the lockfile: all `npm ci` needs.
 * @param {string} root
 * @param {string[]} workspaces
 * @param {string} out
 */
function copyManifests(root, workspaces, out) {
  for (const rel of ['package.json', 'package-lock.json', ...workspaces.map((ws) => `${ws}/package.json`)]) {
    if (!fs.existsSync(path.join(root, rel))) continue;
    fs.mkdirSync(path.dirname(path.join(out, rel)), { recursive: true });
    fs.copyFileSync(path.join(root, rel), path.join(out, rel));
  }
}

/**
 * @param {{ root: string, out?: string | undefined, manifestsOnly?: boolean }} options
 * @returns {{ workspaces: string[], files: number }}
 */
export function build({ root, out, manifestsOnly = false }) {
  const workspaces = workspacesOf(root);
  if (out) copyManifests(root, workspaces, out);
  if (manifestsOnly) return { workspaces, files: 0 };
  // require: importing TypeScript's 9 MB CommonJS bundle from ESM would first scan it for exports.
  const ts = /** @type {typeof import('typescript')} */ (createRequire(import.meta.url)('typescript'));
  let files = 0;
  for (const ws of workspaces) {
    const outDir = path.join(out ?? root, ws, OUT_DIR);
    files += isBrowserApp(path.join(root, ws)) ? bundleBrowserApp(root, ws, outDir) : compileWorkspace(ts, root, ws, outDir);
  }
  if (out) fs.cpSync(path.join(root, 'bin'), path.join(out, 'bin'), { recursive: true });
  return { workspaces, files };
}

/** @param {string[]} argv */
function parseArgs(argv) {
  /** @type {{ root: string, out?: string, manifestsOnly: boolean }} */
  const o = { root: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'), manifestsOnly: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (!v) throw new BuildError(`${String(arg)} needs a folder`);
      return path.resolve(v);
    };
    if (arg === '--out') o.out = value();
    else if (arg === '--manifests') {
      o.out = value();
      o.manifestsOnly = true;
    } else if (arg === '--root') o.root = value();
    else throw new BuildError(`unknown argument ${String(arg)}: node scripts/build.mjs [--out DIR | --manifests DIR] [--root DIR]`);
  }
  return o;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const options = parseArgs(process.argv.slice(2));
    const started = Date.now();
    const { workspaces, files } = build(options);
    const where = options.out ? ` into ${path.relative(process.cwd(), options.out) || '.'}` : '';
    const what = options.manifestsOnly ? 'manifests' : `${String(files)} files`;
    process.stdout.write(`build: ${what} of ${String(workspaces.length)} workspaces${where} in ${String(Date.now() - started)} ms\n`);
  } catch (err) {
    if (!(err instanceof BuildError)) throw err;
    process.stderr.write(`build: ${err.message}\n`);
    process.exitCode = 1;
  }
}
