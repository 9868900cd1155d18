import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { ident } from '@quire/db';
import { createTableStatements, type Meta } from '@quire/meta';
import type { Principal } from '@quire/permissions';
import { countStatement, listStatement, rowsToArrays, type CompiledQuery, type ListParams } from '../src/index';
import { ADMIN, MANAGER, OWNER, TODAY, buildTenant } from './fixtures';

/**
 * The compiled statements against a real Postgres: NULL semantics, every operator, EXISTS child
 * filters, joins and tree CTEs. One throwaway schema per run, dropped afterwards.
 */

const URL = process.env.QUIRE_TEST_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SCHEMA = `q_compile_${process.pid}_${Date.now().toString(36)}`;
const tenant = buildTenant(SCHEMA);
const client = new pg.Client({ connectionString: URL });

const U_OWNER = 'owner@example.com';
const U_MANAGER = 'manager@example.com';

async function insert(meta: Meta, row: Record<string, unknown>): Promise<void> {
  const cols = Object.keys(row);
  const text = `INSERT INTO ${meta.table} (${cols.map(ident).join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`;
  await client.query(text, Object.values(row));
}

async function seed(): Promise<void> {
  const [task, item, note, category, project] = ['Task', 'Task Item', 'Task Note', 'Category', 'Project'].map((d) => tenant.require(d)) as [
    Meta,
    Meta,
    Meta,
    Meta,
    Meta,
  ];
  const categories: [string, string | null][] = [
    ['Root', null],
    ['Books', 'Root'],
    ['Fiction', 'Books'],
    ['Poetry', 'Fiction'],
    ['Tools', 'Root'],
    ['Orphan', ''],
    ['CycA', 'CycB'],
    ['CycB', 'CycA'],
  ];
  for (const [name, parent] of categories) await insert(category, { name, title: `${name} title`, parent_category: parent, owner: U_MANAGER });
  await insert(project, { name: 'P1', title: 'Project One', owner: U_MANAGER });
  await insert(project, { name: 'P2', title: 'Project Two', owner: U_OWNER });
  const tasks: Record<string, unknown>[] = [
    {
      name: 'T1',
      subject: 'Alpha',
      status: 'Open',
      due: '2024-05-10',
      at: '2024-05-15 10:00:00',
      tm: '09:00:00',
      qty: 5,
      amount: 10.5,
      duration: null,
      done: 1,
      data: '{"a":1}',
      category: 'Fiction',
      project: 'P1',
      owner: U_OWNER,
      creation: '2024-05-01 00:00:00',
      secret: 's1',
    },
    {
      name: 'T2',
      subject: null,
      status: null,
      due: null,
      at: null,
      tm: null,
      qty: 0,
      amount: 0,
      duration: 3,
      done: 0,
      data: null,
      category: null,
      project: null,
      owner: U_MANAGER,
      creation: '2024-05-02 00:00:00',
    },
    {
      name: 'T3',
      subject: '',
      status: 'Closed',
      due: '2024-04-20',
      at: '2024-04-30 23:59:59.5',
      tm: '07:30:00',
      qty: 10,
      amount: 99.99,
      done: 0,
      category: 'Tools',
      project: 'P2',
      owner: U_OWNER,
      creation: '2024-05-03 00:00:00',
    },
    {
      name: 'T4',
      subject: 'beta%',
      status: 'Open',
      due: '2024-06-01',
      at: '2024-05-14 00:00:00',
      qty: 2,
      amount: 1,
      done: 1,
      category: 'Books',
      owner: U_OWNER,
      creation: '2024-05-04 00:00:00',
    },
    { name: 'T5', subject: 'gamma', status: 'Closed', due: '2024-05-15', qty: 1, category: 'Orphan', owner: U_MANAGER, creation: '2024-05-05 00:00:00' },
  ];
  for (const t of tasks) await insert(task, t);
  const items: [string, string, string, string, number][] = [
    ['I1', 'T1', 'items', 'a', 1],
    ['I2', 'T1', 'items', 'b', 3],
    ['I3', 'T1', 'extra_items', 'z', 100],
    ['I4', 'T3', 'items', 'a', 7],
    ['I5', 'T2', 'items', 'c', 2],
  ];
  for (const [name, parent, parentfield, it, qty] of items) {
    await insert(item, { name, parent, parentfield, parenttype: 'Task', item: it, qty, idx: Number(name.slice(1)) });
  }
  await insert(note, { name: 'N1', parent: 'T4', parentfield: 'notes', parenttype: 'Task', note: 'hello' });
}

