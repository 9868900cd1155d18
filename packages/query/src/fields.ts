import { ident } from '@quire/db';
import { DataError, notPermitted } from '@quire/errors';
import type { ValueKind } from '@quire/meta';
import { readScope } from '@quire/permissions';
import { columnSql, doctypeOfPrefix, isHidden, parseColumnRef, readableColumn, type ColumnRef, type ColumnSyntax, type TableScope } from './columns';
import { fieldNotPermitted, restrictedExpression, restrictedFunction } from './errors';
import type { Joins } from './joins';
import type { QueryScope } from './scope';

/**
 * The `fields` grammar (strict): `*`, a column reference, `distinct <col>`, an aggregate over a
 * column reference, each optionally `as <alias>`. Everything else is refused.
 */

export interface SelectItem {
  /** `<expr> AS "<key>"`. */
  readonly sql: string;
  /** The expression alone (what ORDER BY / GROUP BY compare against). */
  readonly expr: string;
  readonly key: string;
  readonly aggregate: boolean;
}

export interface SelectList {
  readonly items: SelectItem[];
  readonly distinct: boolean;
}

const ALIAS_RE = /^(.*?)[ \t\r\n]+as[ \t\r\n]+(?:`([A-Za-z_][A-Za-z0-9_]*)`|"([A-Za-z_][A-Za-z0-9_]*)"|([A-Za-z_][A-Za-z0-9_]*))$/is;
const CALL_RE = /^([A-Za-z_][A-Za-z0-9_]*)[ \t\r\n]*\([ \t\r\n]*(.*?)[ \t\r\n]*\)$/s;
const DISTINCT_RE = /^distinct[ \t\r\n]+(.+)$/is;

const AGGREGATES = new Set(['count', 'sum', 'avg', 'min', 'max']);
const NUMERIC_KINDS = new Set<ValueKind>(['int', 'float', 'check']);
const ORDERABLE_KINDS = new Set<ValueKind>(['text', 'int', 'float', 'check', 'date', 'datetime', 'time']);

/** A column named in `fields`: resolved, or silently dropped because it is permlevel-hidden. */
type FieldColumn = { ref: ColumnRef; key: string } | 'hidden';

interface Entry {
  body: string;
  alias: string | undefined;
}

function splitAlias(text: string): Entry {
  const m = ALIAS_RE.exec(text);
  if (!m) return { body: text, alias: undefined };
  return { body: (m[1] as string).trim(), alias: m[2] ?? m[3] ?? m[4] };
}

export class FieldCompiler {
  private distinct = false;

  constructor(
    private readonly scope: QueryScope,
    private readonly joins: Joins,
  ) {}

  compile(entries: readonly string[]): SelectList {
    const items: SelectItem[] = [];
    for (const entry of entries) items.push(...this.entry(entry));
    if (items.length === 0) items.push(...this.entry('name'));
    return { items, distinct: this.distinct };
  }

  private entry(raw: string): SelectItem[] {
    const text = raw.trim();
    if (text === '*') return this.star();
    const { body, alias } = splitAlias(text);
    const compiled = this.expression(body);
    if (compiled === 'hidden') return [];
    const key = alias ?? compiled.key;
    return [{ sql: `${compiled.expr} AS ${ident(key)}`, expr: compiled.expr, key, aggregate: compiled.aggregate }];
  }

  /** Every column the caller may read, in table order. */
  private star(): SelectItem[] {
    const main = this.scope.main;
    return main.meta.columns
      .filter((c) => !main.hidden.has(c.name))
      .map((column) => {
        const expr = columnSql({ scope: main, column });
        return { sql: `${expr} AS ${ident(column.name)}`, expr, key: column.name, aggregate: false };
      });
  }

  private expression(body: string): { expr: string; key: string; aggregate: boolean } | 'hidden' {
    const syntax = parseColumnRef(body);
    if (syntax) return this.plain(syntax, body);
    const distinct = DISTINCT_RE.exec(body);
    if (distinct) return this.distinctColumn((distinct[1] as string).trim());
    const call = CALL_RE.exec(body);
    if (call) return this.aggregate((call[1] as string).toLowerCase(), (call[2] as string).trim());
    throw restrictedExpression();
  }

  private plain(syntax: ColumnSyntax, text: string): { expr: string; key: string; aggregate: boolean } | 'hidden' {
    const resolved = this.column(syntax, text);
    if (resolved === 'hidden') return 'hidden';
    return { expr: columnSql(resolved.ref), key: resolved.key, aggregate: false };
  }

  private distinctColumn(text: string): { expr: string; key: string; aggregate: boolean } | 'hidden' {
    const syntax = parseColumnRef(text);
    if (!syntax) throw restrictedExpression();
    const resolved = this.plain(syntax, text);
    if (resolved !== 'hidden') this.distinct = true;
    return resolved;
  }

