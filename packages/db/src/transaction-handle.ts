import type { AfterCommitQueue } from './context';
import type { DeferredWrite, QueryOptions, QueryResult, Transaction } from './database';
import { pgErrorInfo } from './pg-errors';
import { ident } from './sql';

/** One database session as a transaction handle drives it. */
export interface Session {
  query<R>(text: string, values: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>>;
  /** Parameterless SQL, possibly several `;`-separated statements. */
  exec(sql: string): Promise<unknown>;
  /**
   * `query` with BEGIN before it and/or COMMIT after it in the same round trip (pg-query.ts),
   * when the driver can; without it they are statements of their own.
   */
  queryAround?<R>(
    text: string,
    values: readonly unknown[],
    options: QueryOptions | undefined,
    around: { begin: boolean; commit: boolean },
  ): Promise<QueryResult<R>>;
}

export interface HandleOptions {
  /**
   * The driver has not sent BEGIN: the handle sends it before the first statement that needs it,
   * and a transaction made only of deferred writes that fit one statement runs as that statement
   * alone (one round trip, atomic by itself) with no BEGIN or COMMIT at all.
   */
  lazyBegin: boolean;
  /** Run a batch of deferred writes as one statement (data-modifying CTEs) instead of one by one. */
  fuse: boolean;
}

/**
 * A transaction over one session. Beside `query`, a write whose result nobody reads can be deferred
 * (`defer`): it is sent just before the transaction's next statement, or at commit, and consecutive
 * deferred writes go as one statement. A document insert and its webhook outbox row are then one
 * round trip instead of four (BEGIN, INSERT, INSERT, COMMIT): on a loopback connection each round
 * trip is two syscalls and a wake-up of the server, the largest cost of a write (npm run bench -- writes).
 *
 * Ordering is kept: any statement the transaction runs sees every write deferred before it, and
 * two writes to one row are never fused (a statement's CTEs share one snapshot). A deferred
 * write's error surfaces from the statement or commit that sent it, mapped by its own `mapError`.
 */
export class TransactionHandle implements Transaction {
  /** The transaction is open on the server, or BEGIN rides on the next statement (`carryBegin`). */
  private begun: boolean;
  private carryBegin = false;
  /** Writes not sent yet, in batches that may each be fused (a batch never writes one row twice). */
  private batches: DeferredWrite[][] = [];
  private savepoints = 0;

  constructor(
    private readonly session: Session,
    private readonly afterCommitQueue: AfterCommitQueue,
    private readonly options: HandleOptions,
  ) {
    this.begun = !options.lazyBegin;
  }

  async query<R>(text: string, values: readonly unknown[] = [], options?: QueryOptions): Promise<QueryResult<R>> {
    this.open();
    if (this.batches.length > 0) await this.flush(false);
    return this.statement<R>(text, values, options, false);
  }

  defer(write: DeferredWrite): void {
    const last = this.batches.at(-1);
    if (last && !last.some((w) => w.row === write.row)) last.push(write);
    else this.batches.push([write]);
  }

  afterCommit(fn: () => void): void {
    this.afterCommitQueue.push(fn);
  }

  async script(sql: string): Promise<void> {
    this.open();
    if (this.batches.length > 0) await this.flush(false);
    await this.exec(sql);
  }

  readonly savepoint = async <S>(inner: (t: Transaction) => Promise<S>): Promise<S> => {
    this.open();
    if (this.batches.length > 0) await this.flush(false);
    const sp = ident(`sp_${++this.savepoints}`);
    await this.exec(`SAVEPOINT ${sp}`);
    try {
      const result = await inner(this);
      await this.flush(false); // writes deferred inside the savepoint belong to it
      await this.exec(`RELEASE SAVEPOINT ${sp}`);
      return result;
    } catch (e) {
      this.batches = [];
      await this.exec(`ROLLBACK TO SAVEPOINT ${sp}`);
      throw e;
    }
  };

  readonly transaction = this.savepoint;

  /** Sends what is deferred and, when this handle began the transaction, commits it. */
  async commit(): Promise<void> {
    if (!this.begun) {
      const [only, ...more] = this.batches;
      if (!only) return; // nothing was read or written: nothing to send
      if (more.length === 0) {
        this.batches = [];
        await this.autocommit(only);
        return;
      }
      this.open();
    }
    const commit = this.options.lazyBegin;
    if (this.batches.length > 0) await this.flush(commit);
    else if (commit) await this.exec('COMMIT');
  }

  /** Abandons the transaction: what is deferred is dropped, and a begun transaction rolled back. */
  async rollback(): Promise<void> {
    this.batches = [];
    if (!this.begun || !this.options.lazyBegin) return;
    this.begun = false;
    if (this.carryBegin)
      this.carryBegin = false; // never reached the server
    else await this.session.exec('ROLLBACK');
  }

  /** The transaction is open from here on: BEGIN goes with the next statement. */
  private open(): void {
    if (this.begun) return;
    this.begun = true;
    this.carryBegin = true;
  }

  /** One statement, carrying the pending BEGIN and, with `commit`, the COMMIT. */
  private statement<R>(text: string, values: readonly unknown[], options: QueryOptions | undefined, commit: boolean): Promise<QueryResult<R>> {
    const begin = this.carryBegin;
    this.carryBegin = false;
    if (!begin && !commit) return this.session.query<R>(text, values, options);
    if (this.session.queryAround) return this.session.queryAround<R>(text, values, options, { begin, commit });
    return this.separately<R>(text, values, options, begin, commit);
  }

  private async separately<R>(
    text: string,
    values: readonly unknown[],
    options: QueryOptions | undefined,
    begin: boolean,
    commit: boolean,
  ): Promise<QueryResult<R>> {
    if (begin) await this.session.exec('BEGIN');
    const result = await this.session.query<R>(text, values, options);
    if (commit) await this.session.exec('COMMIT');
    return result;
  }

