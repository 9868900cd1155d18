import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { PG, PgDatabase, PgliteDatabase, pgErrorInfo, qualified, type Database, type DeferredWrite, type Transaction } from '../src/index';

/**
 * Both drivers behind the Database seam must behave the same: the same SQL, the same value shapes,
 * the same transaction semantics. Every test here runs against real Postgres and embedded PGlite.
 */

const drivers: Array<[string, () => Promise<Database>]> = [
  ['postgres', () => Promise.resolve(new PgDatabase({ connectionString: inject('databaseUrl'), poolSize: 4 }))],
  ['pglite', () => PgliteDatabase.open()],
];

describe.each(drivers)('%s driver', (_kind, open) => {
  let db: Database;
  const schema = `drv_${randomBytes(4).toString('hex')}`;
  const t = qualified(schema, 'things');
  beforeAll(async () => {
    db = await open();
    await db.query(`CREATE SCHEMA ${schema}`);
    await db.query(
      `CREATE TABLE ${t} (name varchar(140) PRIMARY KEY, n bigint, amount numeric(21,9), d date, ts timestamp(6), tm time(6), j json, b smallint)`,
    );
  });
  afterAll(async () => {
    await db.query(`DROP SCHEMA ${schema} CASCADE`);
    await db.close();
  });

  it('returns values in Frappe wire shapes', async () => {
    await db.query(`INSERT INTO ${t} VALUES ($1, $2, $3, $4::date, $5::timestamp, $6::time, $7::json, $8)`, [
      'a',
      42,
      12.5,
      '2024-02-29',
      '2024-02-29 13:14:15.5',
      '08:09:10',
      { k: [1, 2] },
      1,
    ]);
    const { rows } = await db.query(`SELECT * FROM ${t} WHERE name = $1`, ['a']);
    expect(rows[0]).toEqual({ name: 'a', n: 42, amount: 12.5, d: '2024-02-29', ts: '2024-02-29 13:14:15.500000', tm: '08:09:10', j: '{"k":[1,2]}', b: 1 });
    const whole = await db.query<{ ts: string }>(`SELECT '2024-01-01 00:00:00'::timestamp(6) AS ts`);
    expect(whole.rows[0]!.ts).toBe('2024-01-01 00:00:00');
  });

  it('a prepared statement run again and again keeps its values’ shapes, in and out of transactions, with rows or without', async () => {
    const name = `p${randomBytes(4).toString('hex')}`;
    const row = { name, n: 7, amount: 1.25, d: '2024-03-01', ts: '2024-03-01 10:11:12.000001', tm: '08:09:10', j: '{"a":1}', b: 1 };
    const select = `SELECT * FROM ${t} WHERE name = $1`;
    const insert = `INSERT INTO ${t} VALUES ($1, $2, $3, $4::date, $5::timestamp, $6::time, $7::json, $8)`;
    // More runs than the pool has connections, so each connection runs it more than once.
    expect((await db.query(select, [name], { prepare: true })).rows).toEqual([]);
    await db.query(insert, Object.values(row), { prepare: true });
    for (let i = 0; i < 10; i++) expect((await db.query(select, [name], { prepare: true })).rows).toEqual([row]);
    for (let i = 0; i < 10; i++) {
      const seen = await db.transaction(async (tx) => {
        // The first statement carries BEGIN; the second is inside the open transaction.
        const first = await tx.query(select, [name], { prepare: true });
        const none = await tx.query(select, [`${name}-none`], { prepare: true });
        const update = await tx.query(`UPDATE ${t} SET n = $2 WHERE name = $1`, [name, 7 + i], { prepare: true });
        const second = await tx.query(select, [name], { prepare: true });
        return { first: first.rows, none: none.rows, updated: update.rowCount, second: second.rows };
      });
      expect(seen).toEqual({ first: [{ ...row, n: 7 + Math.max(0, i - 1) }], none: [], updated: 1, second: [{ ...row, n: 7 + i }] });
    }
    const counted = await db.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${t} WHERE name = $1`, [name], { prepare: true });
    expect(counted.rows).toEqual([{ count: 1 }]);
  });

  it('binds arrays as Postgres arrays', async () => {
    const { rows } = await db.query<{ hit: boolean }>(`SELECT 'b' = ANY($1::text[]) AS hit`, [['a', 'b']]);
    expect(rows[0]!.hit).toBe(true);
  });

  it('commits a transaction and runs afterCommit callbacks after it', async () => {
    const seen: string[] = [];
    await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO ${t} (name) VALUES ('c1')`);
      tx.afterCommit(() => seen.push('after'));
      seen.push('inside');
    });
    expect(seen).toEqual(['inside', 'after']);
    expect((await db.query(`SELECT name FROM ${t} WHERE name = 'c1'`)).rowCount).toBe(1);
  });

  it('rolls a failed transaction back entirely and skips afterCommit', async () => {
    let ran = false;
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${t} (name) VALUES ('r1')`);
        tx.afterCommit(() => (ran = true));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(ran).toBe(false);
    expect((await db.query(`SELECT name FROM ${t} WHERE name = 'r1'`)).rowCount).toBe(0);
  });

  it('nests transactions as savepoints', async () => {
    await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO ${t} (name) VALUES ('s1')`);
      await expect(
        tx.transaction(async (inner) => {
          await inner.query(`INSERT INTO ${t} (name) VALUES ('s2')`);
          throw new Error('inner');
        }),
      ).rejects.toThrow('inner');
      await tx.transaction(async (inner) => {
        await inner.query(`INSERT INTO ${t} (name) VALUES ('s3')`);
      });
    });
    const { rows } = await db.query<{ name: string }>(`SELECT name FROM ${t} WHERE name LIKE 's%' ORDER BY name`);
    expect(rows.map((r) => r.name)).toEqual(['s1', 's3']);
  });

  describe('deferred writes', () => {
    const insert = (name: string, n: number): DeferredWrite => ({
      text: `INSERT INTO ${t} (name, n) VALUES ($1, $2)`,
      values: [name, n],
      table: 'things',
      row: name,
      mapError: (e) => (pgErrorInfo(e)?.code === PG.uniqueViolation ? new Error(`duplicate ${name}`) : e),
    });
    const update = (name: string, n: number): DeferredWrite => ({
      text: `UPDATE ${t} SET n = $2 WHERE name = $1`,
      values: [name, n],
      table: 'things',
      row: name,
    });
    const values = async (...names: string[]) =>
      (await db.query<{ name: string; n: number }>(`SELECT name, n FROM ${t} WHERE name = ANY($1::text[]) ORDER BY name`, [names])).rows;
    const id = () => `d${randomBytes(4).toString('hex')}`;
    /** A transaction that only defers `writes`. */
    const deferring =
      (...writes: DeferredWrite[]) =>
      (tx: Transaction): Promise<void> => {
        for (const w of writes) tx.defer(w);
        return Promise.resolve();
      };

    it('commits writes made only of deferred ones, together', async () => {
      const [a, b, c] = [id(), id(), id()];
      await db.transaction(deferring(insert(a, 1), insert(b, 2), insert(c, 3)));
      expect(await values(a, b, c)).toEqual([a, b, c].sort().map((name) => ({ name, n: { [a]: 1, [b]: 2, [c]: 3 }[name] })));
    });

    it('sends them before the next statement, which sees them', async () => {
      const a = id();
      const seen = await db.transaction(async (tx) => {
        tx.defer(insert(a, 7));
        return (await tx.query<{ n: number }>(`SELECT n FROM ${t} WHERE name = $1`, [a])).rows;
      });
      expect(seen).toEqual([{ n: 7 }]);
    });

    it('keeps the order of two writes to one row (never one statement)', async () => {
      const a = id();
      await db.transaction(deferring(insert(a, 1), update(a, 2)));
      expect(await values(a)).toEqual([{ name: a, n: 2 }]);
    });

    it("a failing write fails the transaction with that write's own error, and nothing is written", async () => {
      const [a, b, taken] = [id(), id(), id()];
      await db.query(`INSERT INTO ${t} (name) VALUES ($1)`, [taken]);
      // Only deferred writes (one statement, committed by itself), then after a statement (inside BEGIN).
      await expect(db.transaction(deferring(insert(a, 1), insert(taken, 2), insert(b, 3)))).rejects.toThrow(`duplicate ${taken}`);
      await expect(
        db.transaction(async (tx) => {
          await tx.query('SELECT 1');
          tx.defer(insert(a, 1));
          tx.defer(insert(taken, 2));
        }),
      ).rejects.toThrow(`duplicate ${taken}`);
      expect(await values(a, b)).toEqual([]);
    });

    it('the first statement already runs inside the transaction (BEGIN goes with it)', async () => {
      const [first, second] = await db.transaction(async (tx) => {
        const a = await tx.query<{ t: string }>('SELECT now()::text AS t');
        await new Promise((r) => setTimeout(r, 5));
        const b = await tx.query<{ t: string }>('SELECT now()::text AS t');
        return [a.rows[0]!.t, b.rows[0]!.t];
      });
      expect(second).toBe(first); // now() is the transaction's start
    });

    it('a read, then deferred writes committed with the last of them; a failure there commits nothing', async () => {
      const [a, b, taken] = [id(), id(), id()];
      await db.query(`INSERT INTO ${t} (name, n) VALUES ($1, 1)`, [a]);
      await db.transaction(async (tx) => {
        const { rows } = await tx.query<{ n: number }>(`SELECT n FROM ${t} WHERE name = $1 FOR UPDATE`, [a]);
        tx.defer(update(a, rows[0]!.n + 1));
        tx.defer(insert(b, 1));
      });
      expect(await values(a, b)).toEqual([a, b].sort().map((name) => ({ name, n: name === a ? 2 : 1 })));
      await db.query(`INSERT INTO ${t} (name) VALUES ($1)`, [taken]);
      await expect(
        db.transaction(async (tx) => {
          await tx.query(`SELECT n FROM ${t} WHERE name = $1 FOR UPDATE`, [a]);
          tx.defer(update(a, 10));
          tx.defer(insert(taken, 1));
        }),
      ).rejects.toThrow(`duplicate ${taken}`);
      expect((await values(a))[0]!.n).toBe(2);
      // The session went back to the pool usable: the next transaction on it works.
      await db.transaction(async (tx) => {
        await tx.query(`UPDATE ${t} SET n = 3 WHERE name = $1`, [a]);
      });
      expect((await values(a))[0]!.n).toBe(3);
    });

    it('a failing first statement leaves nothing open', async () => {
      await expect(db.transaction((tx) => tx.query('SELECT * FROM no_such_table'))).rejects.toThrow();
      const { rows } = await db.query<{ n: number }>('SELECT 1 AS n');
      expect(rows).toEqual([{ n: 1 }]);
    });

    it('drops what a failed savepoint deferred, keeps the rest', async () => {
      const [a, b] = [id(), id()];
      await db.transaction(async (tx) => {
        tx.defer(insert(a, 1));
        await tx
          .savepoint((inner) => {
            inner.defer(insert(b, 2));
            return Promise.reject(new Error('no'));
          })
          .catch(() => undefined);
      });
      expect(await values(a, b)).toEqual([{ name: a, n: 1 }]);
    });

    it('sends nothing for a transaction that throws', async () => {
      const a = id();
      await expect(
        db.transaction((tx) => {
          tx.defer(insert(a, 1));
          return Promise.reject(new Error('changed my mind'));
        }),
      ).rejects.toThrow('changed my mind');
      expect(await values(a)).toEqual([]);
    });
  });

  it('delivers a NOTIFY sent inside a transaction only after it commits', async () => {
    const got: string[] = [];
    const unlisten = await db.listen('drv_test', { onMessage: (p) => got.push(p) });
    await db.transaction(async (tx) => {
      await tx.query(`SELECT pg_notify('drv_test', 'hello')`);
      await new Promise((r) => setTimeout(r, 50));
      expect(got).toEqual([]);
    });
    for (let i = 0; i < 50 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(got).toEqual(['hello']);
    await unlisten();
  });

  it('serves concurrent callers while a transaction is open', async () => {
    const results = await Promise.all([
      db.transaction(async (tx) => {
        await tx.query(`INSERT INTO ${t} (name) VALUES ('k1')`);
        await new Promise((r) => setTimeout(r, 30));
        return 'tx';
      }),
      db.query<{ one: number }>('SELECT 1 AS one').then((r) => r.rows[0]!.one),
    ]);
    expect(results).toEqual(['tx', 1]);
  });
});