  private aggregate(fn: string, inner: string): { expr: string; key: string; aggregate: boolean } | 'hidden' {
    if (!AGGREGATES.has(fn)) throw restrictedFunction(fn);
    if (fn === 'count' && inner === '*') return { expr: 'count(*)', key: 'count(*)', aggregate: true };
    const distinct = fn === 'count' ? DISTINCT_RE.exec(inner) : null;
    const columnText = distinct ? (distinct[1] as string).trim() : inner;
    const syntax = parseColumnRef(columnText);
    if (!syntax) throw restrictedExpression();
    const resolved = this.column(syntax, columnText);
    if (resolved === 'hidden') return 'hidden';
    checkAggregateKind(fn, resolved);
    const arg = `${distinct ? 'DISTINCT ' : ''}${columnSql(resolved.ref)}`;
    const keyArg = `${distinct ? 'distinct ' : ''}${resolved.key}`;
    return { expr: `${fn}(${arg})`, key: `${fn}(${keyArg})`, aggregate: true };
  }

  // -------------------------------------------------------------------------------------------
  // column references

  private column(syntax: ColumnSyntax, text: string): FieldColumn {
    if (syntax.form === 'plain') return this.ownColumn(this.scope.main, syntax.column, text, syntax.column);
    const { prefix, column } = syntax;
    if (this.scope.tableField(prefix)) return this.childColumn(prefix, column, text);
    if (this.scope.linkField(prefix)) return this.linkedColumn(prefix, column, text);
    const doctype = doctypeOfPrefix(prefix);
    if (doctype !== undefined && !this.scope.meta.field(prefix)) return this.doctypeColumn(doctype, column, text);
    throw fieldNotPermitted(text.trim());
  }

  private ownColumn(scope: TableScope, name: string, text: string, key: string): FieldColumn {
    if (isHidden(scope, name)) return 'hidden';
    const column = readableColumn(scope, name);
    if (!column) throw fieldNotPermitted(text.trim());
    return { ref: { scope, column }, key };
  }

  /** `` `tab<DocType>`.`col` ``: this DocType or the child DocType of one of its Table fields. */
  private doctypeColumn(doctype: string, name: string, text: string): FieldColumn {
    if (doctype === this.scope.meta.name) return this.ownColumn(this.scope.main, name, text, name);
    const table = this.scope.tableFieldFor(doctype);
    if (!table) throw fieldNotPermitted(text.trim());
    return this.joinedChild(table.field.fieldname, name, text, name);
  }

  private childColumn(fieldname: string, name: string, text: string): FieldColumn {
    return this.joinedChild(fieldname, name, text, `${fieldname}.${name}`);
  }

  private joinedChild(fieldname: string, name: string, text: string, key: string): FieldColumn {
    const table = this.scope.tableField(fieldname);
    if (!table) throw fieldNotPermitted(text.trim());
    if (this.scope.main.hidden.has(fieldname)) return 'hidden';
    const hidden = this.scope.hiddenOf(table.child);
    const probe: TableScope = { alias: '', meta: table.child, hidden };
    if (isHidden(probe, name)) return 'hidden';
    const column = readableColumn(probe, name);
    if (!column) throw fieldNotPermitted(text.trim());
    const scope = this.joins.childTable(table.field, table.child, hidden);
    return { ref: { scope, column }, key };
  }

  /** `link_field.col`: needs read/select on the linked DocType; a hidden column there is refused. */
  private linkedColumn(fieldname: string, name: string, text: string): FieldColumn {
    const link = this.scope.linkField(fieldname);
    if (!link || this.scope.main.hidden.has(fieldname)) throw fieldNotPermitted(text.trim());
    const access = readScope(link.target, this.scope.principal);
    if (access === false) throw notPermitted('read', link.target.name);
    const hidden = this.scope.hiddenOf(link.target);
    const column = readableColumn({ alias: '', meta: link.target, hidden }, name);
    if (!column) throw fieldNotPermitted(text.trim());
    const owner = access === 'owner' ? this.scope.principal.user : undefined;
    const scope = this.joins.linked(link.field, link.target, hidden, owner);
    return { ref: { scope, column }, key: `${fieldname}.${name}` };
  }
}

function checkAggregateKind(fn: string, resolved: { ref: ColumnRef; key: string }): void {
  const kind = resolved.ref.column.kind;
  if ((fn === 'sum' || fn === 'avg') && !NUMERIC_KINDS.has(kind)) {
    throw new DataError(`Function ${fn} needs a numeric field, ${resolved.key} is not`);
  }
  if ((fn === 'min' || fn === 'max') && !ORDERABLE_KINDS.has(kind)) {
    throw new DataError(`Function ${fn} cannot be used on ${resolved.key}`);
  }
}
