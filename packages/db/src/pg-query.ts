import { createRequire } from 'node:module';
import pg from 'pg';

/**
 * One statement as Quire sends it through pg, in fewer round trips and fewer allocations than
 * pg's own `client.query(config)`:
 *
 * - BEGIN before it and/or COMMIT after it go in the same write, answered in one round trip: the
 *   extended protocol runs every message up to the Sync in order and skips the rest after an error
 *   (a failed statement never reaches its COMMIT; the transaction is then aborted, for the
 *   caller's ROLLBACK). "Read the row FOR UPDATE, write it back" costs two round trips, not four.
 * - A named (prepared) statement's row description is asked for once per connection: pg sends
 *   Describe with every execution and parses the answer again; here later executions reuse the
 *   first one's fields and parsers. Postgres never changes a prepared statement's result shape (it
 *   fails the statement with "cached plan must not change result type" instead), so what was
 *   described once stays true for that statement on that connection.
 * - The config is not copied: pg copies every config object (property descriptors) per query.
 *
 * pg has no API for these; this is its public Query class with the steps that write the
 * extended-protocol messages (`prepare` and `_getRows`, both called inside the stream cork of
 * `submit`) and read a row (`handleRowDescription`, `handleDataRow`) extended. Every statement of
 * the test suite runs through it (packages/db/test/drivers.test.ts covers the failure paths).
 */

export interface Around {
  begin: boolean;
  commit: boolean;
}

/** The extended-protocol writes of pg's Connection this uses. */
interface ProtocolConnection {
  parse(query: { text: string; name?: string; types?: number[] }): void;
  bind(config: { portal?: string; statement?: string | undefined; values?: unknown[] | undefined; valueMapper?: (value: unknown) => unknown }): void;
  execute(config: { portal?: string; rows?: number }): void;
  sync(): void;
}

/** pg's Result as this file fills it: what `addFields` derives from a row description. */
interface ResultInternals {
  fields: unknown[];
  _parsers: unknown[] | undefined;
  _prebuiltEmptyResultObject: Record<string, null>;
  command: string | null;
}

/** pg's Query as subclasses see it. */
interface QueryInternals {
  name: string | undefined;
  values: unknown[] | undefined;
  queryMode: string | undefined;
  _result: ResultInternals;
  _accumulateRows: boolean;
  prepare(connection: ProtocolConnection): void;
  _getRows(connection: ProtocolConnection, rows: number | undefined): void;
  hasBeenParsed(connection: ProtocolConnection): boolean;
  handleRowDescription(msg: unknown): void;
  handleDataRow(msg: unknown): void;
  handleCommandComplete(msg: unknown, connection: ProtocolConnection): void;
  handleError(err: unknown, connection: ProtocolConnection): void;
  _checkForMultirow(): void;
}

/** What a row description left on a Result, to hand to the next execution's. */
interface Described {
  fields: unknown[];
  parsers: unknown[] | undefined;
  empty: Record<string, null>;
}

/** Per connection (a prepared statement lives on one), its named statements' descriptions. */
const descriptions = new WeakMap<ProtocolConnection, Map<string, Described>>();

/**
 * Prepared statements a connection keeps unless told otherwise. Schema-per-tenant makes each
 * tenant's statements texts of their own, so a process serving many tenants prepares many: past
 * this many on a connection, the one used least recently is closed (a Close message in the same
 * write as the next Parse), so a backend's plan cache stays bounded while every tenant's hot
 * statements stay prepared.
 */
export const DEFAULT_PREPARED_PER_CONNECTION = 2000;

/** pg's record of what a connection has parsed (by statement name), which a Close must update. */
interface ParsedStatements {
  parsedStatements: Record<string, string | undefined>;
  close(msg: { type: 'S'; name: string }): void;
}

/** Per connection, its prepared statements' names from least to most recently used. */
const recency = new WeakMap<ProtocolConnection, Map<string, true>>();

/** Marks `name` used on `connection`; a statement about to be parsed there first makes room. */
function usePrepared(connection: ProtocolConnection, name: string, parsing: boolean, keep: number): void {
  let used = recency.get(connection);
  if (!used) recency.set(connection, (used = new Map<string, true>()));
  if (!parsing) {
    if (used.delete(name)) used.set(name, true);
    return;
  }
  used.delete(name);
  const pg = connection as unknown as ParsedStatements;
  while (used.size >= keep && used.size > 0) {
    const oldest = used.keys().next().value as string;
    used.delete(oldest);
    pg.close({ type: 'S', name: oldest });
    Reflect.deleteProperty(pg.parsedStatements, oldest);
    descriptions.get(connection)?.delete(oldest);
  }
  used.set(name, true);
}

function describedOn(connection: ProtocolConnection): Map<string, Described> {
  let map = descriptions.get(connection);
  if (!map) descriptions.set(connection, (map = new Map<string, Described>()));
  return map;
}

/** A parameterless statement on the unnamed statement and portal (BEGIN, COMMIT): Parse, Bind, Execute. */
function simpleStatement(connection: ProtocolConnection, text: string): void {
  connection.parse({ text, name: '', types: [] });
  connection.bind({ portal: '', statement: '', values: [] });
  connection.execute({ portal: '', rows: 0 });
}

