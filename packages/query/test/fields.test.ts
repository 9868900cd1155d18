import { describe, it, expect } from 'vitest';
import { DataError, PermissionError } from '@quire/errors';
import { ADMIN, MANAGER, OWNER, SECRET_READER, list, thrown } from './fixtures';

const T = '"t_test"."tabTask"';
const ITEM = '"t_test"."tabTask Item"';

/** The SELECT list of a compiled list. */
const selectOf = (text: string) => text.slice('SELECT '.length, text.indexOf(` FROM ${T} m`));
/** The join clauses between `FROM … m` and WHERE. */
const joinsOf = (text: string) => text.slice(text.indexOf(` FROM ${T} m`) + ` FROM ${T} m`.length, text.indexOf(' WHERE '));

describe('fields: plain columns', () => {
  it('compiles a column list with AS keys', () => {
    const q = list({ fields: ['name', 'status', 'modified'] });
    expect(q.text).toBe(
      `SELECT m."name" AS "name", m."status" AS "status", m."modified" AS "modified" FROM ${T} m WHERE TRUE ORDER BY m."creation" DESC LIMIT $1 OFFSET $2`,
    );
    expect(q.keys).toEqual(['name', 'status', 'modified']);
  });

  it.each([
    ['`status`', 'status'],
    ['  status  ', 'status'],
    ['`tabTask`.`status`', 'status'],
    ['tabTask.status', 'status'],
    ['`tabTask`.status', 'status'],
    ['tabTask.`status`', 'status'],
  ])('%s → m."status" keyed %s', (field, key) => {
    const q = list({ fields: [field] });
    expect(selectOf(q.text)).toBe(`m."status" AS "${key}"`);
    expect(q.keys).toEqual([key]);
  });

  it('* expands to every readable column in table order', () => {
    const q = list({ fields: ['*'] }, 'Task', MANAGER);
    expect(q.keys).toEqual([
      'name',
      'owner',
      'creation',
      'modified',
      'modified_by',
      'docstatus',
      'idx',
      '_user_tags',
      '_comments',
      '_assign',
      '_liked_by',
      'subject',
      'status',
      'description',
      'due',
      'at',
      'tm',
      'qty',
      'amount',
      'duration',
      'done',
      'data',
      'category',
      'project',
      'vault',
    ]);
    expect(selectOf(q.text).startsWith('m."name" AS "name", m."owner" AS "owner"')).toBe(true);
    expect(list({ fields: ['*'] }, 'Task', SECRET_READER).keys).toContain('secret');
    expect(list({ fields: ['*'] }, 'Task', ADMIN).keys).toContain('secret');
  });

  it('* combines with other entries', () => {
    const q = list({ fields: ['*', 'items.qty'] }, 'Task', MANAGER);
    expect(q.keys.at(-1)).toBe('items.qty');
    expect(q.keys.filter((k) => k === 'name')).toHaveLength(1);
  });

  it('permlevel-hidden fields are silently dropped; an emptied list falls back to name', () => {
    expect(list({ fields: ['status', 'secret'] }, 'Task', MANAGER).keys).toEqual(['status']);
    expect(list({ fields: ['secret'] }, 'Task', MANAGER).keys).toEqual(['name']);
    expect(list({ fields: ['secret as s', 'sum(items.cost)'] }, 'Task', MANAGER).keys).toEqual(['name']);
    expect(list({ fields: ['secret'] }, 'Task', SECRET_READER).keys).toEqual(['secret']);
  });

  it('unknown columns are refused', () => {
    for (const field of ['nope', 'Status', '`nope`', 'tabTask.nope', 'items', 'doctype', '_seen', 'parent']) {
      const t = thrown(() => list({ fields: [field] }));
      expect(t.error, field).toBeInstanceOf(DataError);
      expect(t.status).toBe(417);
      expect(t.message).toBe(`Field not permitted in query: ${field}`);
    }
  });

  it('a child table lists its own columns including parent columns', () => {
    const q = list({ fields: ['name', 'parent', 'qty'], parent: 'Task' }, 'Task Item');
    expect(q.text.startsWith('SELECT m."name" AS "name", m."parent" AS "parent", m."qty" AS "qty" FROM "t_test"."tabTask Item" m')).toBe(true);
  });
});

describe('fields: aliases', () => {
  it.each([
    ['status as s', 's'],
    ['status AS s', 's'],
    ['status   as   `s_2`', 's_2'],
    ['status as "S"', 'S'],
    ['`tabTask`.`status` as st', 'st'],
  ])('%s', (field, key) => {
    const q = list({ fields: [field] });
    expect(selectOf(q.text)).toBe(`m."status" AS "${key}"`);
    expect(q.keys).toEqual([key]);
  });

  it.each(['status as 1x', 'status as s t', 'status as "s', 'status as `s"', 'status as s-t', 'status as', 'status as s;'])(
    'bad alias %s is refused',
    (field) => {
      const t = thrown(() => list({ fields: [field] }));
      expect(t.error).toBeInstanceOf(DataError);
      expect(t.message).toBe('Use of sub-query or function is restricted');
    },
  );

  it('an alias named like a keyword is only ever a quoted identifier', () => {
    expect(selectOf(list({ fields: ['name as select'] }).text)).toBe('m."name" AS "select"');
  });
});

