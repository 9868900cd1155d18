/** The route label of a request that matches no template: URLs never become label values. */
export const UNMATCHED = 'unmatched';

type Segment = { kind: 'literal'; text: string } | { kind: 'param' } | { kind: 'rest' };

interface Template {
  label: string;
  segments: Segment[];
}

/**
 * Route templates a service answers (`/api/resource/:doctype/*name`), turned into the bounded
 * `route` label of a request path: `:x` matches one segment, a final `*x` one or more; the label
 * writes both as `:x`. The first template that matches wins.
 */
export class RouteTable {
  private readonly templates: Template[];

  constructor(private readonly sources: readonly string[]) {
    this.templates = sources.map((t) => ({ label: t.replace(/\/\*(\w+)$/, '/:$1'), segments: parse(t) }));
  }

  /** Another service's routes answered on the same port (the auth routes beside the API), first. */
  before(templates: readonly string[]): RouteTable {
    return new RouteTable([...templates, ...this.sources]);
  }

  label(path: string): string {
    const parts = split(path);
    for (const t of this.templates) if (matches(t.segments, parts)) return t.label;
    return UNMATCHED;
  }
}

function split(path: string): string[] {
  const query = path.indexOf('?');
  const bare = query === -1 ? path : path.slice(0, query);
  const parts = bare.split('/');
  parts.shift(); // the empty text before the leading slash
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop(); // a trailing slash
  return parts;
}

function parse(template: string): Segment[] {
  return split(template).map((s): Segment => (s.startsWith(':') ? { kind: 'param' } : s.startsWith('*') ? { kind: 'rest' } : { kind: 'literal', text: s }));
}

function matches(segments: readonly Segment[], parts: readonly string[]): boolean {
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i];
    const part = parts[i];
    if (s === undefined) return false;
    if (s.kind === 'rest') return part !== undefined && part !== '';
    if (part === undefined) return false;
    if (s.kind === 'literal' ? s.text !== part : part === '') return false;
  }
  return parts.length === segments.length;
}
