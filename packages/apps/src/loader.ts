import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ControllerRegistry, isVirtualDocType, type DocController, type VirtualDocType } from '@quire/documents';
import { checkOwnerFields, parseDefinition, type DocTypeDefinition, type OwnerFields } from '@quire/meta';
import { isDocMethod, whitelistedOf, type MethodFunction, type WhitelistedDocMethod, type WhitelistedMethod } from './whitelist';

/**
 * An app is a folder laid out like a Frappe app: `<module>/doctype/<name>/<name>.json` defines a
 * DocType and `<name>.ts` beside it may export its `controller`, its document `methods`, and for a
 * virtual DocType (`is_virtual`) the `virtual` source of its records; any `.ts` module may export
 * whitelisted functions, callable at `<app>.<module path>.<export>` (and any function may be
 * enqueued as a job); `modules.txt` lists the app's modules; `hooks.ts` may export `docEvents`
 * (Frappe's `doc_events`): controllers by DocType, `*` for every DocType, `schedulerEvents`, and
 * `ownerFields` (Link-to-User fields that make a row its user's too for `if_owner` rights). A compiled app (the image's, `npm run build`'s `dist/`) has
 * `.js` modules instead: an app folder's modules are its `.ts` files when it has any, else its
 * `.js` files. `dist/` folders inside an app are build output, never part of it.
 */
export interface AppSource {
  name: string;
  root: string;
}

export interface LoadedApps {
  apps: AppSource[];
  /** Standard DocTypes, in dependency-friendly order (child tables before their parents). */
  doctypes: DocTypeDefinition[];
  modules: Array<{ app: string; module: string }>;
  controllers: ControllerRegistry;
  methods: ReadonlyMap<string, WhitelistedMethod>;
  /**
   * Every exported function by its dotted path, whitelisted or not: a call over HTTP to one that is
   * not is a 403, not a 417; any of them may be enqueued as a background job (`fn(kwargs, ctx)`).
   */
  functions: ReadonlyMap<string, MethodFunction>;
  /** Document methods by DocType (`*`: every DocType), for run_method. */
  docMethods: ReadonlyMap<string, ReadonlyMap<string, WhitelistedDocMethod>>;
  /**
   * hooks.ts `schedulerEvents` of every app (Frappe's scheduler_events): each method with its event
   * key (`all`, `hourly`, `daily_long`, …, or `cron` with its expression).
   */
  schedulerEvents: readonly SchedulerEvent[];
  /**
   * hooks.ts `ownerFields` of every app: by DocType, the Link-to-User fields whose user a row
   * belongs to beside its owner, for `if_owner` rights (checked against the DocTypes at load).
   */
  ownerFields: OwnerFields;
  /** The dotted path of each standard DocType's controller module (`User` -> `frappe.core.doctype.user.user`), for /api/v2/method/<doctype>/<method>. */
  controllerModules: ReadonlyMap<string, string>;
}

/** One scheduled method as hooks.ts declares it. */
export interface SchedulerEvent {
  method: string;
  /** The schedulerEvents key: `all`, `hourly`, `hourly_long`, `daily`, …, or `cron`. */
  event: string;
  /** For `cron`: the expression. */
  cron?: string;
}

/** The document method `name` of a DocType, its own before the ones every DocType has. */
export function docMethodOf(apps: LoadedApps, doctype: string, name: string): WhitelistedDocMethod | undefined {
  return apps.docMethods.get(doctype)?.get(name) ?? apps.docMethods.get('*')?.get(name);
}

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'test' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(full)));
    else out.push(full);
  }
  return out.sort();
}

/** The extension of an app's modules: TypeScript sources, or the JavaScript compiled from them. */
function moduleExtensionOf(files: string[]): '.ts' | '.js' {
  return files.some((f) => isModule(f, '.ts')) ? '.ts' : '.js';
}

function isModule(file: string, ext: '.ts' | '.js'): boolean {
  return file.endsWith(ext) && !file.endsWith(`.d${ext}`) && !file.endsWith(`.test${ext}`);
}

function isDoctypeJson(file: string): boolean {
  const parts = file.split(path.sep);
  const base = path.basename(file, '.json');
  return file.endsWith('.json') && parts.at(-3) === 'doctype' && parts.at(-2) === base;
}