describe('fields: aggregates and distinct', () => {
  it.each([
    ['count(*)', 'count(*)', 'count(*)'],
    ['COUNT( * )', 'count(*)', 'count(*)'],
    ['count(name)', 'count(m."name")', 'count(name)'],
    ['count(distinct status)', 'count(DISTINCT m."status")', 'count(distinct status)'],
    ['Count(DISTINCT `status`)', 'count(DISTINCT m."status")', 'count(distinct status)'],
    ['sum(qty)', 'sum(m."qty")', 'sum(qty)'],
    ['sum(amount)', 'sum(m."amount")', 'sum(amount)'],
    ['avg(done)', 'avg(m."done")', 'avg(done)'],
    ['min(due)', 'min(m."due")', 'min(due)'],
    ['max(`tabTask`.`modified`)', 'max(m."modified")', 'max(modified)'],
    ['sum(items.qty)', 'sum(c1."qty")', 'sum(items.qty)'],
    ['max(category.title)', 'max(l1."title")', 'max(category.title)'],
  ])('%s → %s keyed %s', (field, expr, key) => {
    const q = list({ fields: [field] });
    expect(selectOf(q.text)).toBe(`${expr} AS "${key}"`);
    expect(q.keys).toEqual([key]);
  });

  it('count(name) as count (the frappe-js-sdk form)', () => {
    const q = list({ fields: '["count(name) as count"]' });
    expect(q.text).toBe(`SELECT count(m."name") AS "count" FROM ${T} m WHERE TRUE LIMIT $1 OFFSET $2`);
    expect(q.keys).toEqual(['count']);
  });

  it.each(['sum(status)', 'avg(subject)', 'sum(due)', 'avg(items.item)', 'min(data)'])('%s on a non-numeric field → DataError', (field) => {
    const t = thrown(() => list({ fields: [field] }));
    expect(t.error).toBeInstanceOf(DataError);
    expect(t.status).toBe(417);
  });

  it('distinct <col> makes the whole select DISTINCT', () => {
    const q = list({ fields: ['distinct status', 'qty'], order_by: 'status' });
    expect(q.text).toBe(`SELECT DISTINCT m."status" AS "status", m."qty" AS "qty" FROM ${T} m WHERE TRUE ORDER BY m."status" ASC LIMIT $1 OFFSET $2`);
    expect(list({ fields: ['DISTINCT `tabTask`.`status` as s'] }).keys).toEqual(['s']);
  });

  it('group by with aggregates', () => {
    const q = list({ fields: ['status', 'count(*) as n', 'sum(qty)'], group_by: 'status', order_by: 'n desc' });
    expect(q.text).toBe(
      `SELECT m."status" AS "status", count(*) AS "n", sum(m."qty") AS "sum(qty)" FROM ${T} m WHERE TRUE GROUP BY m."status" ORDER BY "n" DESC LIMIT $1 OFFSET $2`,
    );
  });

  it('an aggregate query drops a default order it cannot use; explicit ungrouped order is a 417', () => {
    expect(list({ fields: ['status', 'count(*)'], group_by: 'status' }).text).not.toContain('ORDER BY');
    const t = thrown(() => list({ fields: ['status', 'count(*)'], group_by: 'status', order_by: 'modified desc' }));
    expect(t.status).toBe(417);
    const u = thrown(() => list({ fields: ['status', 'count(*)'] }));
    expect(u.error).toBeInstanceOf(DataError);
    expect(u.message).toBe('Field status must be in group_by or used inside an aggregate function');
  });

  it('grouping by name allows every main-table column', () => {
    const q = list({ fields: ['name', 'status', 'sum(items.qty) as q'], group_by: 'name' });
    expect(q.text).toContain(' GROUP BY m."name" ORDER BY m."creation" DESC ');
  });

  it('distinct keeps the default order only when it is selected', () => {
    expect(list({ fields: ['distinct status'] }).text).not.toContain('ORDER BY');
    expect(list({ fields: ['distinct creation'] }).text).toContain('ORDER BY m."creation" DESC');
    const t = thrown(() => list({ fields: ['distinct status'], order_by: 'qty' }));
    expect(t.status).toBe(417);
  });
});

