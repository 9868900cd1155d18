/**
 * Jinja-like templates written by tenant administrators (webhook JSON bodies, dynamic URLs), rendered
 * with liquidjs in a locked-down configuration: own properties only, strict filters, bounded parse size,
 * render time and memory, and no file system (`include`, `render` and `layout` do not exist).
 */
import { Liquid, type Context } from 'liquidjs';
import { cstr, jsonStringify } from '@quire/frappe-compat';

export class TemplateError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TemplateError';
  }
}

/** Longest template source accepted (characters). */
export const TEMPLATE_PARSE_LIMIT = 100_000;
/** Wall-clock budget of one render (milliseconds). */
export const TEMPLATE_RENDER_LIMIT_MS = 1_000;
/** Memory budget of one render (liquidjs' allocation units: roughly characters and array items). */
export const TEMPLATE_MEMORY_LIMIT = 10_000_000;

const HTML_UNSAFE: Readonly<Record<string, string>> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', "'": '\\u0027' };

/**
 * Jinja's `tojson`: JSON text of the value (`undefined` → `null`), with `<`, `>`, `&` and `'` escaped as
 * `\u00XX` like Jinja's htmlsafe_json_dumps, so it is valid both inside a JSON body and inside markup.
 * An optional argument indents the output.
 */
function tojson(this: { context: Context }, value: unknown, indent?: unknown): string {
  const space = typeof indent === 'number' && Number.isFinite(indent) ? Math.max(0, Math.min(10, indent)) : undefined;
  let text: string | undefined;
  try {
    text = jsonStringify(value === undefined ? null : value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), space);
  } catch (err) {
    throw new TemplateError(`tojson: ${err instanceof Error ? err.message : String(err)}`);
  }
  const out = (text ?? 'null').replace(/[<>&']/g, (ch) => HTML_UNSAFE[ch] ?? ch);
  this.context.memoryLimit.use(out.length);
  return out;
}

function createEngine(): Liquid {
  const liquid = new Liquid({
    ownPropertyOnly: true,
    strictFilters: true,
    strictVariables: false,
    jsTruthy: true, // closer to Jinja: "" and 0 are false
    parseLimit: TEMPLATE_PARSE_LIMIT,
    renderLimit: TEMPLATE_RENDER_LIMIT_MS,
    memoryLimit: TEMPLATE_MEMORY_LIMIT,
    templates: {}, // no file system: any template lookup finds nothing
    relativeReference: false,
    dynamicPartials: false,
    cache: false,
  });
  // No tag may reach another template: drop those that would.
  for (const tag of ['include', 'render', 'layout']) Reflect.deleteProperty(liquid.tags, tag);
  liquid.registerFilter('tojson', tojson);
  liquid.registerFilter('json', tojson);
  return liquid;
}

const engine = createEngine();

function describeError(err: unknown): string {
  if (err instanceof Error) {
    // liquidjs errors carry a "line:N, col:M" suffix and sometimes a multi-line excerpt; keep the first line.
    return (err.message.split('\n')[0] ?? err.message).trim();
  }
  return String(err);
}

function parse(source: string): ReturnType<Liquid['parse']> {
  if (typeof source !== 'string') throw new TemplateError('Invalid template: not a string');
  try {
    return engine.parse(source);
  } catch (err) {
    throw new TemplateError(`Invalid template: ${describeError(err)}`, { cause: err });
  }
}

/** Throws `TemplateError` when `source` does not parse (syntax error, unknown tag or filter, too long). */
export function checkTemplate(source: string): void {
  parse(source);
}

/**
 * Renders `source` with `scope` (plain JSON-like data, e.g. `{ doc }`). Throws `TemplateError` for syntax
 * errors and for failures while rendering, including exceeding the time or memory budget.
 */
export async function renderTemplate(source: string, scope: Record<string, unknown>): Promise<string> {
  const template = parse(source);
  try {
    const out: unknown = await engine.render(template, scope);
    return typeof out === 'string' ? out : cstr(out);
  } catch (err) {
    throw new TemplateError(`Template error: ${describeError(err)}`, { cause: err });
  }
}
