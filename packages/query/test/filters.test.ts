import { describe, it, expect } from 'vitest';
import { DataError, ValidationError } from '@quire/errors';
import { ADMIN, MANAGER, SECRET_READER, list, thrown, where } from './fixtures';

const ITEM = '"t_test"."tabTask Item"';
const NOTE = '"t_test"."tabTask Note"';
const OPEN = { text: 'm."status" = $1::text', values: ['Open'] };

describe('filter shapes', () => {
  it.each([
    ['dict equality', { status: 'Open' }],
    ['dict with operator', { status: ['=', 'Open'] }],
    ['list of triples', [['status', '=', 'Open']]],
    ['list of 4-tuples', [['Task', 'status', '=', 'Open']]],
    ['list of pairs', [['status', 'Open']]],
    ['flat triple', ['status', '=', 'Open']],
    ['flat 4-tuple', ['Task', 'status', '=', 'Open']],
    ['flat pair', ['status', 'Open']],
    ['JSON dict', '{"status": "Open"}'],
    ['JSON triple list', '[["status","=","Open"]]'],
    ['JSON flat triple', '["status","=","Open"]'],
  ])('%s', (_label, filters) => {
    expect(where(filters)).toEqual(OPEN);
  });

  it('several filters are ANDed in order', () => {
    expect(where({ status: 'Open', qty: ['>', 2] })).toEqual({ text: 'm."status" = $1::text AND m."qty" > $2::bigint', values: ['Open', 2] });
    expect(
      where([
        ['status', '=', 'Open'],
        ['qty', '>', 2],
        ['Task', 'subject', 'like', '%a%'],
      ]),
    ).toEqual({
      text: 'm."status" = $1::text AND m."qty" > $2::bigint AND m."subject" ILIKE $3::text',
      values: ['Open', 2, '%a%'],
    });
  });

  it.each([[undefined], [null], [''], ['[]'], ['{}'], [[]], [{}], ['null']])('%j means no condition', (filters) => {
    expect(where(filters)).toEqual({ text: 'TRUE', values: [] });
  });

  it('or_filters are grouped in parentheses and ANDed with filters', () => {
    expect(
      where({ status: 'Open' }, ADMIN, 'Task', [
        ['qty', '>', 1],
        ['subject', 'like', 'x%'],
      ]),
    ).toEqual({
      text: `m."status" = $1::text AND (m."qty" > $2::bigint OR m."subject" ILIKE $3::text)`,
      values: ['Open', 1, 'x%'],
    });
    expect(where(undefined, ADMIN, 'Task', { qty: 1 })).toEqual({ text: '(m."qty" = $1::bigint)', values: [1] });
    expect(where(undefined, ADMIN, 'Task', '[]')).toEqual({ text: 'TRUE', values: [] });
  });

  it.each([
    ['a 5-element list', [['Task', 'status', '=', 'Open', 'x']]],
    ['a 1-element list', [['status']]],
    ['an empty inner list', [[]]],
    ['a dict inside a list', [{ status: 'Open' }]],
    ['a string inside a list', [['status', '=', 'Open'], 'qty']],
    ['nested garbage', [[['status', '=', 'Open']]]],
    ['a non-string fieldname', [[1, '=', 'Open']]],
    ['a null fieldname', [[null, 'Open']]],
    ['a non-string operator', [['status', 1, 'Open']]],
    ['a non-string doctype', [[1, 'status', '=', 'Open']]],
    ['a flat 5-element list', ['Task', 'status', '=', 'Open', 1]],
    ['a number', 42],
    ['a JSON number', '42'],
    ['a JSON string', '"status"'],
    ['a boolean', true],
    ['dict with a nested dict', { status: { '=': 'Open' } }],
    ['dict with a 3-element list', { status: ['=', 'Open', 'x'] }],
    ['dict with a 1-element list', { status: ['in'] }],
    ['dict with a non-string operator', { status: [1, 'Open'] }],
  ])('%s → 417 ValidationError', (_label, filters) => {
    const t = thrown(() => where(filters));
    expect(t.error).toBeInstanceOf(ValidationError);
    expect(t.status).toBe(417);
  });

  it('or_filters shapes are checked the same way', () => {
    expect(thrown(() => where(undefined, ADMIN, 'Task', [{ a: 1 }])).status).toBe(417);
    expect(thrown(() => where(undefined, ADMIN, 'Task', '[[')).message).toBe('Invalid JSON in or_filters');
  });
});