describe('fields: joins', () => {
  it('table_field.col → one LEFT JOIN per table field with bound parenttype / parentfield', () => {
    const q = list({ fields: ['name', 'items.qty', 'items.item', 'notes.note', '`tabTask Item`.rate'] });
    expect(selectOf(q.text)).toBe('m."name" AS "name", c1."qty" AS "items.qty", c1."item" AS "items.item", c2."note" AS "notes.note", c1."rate" AS "rate"');
    expect(joinsOf(q.text)).toBe(
      ` LEFT JOIN ${ITEM} c1 ON c1."parent" = m."name" AND c1."parenttype" = $1 AND c1."parentfield" = $2` +
        ` LEFT JOIN "t_test"."tabTask Note" c2 ON c2."parent" = m."name" AND c2."parenttype" = $3 AND c2."parentfield" = $4`,
    );
    expect(q.values).toEqual(['Task', 'items', 'Task', 'notes', 20, 0]);
    expect(q.keys).toEqual(['name', 'items.qty', 'items.item', 'notes.note', 'rate']);
  });

  it('two table fields of the same child DocType get separate joins', () => {
    const q = list({ fields: ['items.qty', 'extra_items.qty as eq'] });
    expect(joinsOf(q.text)).toContain('c2."parentfield" = $4');
    expect(q.values.slice(0, 4)).toEqual(['Task', 'items', 'Task', 'extra_items']);
  });

  it('child columns hidden by permlevel are dropped; unknown child columns refused', () => {
    expect(list({ fields: ['name', 'items.cost'] }, 'Task', MANAGER).keys).toEqual(['name']);
    expect(list({ fields: ['name', 'items.cost'] }, 'Task', MANAGER).text).not.toContain('JOIN');
    expect(list({ fields: ['items.cost'] }, 'Task', ADMIN).keys).toEqual(['items.cost']);
    const t = thrown(() => list({ fields: ['items.nope'] }));
    expect(t.message).toBe('Field not permitted in query: items.nope');
    const u = thrown(() => list({ fields: ['`tabVault`.`code`'] }));
    expect(u.message).toBe('Field not permitted in query: `tabVault`.`code`');
    expect(thrown(() => list({ fields: ['subject.x'] })).message).toBe('Field not permitted in query: subject.x');
  });

  it('link_field.col → LEFT JOIN on the linked table', () => {
    const q = list({ fields: ['name', 'category.title', 'project.title as pt', 'category.name'] }, 'Task', MANAGER);
    expect(selectOf(q.text)).toBe('m."name" AS "name", l1."title" AS "category.title", l2."title" AS "pt", l1."name" AS "category.name"');
    expect(joinsOf(q.text)).toBe(
      ' LEFT JOIN "t_test"."tabCategory" l1 ON l1."name" = m."category" LEFT JOIN "t_test"."tabProject" l2 ON l2."name" = m."project"',
    );
  });

  it('a linked DocType read only for own documents joins only own documents', () => {
    const q = list({ fields: ['project.title'] }, 'Task', OWNER);
    expect(joinsOf(q.text)).toBe(' LEFT JOIN "t_test"."tabProject" l1 ON l1."name" = m."project" AND l1."owner" = $1');
    expect(q.values[0]).toBe('owner@example.com');
  });

  it('a linked DocType the caller cannot read → 403', () => {
    const t = thrown(() => list({ fields: ['vault.code'] }, 'Task', MANAGER));
    expect(t.error).toBeInstanceOf(PermissionError);
    expect(t.status).toBe(403);
  });

  it('a permlevel-hidden column of the linked DocType is refused', () => {
    const t = thrown(() => list({ fields: ['project.budget'] }, 'Task', MANAGER));
    expect(t.error).toBeInstanceOf(DataError);
    expect(t.message).toBe('Field not permitted in query: project.budget');
  });
});

describe('fields: hostile input (frappe test_query_fields_sanitizer and more)', () => {
  const restricted = 'Use of sub-query or function is restricted';
  it.each([
    ['(select password from __Auth)', restricted],
    ['name from tabUser --', restricted],
    ['@@version', restricted],
    ['name, owner', restricted],
    ['name; drop table tabTask', restricted],
    ['name -- comment', restricted],
    ['name /* c */', restricted],
    ['/* c */ name', restricted],
    ["name'", restricted],
    ["'name'", restricted],
    ['"name"', restricted],
    ['`name', restricted],
    ['`na`me`', restricted],
    ['`name`` `', restricted],
    ['name union select 1', restricted],
    ['select name', restricted],
    ['name as x from tabUser', restricted],
    ['count(name) from tabUser', restricted],
    ['count((select 1))', restricted],
    ['count(name, owner)', restricted],
    ['sum(qty))', restricted],
    ['count(*) as x; select 1', restricted],
    ['nаme', restricted], // Cyrillic а
    ['ｎａｍｅ', restricted], // full-width
    ['name\u0000', restricted],
    ['distinct (select 1)', restricted],
    ['* as x', restricted],
    ['m.name', 'Field not permitted in query: m.name'],
    ['concat(name)', 'Use of function concat in field is restricted'],
    ['version()', 'Use of function version in field is restricted'],
    ['SLEEP(1)', 'Use of function sleep in field is restricted'],
    ['ifnull(name, 1)', 'Use of function ifnull in field is restricted'],
    ['date(creation) as d', 'Use of function date in field is restricted'],
    ["locate('', name) as _relevance", 'Use of function locate in field is restricted'],
    ['user()', 'Use of function user in field is restricted'],
  ])('%s', (field, message) => {
    const t = thrown(() => list({ fields: [field] }));
    expect(t.error).toBeInstanceOf(DataError);
    expect(t.status).toBe(417);
    expect(t.message).toBe(message);
  });
});