beforeAll(async () => {
  await client.connect();
  await client.query(`CREATE SCHEMA ${ident(SCHEMA)}`);
  for (const meta of tenant.all()) for (const statement of createTableStatements(meta)) await client.query(statement);
  await seed();
});

afterAll(async () => {
  await client.query(`DROP SCHEMA IF EXISTS ${ident(SCHEMA)} CASCADE`);
  await client.end();
});

function context(doctype: string, principal: Principal) {
  return { meta: tenant.require(doctype), tenant, principal, maxPageLength: 100, today: TODAY };
}

async function rows(params: ListParams, doctype = 'Task', principal: Principal = ADMIN): Promise<Record<string, unknown>[]> {
  const q = listStatement(params, context(doctype, principal));
  return (await client.query(q.text, q.values)).rows as Record<string, unknown>[];
}

/** Names matched by filters, sorted by name. */
async function names(filters: unknown, orFilters?: unknown, principal: Principal = ADMIN): Promise<string[]> {
  const result = await rows({ filters, or_filters: orFilters, order_by: 'name asc', limit: 0 }, 'Task', principal);
  return result.map((r) => r.name as string);
}

const run = async (q: CompiledQuery) => (await client.query(q.text, q.values)).rows as Record<string, unknown>[];

describe('NULL semantics', () => {
  it.each([
    [[['status', '=', 'Open']], ['T1', 'T4']],
    [[['status', '!=', 'Open']], ['T2', 'T3', 'T5']],
    [[['status', '=', '']], ['T2']],
    [[['subject', '=', '']], ['T2', 'T3']],
    [[['subject', '!=', '']], ['T1', 'T4', 'T5']],
    [[['status', 'is', 'set']], ['T1', 'T3', 'T4', 'T5']],
    [[['status', 'is', 'not set']], ['T2']],
    [[['due', 'is', 'not set']], ['T2']],
    [[['due', '=', '']], ['T2']],
    [[['due', '<', '2024-05-01']], ['T2', 'T3']],
    [[['due', '>', '2024-05-01']], ['T1', 'T4', 'T5']],
    [[['due', '>=', '2024-05-15']], ['T4', 'T5']],
    [[['due', '!=', '2024-05-10']], ['T2', 'T3', 'T4', 'T5']],
    [[['at', '<', '2024-05-14']], ['T2', 'T3', 'T5']],
    [[['tm', '>', '08:00']], ['T1']],
    [[['tm', '<', '08:00']], ['T2', 'T3', 'T4', 'T5']],
    [[['duration', 'is', 'set']], ['T2']],
    [[['duration', '<', 1]], ['T1', 'T3', 'T4', 'T5']],
    [[['qty', '=', '']], ['T2']],
    [[['amount', '>', 10]], ['T1', 'T3']],
    [[['done', '=', 1]], ['T1', 'T4']],
    [[['data', 'is', 'set']], ['T1']],
    [[['data', '=', '{"a":1}']], ['T1']],
  ])('%j', async (filters, expected) => {
    expect(await names(filters)).toEqual(expected);
  });
});

