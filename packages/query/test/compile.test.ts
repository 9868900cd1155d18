import { describe, it, expect } from 'vitest';
import { countStatement, listStatement, type ListParams } from '../src/index';
import { ADMIN, OWNER, buildTenant, ctx, list } from './fixtures';

describe('statement shape', () => {
  it('SELECT … FROM … m [joins] WHERE … [GROUP BY] ORDER BY … LIMIT $ OFFSET $', () => {
    const q = list(
      {
        fields: '["status", "items.item", "count(*) as n", "sum(items.qty) as total"]',
        filters: '[["status", "!=", "Closed"], ["Task Item", "qty", ">", 0]]',
        or_filters: '{"due": ["timespan", "this month"], "category": ["descendants of (inclusive)", "Root"]}',
        group_by: 'status, items.item',
        order_by: 'total desc, status',
        limit_start: '10',
        limit_page_length: '5',
        as_dict: '0',
      },
      'Task',
      OWNER,
    );
    expect(q.text).toBe(
      'SELECT m."status" AS "status", c1."item" AS "items.item", count(*) AS "n", sum(c1."qty") AS "total"' +
        ' FROM "t_test"."tabTask" m' +
        ' LEFT JOIN "t_test"."tabTask Item" c1 ON c1."parent" = m."name" AND c1."parenttype" = $1 AND c1."parentfield" = $2' +
        ` WHERE coalesce(m."status", '') <> $3::text` +
        ' AND EXISTS (SELECT 1 FROM "t_test"."tabTask Item" c WHERE c."parent" = m."name" AND c."parenttype" = $4 AND c."qty" > $5::bigint)' +
        ` AND (coalesce(m."due", '0001-01-01'::date) BETWEEN $6::date AND $7::date` +
        ` OR coalesce(m."category", '') IN (WITH RECURSIVE _tree(name) AS (SELECT t."name" FROM "t_test"."tabCategory" t WHERE t."name" = $8::text UNION SELECT t."name" FROM "t_test"."tabCategory" t JOIN _tree ON t."parent_category" = _tree.name) SELECT name FROM _tree))` +
        ' AND m."owner" = $9' +
        ' GROUP BY m."status", c1."item"' +
        ' ORDER BY "total" DESC, m."status" ASC' +
        ' LIMIT $10 OFFSET $11',
    );
    expect(q.values).toEqual(['Task', 'items', 'Closed', 'Task', 0, '2024-05-01', '2024-05-31', 'Root', 'owner@example.com', 5, 10]);
    expect(q.asDict).toBe(false);
    expect(q.keys).toEqual(['status', 'items.item', 'n', 'total']);
  });

  it('placeholders are numbered $1…$n in order of appearance, each used once', () => {
    const q = list({
      fields: ['name', 'items.qty', 'notes.note'],
      filters: [
        ['qty', 'in', [1, 2]],
        ['items.item', '=', 'x'],
        ['due', 'between', ['2024-01-01', '2024-02-01']],
      ],
      or_filters: [
        ['subject', 'like', 'a%'],
        ['status', 'is', 'set'],
        ['amount', '>', 3],
      ],
    });
    const numbers = [...q.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]));
    expect(numbers).toEqual(Array.from({ length: q.values.length }, (_, i) => i + 1));
  });

  it('no value is ever embedded in the text', () => {
    const hostile = 'x\'); DROP TABLE "tabTask"; --';
    const q = list({
      filters: [
        ['subject', '=', hostile],
        ['status', 'in', [hostile]],
        ['subject', 'like', hostile],
        ['Task Item', 'item', '!=', hostile],
      ],
      or_filters: { category: ['descendants of', hostile] },
    });
    expect(q.text).not.toContain('DROP');
    expect(q.values.filter((v) => v === hostile || (Array.isArray(v) && v.includes(hostile)))).toHaveLength(5);
  });

  it('the same parameter shape gives the same text (prepared-statement key)', () => {
    const shape = (status: string, qty: number, start: number): ListParams => ({
      fields: ['name', 'status', 'items.qty'],
      filters: [
        ['status', '=', status],
        ['qty', '>', qty],
      ],
      limit_start: start,
    });
    const a = list(shape('Open', 1, 0));
    const b = list(shape('Closed', 99, 40));
    expect(a.text).toBe(b.text);
    expect(a.values).not.toEqual(b.values);
    // a fresh tenant (reloaded metadata) compiles identically too
    const t2 = buildTenant();
    const c = listStatement(shape('Open', 1, 0), { ...ctx(), meta: t2.require('Task'), tenant: t2 });
    expect(c).toEqual(a);
  });

  it('compiling twice is pure', () => {
    const params: ListParams = { fields: '["*"]', filters: '{"status":"Open"}' };
    expect(list(params)).toEqual(list(params));
  });
});

describe('compileCount', () => {
  it('counts with the same WHERE as the list', () => {
    const params = {
      filters: { status: 'Open' },
      or_filters: [
        ['qty', '>', 1],
        ['Task Item', 'qty', '=', 2],
      ],
    };
    const count = countStatement(params, ctx('Task', OWNER));
    expect(count.text).toBe(
      'SELECT count(*) AS "count" FROM "t_test"."tabTask" m WHERE m."status" = $1::text' +
        ' AND (m."qty" > $2::bigint OR EXISTS (SELECT 1 FROM "t_test"."tabTask Item" c WHERE c."parent" = m."name" AND c."parenttype" = $3 AND c."qty" = $4::bigint))' +
        ' AND m."owner" = $5',
    );
    expect(count.values).toEqual(['Open', 1, 'Task', 2, 'owner@example.com']);
    const listed = list(params, 'Task', OWNER);
    const whereOf = (text: string) => text.slice(text.indexOf(' WHERE '), text.indexOf(' ORDER BY '));
    expect(whereOf(listed.text)).toBe(count.text.slice(count.text.indexOf(' WHERE ')));
  });

  it('no filters → WHERE TRUE', () => {
    expect(countStatement({}, ctx('Task', ADMIN))).toEqual({ text: 'SELECT count(*) AS "count" FROM "t_test"."tabTask" m WHERE TRUE', values: [] });
  });

  it('works without a maxPageLength or today', () => {
    const { maxPageLength: _unused, today: _t, ...rest } = ctx();
    expect(countStatement({ filters: { due: ['timespan', 'today'] } }, rest).values).toHaveLength(2);
  });
});