  /** Parameterless SQL; a pending BEGIN goes in the same round trip. */
  private exec(sql: string): Promise<unknown> {
    const begin = this.carryBegin;
    this.carryBegin = false;
    return this.session.exec(begin ? `BEGIN; ${sql}` : sql);
  }

  /** Sends every deferred batch; with `commit`, the COMMIT rides on the last statement. */
  private async flush(commit: boolean): Promise<void> {
    const runs = this.batches.splice(0).flatMap((batch) => (this.options.fuse ? distinctTableRuns(batch) : batch.map((w) => [w])));
    for (let i = 0; i < runs.length; i++) await this.send(runs[i] as DeferredWrite[], commit && i === runs.length - 1);
  }

  /**
   * A run of writes inside the transaction: one statement when the driver fuses. A run writes
   * distinct tables (distinctTableRuns), so the table a constraint error names is the write that
   * failed (a transaction that failed cannot run its writes again one by one to find out).
   */
  private async send(run: DeferredWrite[], commit: boolean): Promise<void> {
    const [first] = run;
    if (first && run.length === 1) {
      await this.sendOne(first, commit);
      return;
    }
    const { text, values } = fuse(run);
    try {
      await this.statement(text, values, { prepare: preparable(run) }, commit);
    } catch (e) {
      throw attribute(e, run);
    }
  }

  private async sendOne(w: DeferredWrite, commit: boolean): Promise<void> {
    try {
      await this.statement(w.text, w.values, { prepare: true }, commit);
    } catch (e) {
      throw w.mapError ? w.mapError(e) : e;
    }
  }

  /**
   * The whole transaction is one batch: one statement, committed by itself. Should it fail, the
   * writes run again one by one in a transaction, so that the error is the one write's own (and
   * the outcome is a sequential run's, whatever made the single statement fail).
   */
  private async autocommit(batch: DeferredWrite[]): Promise<void> {
    const [first] = batch;
    if (first && batch.length === 1) return this.sendOne(first, false);
    if (this.options.fuse) {
      const { text, values } = fuse(batch);
      try {
        await this.session.query(text, values, { prepare: preparable(batch) });
        return;
      } catch {
        // replayed below
      }
    }
    this.open();
    for (let i = 0; i < batch.length; i++) await this.sendOne(batch[i] as DeferredWrite, i === batch.length - 1);
  }
}

/**
 * A fused text is kept prepared when the batch is small: a document and its outbox rows repeat, while
 * a document with many child rows makes a text per row count.
 */
function preparable(batch: readonly DeferredWrite[]): boolean {
  return batch.length <= 8;
}

/**
 * Deferred writes as one statement: all but the last as data-modifying CTEs, the last as the main
 * statement, each one's `$n` renumbered after the parameters of those before it.
 */
export function fuse(batch: readonly DeferredWrite[]): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  for (const w of batch) for (const v of w.values) values.push(v);
  return { text: fusedText(batch), values };
}

/** Fused texts by their writes' texts (a trie of Maps: the texts are the same strings write after write). */
interface TextNode {
  next: Map<string, TextNode>;
  text?: string;
}
const fusedTexts: TextNode = { next: new Map() };
const MAX_FUSED_TEXTS = 1000;
let fusedCount = 0;

function fusedText(batch: readonly DeferredWrite[]): string {
  let node: TextNode | undefined = fusedTexts;
  for (const w of batch) {
    let child: TextNode | undefined = node.next.get(w.text);
    if (!child) {
      // Batches of many child rows make a text per row count: past the bound, texts are not kept.
      if (fusedCount >= MAX_FUSED_TEXTS) return composeFused(batch);
      node.next.set(w.text, (child = { next: new Map() }));
    }
    node = child;
  }
  if (node.text === undefined) {
    node.text = composeFused(batch);
    fusedCount++;
  }
  return node.text;
}

function composeFused(batch: readonly DeferredWrite[]): string {
  let offset = 0;
  const parts = batch.map((w) => {
    const text = renumber(w.text, offset);
    offset += w.values.length;
    return text;
  });
  const main = parts.pop() ?? '';
  return `WITH ${parts.map((p, i) => `w${i + 1} AS (${p})`).join(', ')} ${main}`;
}

/** `$n` -> `$(n + offset)` outside quoted strings and identifiers. */
function renumber(text: string, offset: number): string {
  if (offset === 0) return text;
  return text.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|\$(\d+)/g, (match, n: string | undefined) => (n === undefined ? match : `$${Number(n) + offset}`));
}

/** Consecutive runs of a batch in which no table is written twice. */
function distinctTableRuns(batch: readonly DeferredWrite[]): DeferredWrite[][] {
  const runs: DeferredWrite[][] = [];
  let tables = new Set<string>();
  for (const w of batch) {
    const last = runs.at(-1);
    if (last && !tables.has(w.table)) last.push(w);
    else {
      runs.push([w]);
      tables = new Set();
    }
    tables.add(w.table);
  }
  return runs;
}

/**
 * The error of a fused run as the write it came from maps it: the one writing the table the error
 * names (constraint errors name it; each table is written once per run), else the first write whose
 * mapper recognises it (a value out of range names no table).
 */
function attribute(e: unknown, run: readonly DeferredWrite[]): unknown {
  const table = pgErrorInfo(e)?.table;
  const named = table === undefined ? undefined : run.find((w) => w.table === table);
  if (named) return named.mapError ? named.mapError(e) : e;
  for (const w of run) {
    const mapped = w.mapError ? w.mapError(e) : e;
    if (mapped !== e) return mapped;
  }
  return e;
}