describe('operators', () => {
  it.each([
    [[['subject', 'like', '%a%']], ['T1', 'T4', 'T5']],
    [[['subject', 'like', 'ALPHA']], ['T1']],
    [[['subject', 'not like', '%a%']], ['T2', 'T3']],
    [[['subject', 'like', 'beta\\%']], ['T4']],
    [[['qty', 'like', '1%']], ['T3', 'T5']],
    [[['due', 'like', '2024-05%']], ['T1', 'T5']],
    [[['data', 'like', '%"a"%']], ['T1']],
    [[['status', 'in', ['Open']]], ['T1', 'T4']],
    [[['status', 'in', 'Open, Closed']], ['T1', 'T3', 'T4', 'T5']],
    [[['status', 'in', []]], ['T2']],
    [[['status', 'not in', ['Open']]], ['T2', 'T3', 'T5']],
    [[['status', 'not in', []]], ['T1', 'T3', 'T4', 'T5']],
    [[['status', 'in', null]], []],
    [[['status', 'not in', null]], ['T1', 'T2', 'T3', 'T4', 'T5']],
    [[['qty', 'in', '1,2']], ['T4', 'T5']],
    [[['due', 'in', ['2024-05-10', '']]], ['T1', 'T2']],
    [[['name', 'in', ['T1', 'T9']]], ['T1']],
    [[['due', 'between', ['2024-05-01', '2024-05-31']]], ['T1', 'T5']],
    [[['due', 'between', ['2024-05-12']]], ['T5']],
    [[['at', 'between', ['2024-05-14', '2024-05-15']]], ['T1', 'T4']],
    [[['at', 'between', ['2024-04-30', '2024-04-30']]], ['T3']],
    [[['qty', 'between', [2, 5]]], ['T1', 'T4']],
    [[['at', 'timespan', 'this week']], ['T1', 'T4']],
    [[['due', 'timespan', 'last month']], ['T3']],
    [[['due', 'timespan', 'next month']], ['T4']],
    [[['due', 'timespan', 'today']], ['T5']],
    [[['due', 'previous', '1 month']], ['T3']],
    [[['creation', 'timespan', 'this month']], ['T1', 'T2', 'T3', 'T4', 'T5']],
    [[['creation', '>=', '2024-05-03']], ['T3', 'T4', 'T5']],
    [[['creation', '>', '2024-05-03']], ['T4', 'T5']],
  ])('%j', async (filters, expected) => {
    expect(await names(filters)).toEqual(expected);
  });

  it('or_filters combine with filters', async () => {
    expect(
      await names({ status: 'Open' }, [
        ['qty', '>', 4],
        ['category', '=', 'Books'],
      ]),
    ).toEqual(['T1', 'T4']);
    expect(await names([['done', '=', 0]], { status: 'Closed', subject: '' })).toEqual(['T2', 'T3', 'T5']);
  });
});

describe('tree operators', () => {
  it.each([
    ['descendants of', 'Books', ['T1']],
    ['descendants of (inclusive)', 'Books', ['T1', 'T4']],
    ['descendants of', 'Root', ['T1', 'T3', 'T4']],
    ['not descendants of', 'Root', ['T2', 'T5']],
    ['ancestors of', 'Fiction', ['T4']],
    ['ancestors of', 'Poetry', ['T1', 'T4']],
    ['not ancestors of', 'Poetry', ['T2', 'T3', 'T5']],
    ['descendants of', 'Nope', []],
  ])('category %s %s', async (op, node, expected) => {
    expect(await names([['category', op, node]])).toEqual(expected);
  });

  it('on the name of a tree DocType, and cycles terminate', async () => {
    const listCat = async (op: string, node: string) =>
      (await rows({ filters: [['name', op, node]], order_by: 'name', limit: 0 }, 'Category')).map((r) => r.name);
    expect(await listCat('descendants of', 'Books')).toEqual(['Fiction', 'Poetry']);
    expect(await listCat('descendants of (inclusive)', 'Books')).toEqual(['Books', 'Fiction', 'Poetry']);
    expect(await listCat('ancestors of', 'Poetry')).toEqual(['Books', 'Fiction', 'Root']);
    expect(await listCat('not ancestors of', 'Poetry')).toEqual(['CycA', 'CycB', 'Orphan', 'Poetry', 'Tools']);
    expect(await listCat('descendants of', 'CycA')).toEqual(['CycA', 'CycB']);
    expect(await listCat('ancestors of', 'CycA')).toEqual(['CycA', 'CycB']);
  });
});

describe('child tables', () => {
  it('EXISTS filters never duplicate parents', async () => {
    expect(await names([['Task Item', 'qty', '>', 2]])).toEqual(['T1', 'T3']);
    expect(await names([['Task Item', 'item', 'in', ['a', 'b']]])).toEqual(['T1', 'T3']);
    expect(await names([['items.qty', '>', 50]])).toEqual([]);
    expect(await names([['extra_items.qty', '>', 50]])).toEqual(['T1']);
    expect(await names([['`tabTask Note`.`note`', 'like', 'hel%']])).toEqual(['T4']);
    expect(await names([['Task Item', 'item', '!=', 'a']])).toEqual(['T1', 'T2']);
  });

  it('table_field.col joins one row per child row', async () => {
    const result = await rows({ fields: ['name', 'items.item', 'items.qty as q', 'extra_items.item'], filters: { name: 'T1' }, order_by: 'items.item' });
    expect(result).toEqual([
      { name: 'T1', 'items.item': 'a', q: '1', 'extra_items.item': 'z' },
      { name: 'T1', 'items.item': 'b', q: '3', 'extra_items.item': 'z' },
    ]);
  });

  it('a child-table list through its parent, with the owner scope of the parent', async () => {
    const all = await rows({ fields: ['name'], parent: 'Task', order_by: 'name', limit: 0 }, 'Task Item', MANAGER);
    expect(all.map((r) => r.name)).toEqual(['I1', 'I2', 'I3', 'I4', 'I5']);
    const own = await rows({ fields: ['name', 'parent'], parent: 'Task', order_by: 'name', limit: 0 }, 'Task Item', OWNER);
    expect(own.map((r) => r.name)).toEqual(['I1', 'I2', 'I3', 'I4']);
    const count = countStatement({ parent: 'Task', filters: { qty: ['>', 2] } }, context('Task Item', OWNER));
    expect(await run(count)).toEqual([{ count: '3' }]);
  });
});