describe('filter fields', () => {
  it.each(['nope', 'Status', 'status; drop table x', 'status)', "status'", 'ifnull(status, 1)', 'items', 'doctype', '_seen', 'parent'])(
    'unknown field %j → DataError',
    (field) => {
      const t = thrown(() => where([[field, '=', 'x']]));
      expect(t.error).toBeInstanceOf(DataError);
      expect(t.status).toBe(417);
      expect(t.message).toBe(`Field not permitted in query: ${field}`);
    },
  );

  it('accepts backquoted and tab-qualified forms of the own DocType', () => {
    expect(where([['`status`', '=', 'Open']])).toEqual(OPEN);
    expect(where([['`tabTask`.`status`', '=', 'Open']])).toEqual(OPEN);
    expect(where({ 'tabTask.status': 'Open' })).toEqual(OPEN);
  });

  it('standard columns', () => {
    expect(where({ owner: 'a@b' }).text).toBe('m."owner" = $1::text');
    expect(where({ docstatus: 1 }).text).toBe('m."docstatus" = $1::bigint');
    expect(where({ _assign: ['like', '%a%'] }).text).toBe('m."_assign" ILIKE $1::text');
  });

  it('a permlevel-hidden field is refused like an unknown one', () => {
    const t = thrown(() => where({ secret: 'x' }, MANAGER));
    expect(t.error).toBeInstanceOf(DataError);
    expect(t.message).toBe('Field not permitted in query: secret');
    expect(where({ secret: 'x' }, SECRET_READER).text).toContain('m."secret" = $1::text');
  });
});

describe('child-table filters', () => {
  const exists = (cond: string, byField = '') => `EXISTS (SELECT 1 FROM ${ITEM} c WHERE c."parent" = m."name" AND c."parenttype" = $1${byField} AND ${cond})`;

  it('a 4-element filter on a child DocType compiles to EXISTS (no duplicated parents)', () => {
    expect(where([['Task Item', 'qty', '>', 2]])).toEqual({ text: exists('c."qty" > $2::bigint'), values: ['Task', 2] });
    expect(where([['Task Item', 'item', 'in', ['a', 'b']]])).toEqual({
      text: exists(`coalesce(c."item", '') = ANY($2::text[])`),
      values: ['Task', ['a', 'b']],
    });
  });

  it('`tabChild`.`col` compiles to EXISTS too', () => {
    expect(where([['`tabTask Item`.`qty`', '=', 1]])).toEqual({ text: exists('c."qty" = $2::bigint'), values: ['Task', 1] });
    expect(where({ '`tabTask Item`.item': 'x' }).text).toBe(exists('c."item" = $2::text'));
  });

  it('table_field.col also pins the parentfield', () => {
    expect(where([['items.qty', '>=', 3]])).toEqual({
      text: exists('c."qty" >= $3::bigint', ' AND c."parentfield" = $2'),
      values: ['Task', 'items', 3],
    });
    expect(where({ 'extra_items.item': 'x' }).values).toEqual(['Task', 'extra_items', 'x']);
  });

  it('child filters combine with main filters and or_filters with ordered placeholders', () => {
    const q = where(
      [
        ['status', '=', 'Open'],
        ['Task Note', 'note', 'like', '%x%'],
      ],
      ADMIN,
      'Task',
      [
        ['Task Item', 'qty', '>', 1],
        ['qty', '<', 5],
      ],
    );
    expect(q.text).toBe(
      `m."status" = $1::text AND EXISTS (SELECT 1 FROM ${NOTE} c WHERE c."parent" = m."name" AND c."parenttype" = $2 AND c."note" ILIKE $3::text)` +
        ` AND (EXISTS (SELECT 1 FROM ${ITEM} c WHERE c."parent" = m."name" AND c."parenttype" = $4 AND c."qty" > $5::bigint) OR m."qty" < $6::bigint)`,
    );
    expect(q.values).toEqual(['Open', 'Task', '%x%', 'Task', 1, 5]);
  });

  it('NULL handling applies inside EXISTS', () => {
    expect(where([['Task Item', 'item', '!=', 'x']]).text).toBe(exists(`coalesce(c."item", '') <> $2::text`));
    expect(where([['Task Item', 'item', 'is', 'not set']]).text).toBe(exists(`coalesce(c."item", '') = ''`));
  });

  it('a 4-element doctype that is neither this DocType nor one of its child DocTypes → DataError', () => {
    for (const doctype of ['Project', 'Nope', 'Category', 'tabTask']) {
      const t = thrown(() => where([[doctype, 'name', '=', 'x']]));
      expect(t.error, doctype).toBeInstanceOf(DataError);
      expect(t.status).toBe(417);
    }
    expect(thrown(() => where([['`tabProject`.`title`', '=', 'x']])).error).toBeInstanceOf(DataError);
    expect(thrown(() => where([['project.title', '=', 'x']])).error).toBeInstanceOf(DataError);
  });

  it('an unknown or hidden child column → DataError', () => {
    expect(thrown(() => where([['Task Item', 'nope', '=', 1]])).message).toBe('Field not permitted in query: Task Item.nope');
    expect(thrown(() => where([['items.cost', '>', 1]], MANAGER)).message).toBe('Field not permitted in query: items.cost');
    expect(where([['items.cost', '>', 1]], ADMIN).text).toContain('c."cost" > $3::numeric');
  });

  it('child filters on a list with child-field joins still use EXISTS', () => {
    const q = list({ fields: ['name', 'items.qty'], filters: [['Task Item', 'qty', '>', 1]] });
    expect(q.text).toContain(' LEFT JOIN ');
    expect(q.text).toContain(`WHERE EXISTS (SELECT 1 FROM ${ITEM} c WHERE c."parent" = m."name" AND c."parenttype" = $3 AND c."qty" > $4::bigint)`);
    expect(q.values).toEqual(['Task', 'items', 'Task', 1, 20, 0]);
  });
});