export async function loadApps(apps: AppSource[]): Promise<LoadedApps> {
  const doctypes: DocTypeDefinition[] = [];
  const modules: LoadedApps['modules'] = [];
  const controllers: Array<readonly [string, DocController]> = [];
  const methods = new Map<string, WhitelistedMethod>();
  const functions = new Map<string, MethodFunction>();
  const docMethods = new Map<string, Map<string, WhitelistedDocMethod>>();
  const controllerModules = new Map<string, string>();
  const schedulerEvents: SchedulerEvent[] = [];
  const declaredOwnerFields = new Map<string, string[]>();
  const virtuals = new Map<string, VirtualDocType>();
  const addDocMethods = (doctype: string, exported: unknown) => {
    if (typeof exported !== 'object' || exported === null) return;
    let table = docMethods.get(doctype);
    if (!table) docMethods.set(doctype, (table = new Map<string, WhitelistedDocMethod>()));
    for (const [name, m] of Object.entries(exported)) if (isDocMethod(m)) table.set(name, m);
  };
  for (const app of apps) {
    const files = await walk(app.root);
    const doctypeOfFolder = new Map<string, string>();
    for (const file of files.filter(isDoctypeJson)) {
      const def = parseDefinition(JSON.parse(await fs.readFile(file, 'utf8')));
      doctypes.push(def);
      doctypeOfFolder.set(path.dirname(file), def.name);
    }
    const modulesFile = path.join(app.root, 'modules.txt');
    const listed = await fs.readFile(modulesFile, 'utf8').catch(() => '');
    for (const m of listed
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean))
      modules.push({ app: app.name, module: m });
    const ext = moduleExtensionOf(files);
    for (const file of files) {
      if (!isModule(file, ext)) continue;
      const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      // `__init__.ts` is its folder's module, as in Python: frappe/__init__.ts -> `frappe`.
      const modulePath = path
        .relative(app.root, file)
        .slice(0, -ext.length)
        .split(path.sep)
        .filter((p) => p !== '__init__');
      const dotted = [app.name, ...modulePath].join('.');
      for (const [exported, value] of Object.entries(mod)) {
        if (typeof value === 'function') functions.set(`${dotted}.${exported}`, value as MethodFunction);
        const method = whitelistedOf(value);
        if (method) methods.set(`${dotted}.${exported}`, method);
      }
      const doctype = doctypeOfFolder.get(path.dirname(file));
      if (doctype && path.basename(file, ext) === path.basename(path.dirname(file))) {
        controllerModules.set(doctype, dotted);
        if (isController(mod.controller)) controllers.push([doctype, mod.controller]);
        if (isVirtualDocType(mod.virtual)) virtuals.set(doctype, mod.virtual);
        addDocMethods(doctype, mod.methods);
      }
      addDocMethods('*', mod.documentMethods);
      if (file === path.join(app.root, `hooks${ext}`)) {
        controllers.push(...docEventsOf(mod.docEvents));
        schedulerEvents.push(...schedulerEventsOf(mod.schedulerEvents));
        for (const [doctype, fields] of ownerFieldsOf(app.name, mod.ownerFields))
          declaredOwnerFields.set(doctype, [...(declaredOwnerFields.get(doctype) ?? []), ...fields]);
      }
    }
  }
  return {
    apps,
    doctypes: orderForInstall(doctypes),
    modules,
    controllers: new ControllerRegistry(controllers, virtuals),
    methods,
    functions,
    docMethods,
    controllerModules,
    schedulerEvents,
    ownerFields: checkedOwnerFields(declaredOwnerFields, doctypes),
  };
}

/** `{ DocType: ['fieldname', …] }` as hooks.ts writes it; anything else is an app's mistake, refused at load. */
function ownerFieldsOf(app: string, exported: unknown): Array<[string, string[]]> {
  if (exported === undefined) return [];
  const invalid = () => new Error(`${app} hooks: ownerFields must map DocType names to lists of fieldnames`);
  if (typeof exported !== 'object' || exported === null || Array.isArray(exported)) throw invalid();
  return Object.entries(exported as Record<string, unknown>).map(([doctype, fields]) => {
    if (!Array.isArray(fields) || !fields.every((f): f is string => typeof f === 'string')) throw invalid();
    return [doctype, fields];
  });
}

/** Declared owner fields, each a Link to User of a loaded DocType (they become SQL columns in row conditions). */
function checkedOwnerFields(declared: ReadonlyMap<string, string[]>, doctypes: readonly DocTypeDefinition[]): OwnerFields {
  const out = new Map<string, readonly string[]>();
  for (const [doctype, fields] of declared) {
    const def = doctypes.find((d) => d.name === doctype);
    if (!def) throw new Error(`hooks ownerFields: no DocType ${doctype} in the loaded apps`);
    if (def.istable) throw new Error(`hooks ownerFields: ${doctype} is a child table (its rows belong to their parent's owner)`);
    const { valid, invalid } = checkOwnerFields(def, fields);
    if (invalid.length > 0) throw new Error(`hooks ownerFields: ${invalid.join(', ')} of ${doctype} must be Link fields to User`);
    out.set(doctype, valid);
  }
  return out;
}

/** `{ all: [methods], …, cron: { '<expression>': [methods] } }`, as Frappe's hooks.py writes it. */
function schedulerEventsOf(exported: unknown): SchedulerEvent[] {
  if (typeof exported !== 'object' || exported === null) return [];
  const out: SchedulerEvent[] = [];
  const methodsOf = (v: unknown): string[] => (Array.isArray(v) ? v.filter((m): m is string => typeof m === 'string') : []);
  for (const [event, value] of Object.entries(exported as Record<string, unknown>)) {
    if (event === 'cron') {
      if (typeof value !== 'object' || value === null) continue;
      for (const [cron, methods] of Object.entries(value as Record<string, unknown>))
        for (const method of methodsOf(methods)) out.push({ method, event, cron });
    } else {
      for (const method of methodsOf(value)) out.push({ method, event });
    }
  }
  return out;
}

/** A controller: an object whose values are hook functions. */
function isController(value: unknown): value is DocController {
  return typeof value === 'object' && value !== null && Object.values(value).every((hook) => typeof hook === 'function');
}

/** `{ DocType: controller | [controllers] }`: several controllers of one app may attach to the same DocType (or `*`). */
function docEventsOf(exported: unknown): Array<readonly [string, DocController]> {
  if (typeof exported !== 'object' || exported === null) return [];
  return Object.entries(exported).flatMap(([doctype, value]: [string, unknown]) =>
    (Array.isArray(value) ? (value as unknown[]) : [value]).filter(isController).map((c) => [doctype, c] as const),
  );
}

/** Child tables first, then DocTypes whose Links point only at DocTypes already placed, where possible. */
function orderForInstall(defs: DocTypeDefinition[]): DocTypeDefinition[] {
  const children = defs.filter((d) => d.istable);
  const parents = defs.filter((d) => !d.istable);
  return [...children, ...parents];
}