describe('embedded data folder', () => {
  it('refuses a second process-level open of the same folder', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-pglite-'));
    const first = await PgliteDatabase.open(dir);
    try {
      fs.writeFileSync(path.join(dir, 'quire.lock'), String(process.ppid)); // a live process holds it
      await expect(PgliteDatabase.open(dir)).rejects.toThrow(/in use by process/);
    } finally {
      fs.writeFileSync(path.join(dir, 'quire.lock'), String(process.pid));
      await first.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps committed data across a reopen', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-pglite-'));
    try {
      const a = await PgliteDatabase.open(dir);
      await a.query('CREATE TABLE kept (v text)');
      await a.query(`INSERT INTO kept VALUES ('still here')`);
      await a.close();
      const b = await PgliteDatabase.open(dir);
      expect((await b.query<{ v: string }>('SELECT v FROM kept')).rows).toEqual([{ v: 'still here' }]);
      await b.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('idle Postgres connections', () => {
  it('are kept for DB_POOL_IDLE_SECONDS, then closed', async () => {
    const kept = new PgDatabase({ connectionString: inject('databaseUrl'), poolSize: 2 });
    const short = new PgDatabase({ connectionString: inject('databaseUrl'), poolSize: 2, idleSeconds: 1 });
    try {
      for (const db of [kept, short]) await Promise.all([db.query('SELECT pg_sleep(0.05)'), db.query('SELECT pg_sleep(0.05)')]);
      expect(kept.poolStats()).toMatchObject({ total: 2, idle: 2 });
      await new Promise((r) => setTimeout(r, 1500));
      expect(short.poolStats()).toMatchObject({ total: 0 });
      // The default (300 s) keeps them.
      expect(kept.poolStats()).toMatchObject({ total: 2, idle: 2 });
    } finally {
      await Promise.all([kept.close(), short.close()]);
    }
  });
});

describe('closing the Postgres pool', () => {
  it('lets statements in flight and waiting for a connection finish first, up to the time it is given', async () => {
    const db = new PgDatabase({ connectionString: inject('databaseUrl'), poolSize: 1 });
    const running = db.query('SELECT pg_sleep(0.3) AS slept');
    const waiting = db.query('SELECT 1 AS n'); // queued behind the first: the pool has one connection
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await db.close(5000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    await expect(running).resolves.toMatchObject({ rows: [{ slept: '' }] });
    await expect(waiting).resolves.toMatchObject({ rows: [{ n: 1 }] });
    await expect(db.query('SELECT 1')).rejects.toThrow();
  });

  it('stops waiting after the time it is given', async () => {
    const db = new PgDatabase({ connectionString: inject('databaseUrl'), poolSize: 1 });
    const running = db.query('SELECT pg_sleep(2)').catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await db.close(200);
    expect(Date.now() - started).toBeLessThan(1900);
    await running;
  });
});

describe('prepared statements on a Postgres connection', () => {
  it('keeps at most preparedPerConnection, closing the least recently used; an evicted one is prepared again when used', async () => {
    const PREPARED_PER_CONNECTION = 300;
    const db = new PgDatabase({ connectionString: inject('databaseUrl'), poolSize: 1, preparedPerConnection: PREPARED_PER_CONNECTION });
    try {
      const statement = (i: number) => `SELECT $1::int + ${i} AS n`;
      const extra = 5;
      for (let i = 0; i < PREPARED_PER_CONNECTION + extra; i++) {
        const { rows } = await db.query<{ n: number }>(statement(i), [1], { prepare: true });
        expect(rows[0]?.n).toBe(i + 1);
        if (i === 0) await db.query(statement(0), [1], { prepare: true }); // the first, used again: kept over the second
      }
      const kept = async () =>
        (await db.query<{ statement: string }>(`SELECT statement FROM pg_prepared_statements WHERE statement LIKE 'SELECT $1::int + %'`)).rows.map(
          (r) => r.statement,
        );
      const before = await kept();
      expect(before).toHaveLength(PREPARED_PER_CONNECTION);
      expect(before).not.toContain(statement(1)); // least recently used: closed
      expect(before).toContain(statement(PREPARED_PER_CONNECTION + extra - 1));
      // Evicted statements answer again (parsed anew, evicting others in turn).
      for (let i = 1; i <= extra; i++) {
        const { rows } = await db.query<{ n: number }>(statement(i), [2], { prepare: true });
        expect(rows[0]?.n).toBe(i + 2);
      }
      expect(await kept()).toHaveLength(PREPARED_PER_CONNECTION);
    } finally {
      await db.close();
    }
  });

  it('prepares nothing when preparedPerConnection is 0', async () => {
    const db = new PgDatabase({ connectionString: inject('databaseUrl'), poolSize: 1, preparedPerConnection: 0 });
    try {
      await db.query('SELECT $1::int AS unprepared_probe', [1], { prepare: true });
      const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM pg_prepared_statements WHERE statement LIKE '%unprepared_probe%'`);
      expect(Number(rows[0]?.n)).toBe(0);
    } finally {
      await db.close();
    }
  });
});