type Callback = (err: Error | null, res: unknown) => void;

/** pg's mapping of JavaScript values to parameters (dates, buffers, arrays, objects as JSON), from its utils module. */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

const QueryBase = pg.Query as unknown as new (config: string, values: unknown[] | undefined, callback: Callback) => QueryInternals;

const NOT_AROUND: Around = { begin: false, commit: false };

/** The description of a statement without result rows: nothing to apply (no row ever comes). */
const NO_ROWS: Described = { fields: [], parsers: undefined, empty: {} };

class StatementQuery extends QueryBase {
  private readonly around: Around;
  /** Prepared statements its connection keeps. */
  private readonly keep: number;
  /** The description reused for this execution, applied to the result at its first row. */
  private reused: Described | undefined;
  private connection: ProtocolConnection | undefined;
  /** CommandCompletes seen: BEGIN's comes before the statement's own. */
  private completed = 0;
  private described = false;

  constructor(text: string, values: unknown[], name: string | undefined, around: Around, keep: number, callback: Callback) {
    // A string config is the one pg does not copy.
    super(text, values, callback);
    this.around = around;
    this.keep = keep;
    if (name !== undefined) this.name = name;
    // BEGIN/COMMIT around it need the extended protocol even without parameters.
    if (around.begin || around.commit) this.queryMode = 'extended';
  }

  override prepare(connection: ProtocolConnection): void {
    this.connection = connection;
    if (this.around.begin) simpleStatement(connection, 'BEGIN');
    // Only a statement already parsed on this connection is described from memory.
    const name = this.name;
    const parsed = name !== undefined && this.hasBeenParsed(connection);
    if (name) usePrepared(connection, name, !parsed, this.keep);
    if (parsed) {
      const known = descriptions.get(connection)?.get(name);
      if (known) {
        this.reused = known;
        if (this.bindAndExecute(connection)) this._accumulateRows = true;
        return;
      }
    }
    super.prepare(connection);
  }

  /** pg's prepare of a statement already parsed, without Describe: Bind (values mapped as pg maps them), Execute, Sync. */
  private bindAndExecute(connection: ProtocolConnection): boolean {
    try {
      connection.bind({ portal: '', statement: this.name, values: this.values, valueMapper: prepareValue });
    } catch (err) {
      // As pg does, less closing the statement (it was parsed by an earlier query and stays in use).
      connection.sync();
      this.handleError(err, connection);
      return false;
    }
    this._getRows(connection, undefined);
    return true;
  }

  override _getRows(connection: ProtocolConnection, rows: number | undefined): void {
    if (this.around.commit && !rows) {
      connection.execute({ portal: '', rows: 0 });
      simpleStatement(connection, 'COMMIT');
      connection.sync();
      return;
    }
    super._getRows(connection, rows);
  }

  override handleRowDescription(msg: unknown): void {
    super.handleRowDescription(msg);
    this.described = true;
    const { name, connection } = this;
    if (name && connection) {
      const r = this._result;
      describedOn(connection).set(name, { fields: r.fields, parsers: r._parsers, empty: r._prebuiltEmptyResultObject });
    }
  }

  override handleCommandComplete(msg: unknown, connection: ProtocolConnection): void {
    super.handleCommandComplete(msg, connection);
    const own = this.completed++ === (this.around.begin ? 1 : 0);
    // A statement that returns no rows (an INSERT without RETURNING) is described by an empty result.
    if (own && !this.described && this.reused === undefined && this.name && this.connection && !describedOn(this.connection).has(this.name)) {
      describedOn(this.connection).set(this.name, NO_ROWS);
    }
  }

  override handleDataRow(msg: unknown): void {
    const reused = this.reused;
    if (reused) {
      // Where a row description would have been handled: after BEGIN's result, a result of its own.
      this.reused = undefined;
      this._checkForMultirow();
      const r = this._result;
      r.fields = reused.fields;
      r._parsers = reused.parsers;
      r._prebuiltEmptyResultObject = reused.empty;
    }
    super.handleDataRow(msg);
  }
}

/**
 * Runs `text` on `client` (a prepared statement when `name` is given, the connection keeping its
 * `keep` most recently used), with BEGIN and/or COMMIT around it in the same round trip; resolves
 * with the statement's own result.
 */
export function runStatement(
  client: pg.ClientBase,
  text: string,
  values: unknown[],
  name: string | undefined,
  around: Around = NOT_AROUND,
  keep = DEFAULT_PREPARED_PER_CONNECTION,
): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    const query = new StatementQuery(text, values, name, around, keep, (err, res) => {
      if (err) {
        reject(err);
        return;
      }
      if (!Array.isArray(res)) {
        resolve(res as pg.QueryResult);
        return;
      }
      resolve((res as pg.QueryResult[])[around.begin ? 1 : 0] as pg.QueryResult);
    });
    (client as unknown as { query(q: unknown): void }).query(query);
  });
}
