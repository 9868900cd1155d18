import pg from 'pg';

/**
 * One statement with BEGIN before it and/or COMMIT after it, sent in one write and answered in
 * one round trip: the extended protocol runs every message up to the Sync in order, and skips the
 * rest after an error (a failed statement never reaches its COMMIT; the transaction is then
 * aborted, for the caller's ROLLBACK). A transaction of "read the row FOR UPDATE, write it back"
 * then costs two round trips instead of four.
 *
 * pg has no pipelining API; this is its public Query class with the two steps that write the
 * extended-protocol messages (`prepare` and `_getRows`, both called inside the stream cork of
 * `submit`) extended by the messages around the statement. The results of BEGIN and COMMIT come
 * back as results of their own; the statement's is picked out. The test suite runs every write
 * through it (packages/db/test/drivers.test.ts covers the failure paths).
 */

/** The extended-protocol writes of pg's Connection this uses. */
interface ProtocolConnection {
  parse(query: { text: string; name?: string; types?: number[] }): void;
  bind(config: { portal?: string; statement?: string; values?: unknown[] }): void;
  execute(config: { portal?: string; rows?: number }): void;
}

/** pg's Query as subclasses see it: the two protocol steps this wraps. */
interface QueryInternals {
  prepare(connection: ProtocolConnection): void;
  _getRows(connection: ProtocolConnection, rows: number | undefined): void;
}

export interface Around {
  begin: boolean;
  commit: boolean;
}

/** A parameterless statement on the unnamed statement and portal (BEGIN, COMMIT): Parse, Bind, Execute. */
function simpleStatement(connection: ProtocolConnection, text: string): void {
  connection.parse({ text, name: '', types: [] });
  connection.bind({ portal: '', statement: '', values: [] });
  connection.execute({ portal: '', rows: 0 });
}

const QueryBase = pg.Query as unknown as new (config: pg.QueryConfig, values: undefined, callback: (err: Error | null, res: unknown) => void) => QueryInternals;

class AroundQuery extends QueryBase {
  constructor(
    config: pg.QueryConfig,
    private readonly around: Around,
    callback: (err: Error | null, res: unknown) => void,
  ) {
    super({ ...config, queryMode: 'extended' } as pg.QueryConfig, undefined, callback);
  }

  override prepare(connection: ProtocolConnection): void {
    if (this.around.begin) simpleStatement(connection, 'BEGIN');
    super.prepare(connection);
  }

  override _getRows(connection: ProtocolConnection, rows: number | undefined): void {
    if (this.around.commit && !rows) {
      connection.execute({ portal: '', rows: 0 });
      simpleStatement(connection, 'COMMIT');
      // pg's own step: with no row limit, Execute then Sync; the Execute is sent above.
      (connection as ProtocolConnection & { sync(): void }).sync();
      return;
    }
    super._getRows(connection, rows);
  }
}

/** Runs `config` on `client` with BEGIN and/or COMMIT around it, in one round trip; resolves with the statement's own result. */
export function queryAround(client: pg.ClientBase, config: pg.QueryConfig, around: Around): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    const query = new AroundQuery(config, around, (err, res) => {
      if (err) {
        reject(err);
        return;
      }
      const results = Array.isArray(res) ? (res as pg.QueryResult[]) : [res as pg.QueryResult];
      resolve(results[around.begin ? 1 : 0] as pg.QueryResult);
    });
    (client as unknown as { query(q: unknown): void }).query(query);
  });
}