describe('fields', () => {
  it('link joins, with the owner scope of the linked DocType', async () => {
    const admin = await rows({ fields: ['name', 'category.title', 'project.title as pt'], order_by: 'name', limit: 3 });
    expect(admin).toEqual([
      { name: 'T1', 'category.title': 'Fiction title', pt: 'Project One' },
      { name: 'T2', 'category.title': null, pt: null },
      { name: 'T3', 'category.title': 'Tools title', pt: 'Project Two' },
    ]);
    const own = await rows({ fields: ['name', 'project.title'], order_by: 'name' }, 'Task', OWNER);
    expect(own).toEqual([
      { name: 'T1', 'project.title': null },
      { name: 'T3', 'project.title': 'Project Two' },
      { name: 'T4', 'project.title': null },
    ]);
  });

  it('aggregates, group_by and ordering by an alias', async () => {
    const result = await rows({ fields: ['status', 'count(*) as n', 'sum(qty) as q', 'max(due)'], group_by: 'status', order_by: 'n desc, status' });
    expect(result.map((r) => [r.status, r.n, r.q])).toEqual([
      ['Closed', '2', '11'],
      ['Open', '2', '7'],
      [null, '1', '0'],
    ]);
    const [total] = await rows({ fields: ['count(name) as count', 'count(distinct status) as s', 'avg(amount)'] });
    expect(total).toMatchObject({ count: '5', s: '2' });
  });

  it('distinct, *, as_dict=false and the default order', async () => {
    expect((await rows({ fields: ['distinct status'], order_by: 'status' })).map((r) => r.status)).toEqual(['Closed', 'Open', null]);
    const star = await rows({ fields: '*', limit: 1 }, 'Task', MANAGER);
    expect(star[0]?.name).toBe('T5');
    expect(star[0]).not.toHaveProperty('secret');
    const q = listStatement({ fields: ['name', 'status'], as_dict: 'false', limit: 2 }, context('Task', ADMIN));
    expect(rowsToArrays(await run(q), q.keys)).toEqual([
      ['T5', 'Closed'],
      ['T4', 'Open'],
    ]);
  });

  it('limit and offset', async () => {
    const page = await rows({ order_by: 'name', limit_start: 1, limit_page_length: 2 });
    expect(page.map((r) => r.name)).toEqual(['T2', 'T3']);
  });
});

describe('permissions and count', () => {
  it('owner scope', async () => {
    expect(await names(undefined, undefined, OWNER)).toEqual(['T1', 'T3', 'T4']);
    expect(await names({ status: 'Open' }, undefined, OWNER)).toEqual(['T1', 'T4']);
  });

  it('count uses the same WHERE', async () => {
    const count = countStatement({ filters: [['Task Item', 'qty', '>', 0]], or_filters: { status: 'Open', qty: 0 } }, context('Task', OWNER));
    expect(await run(count)).toEqual([{ count: '1' }]);
    expect(await run(countStatement({}, context('Task', ADMIN)))).toEqual([{ count: '5' }]);
  });

  it('hostile values stay values', async () => {
    const hostile = 'x\'); DROP TABLE "tabTask"; --';
    expect(
      await names(
        [
          ['subject', '=', hostile],
          ['status', 'in', [hostile]],
        ],
        [['category', 'descendants of', hostile]],
      ),
    ).toEqual([]);
    expect(await names(undefined)).toHaveLength(5);
  });
});
