import { describe, it, expect } from 'vitest';
import { DataError, ValidationError } from '@quire/errors';
import { countStatement } from '../src/index';
import { ADMIN, cond, ctx, thrown } from './fixtures';

const CAT = '"t_test"."tabCategory"';

describe('comparison operators', () => {
  it.each([
    ['status', '=', 'Open', 'm."status" = $1::text', ['Open']],
    ['status', '!=', 'Open', 'coalesce(m."status", \'\') <> $1::text', ['Open']],
    ['status', '<>', 'Open', 'coalesce(m."status", \'\') <> $1::text', ['Open']],
    ['status', ' NOT  LIKE ', '%x', 'coalesce(m."status", \'\') NOT ILIKE $1::text', ['%x']],
    ['subject', '>', 'b', 'coalesce(m."subject", \'\') > $1::text', ['b']],
    ['subject', '<', 'b', 'coalesce(m."subject", \'\') < $1::text', ['b']],
    ['subject', '>=', 'b', 'coalesce(m."subject", \'\') >= $1::text', ['b']],
    ['subject', '<=', 'b', 'coalesce(m."subject", \'\') <= $1::text', ['b']],
    ['qty', '=', '5', 'm."qty" = $1::bigint', [5]],
    ['qty', '!=', 5, 'm."qty" <> $1::bigint', [5]],
    ['qty', '>', '1,000', 'm."qty" > $1::bigint', [1000]],
    ['amount', '>', '1.5', 'm."amount" > $1::numeric', [1.5]],
    ['done', '=', true, 'm."done" = $1::smallint', [1]],
    ['done', '=', '0', 'm."done" = $1::smallint', [0]],
    ['docstatus', '<', 2, 'm."docstatus" < $1::bigint', [2]],
    ['idx', '>=', '0', 'm."idx" >= $1::bigint', [0]],
    ['duration', '<', 3, 'coalesce(m."duration", 0) < $1::numeric', [3]],
    ['due', '=', '2024-1-5', 'm."due" = $1::date', ['2024-01-05']],
    ['due', '>', '2024-01-01', 'm."due" > $1::date', ['2024-01-01']],
    ['due', '>=', '2024-01-01', 'm."due" >= $1::date', ['2024-01-01']],
    ['due', '<', '2024-01-01', `coalesce(m."due", '0001-01-01'::date) < $1::date`, ['2024-01-01']],
    ['due', '<=', '2024-01-01', `coalesce(m."due", '0001-01-01'::date) <= $1::date`, ['2024-01-01']],
    ['due', '!=', '2024-01-01', `coalesce(m."due", '0001-01-01'::date) <> $1::date`, ['2024-01-01']],
    ['at', '>', '2024-01-01', 'm."at" > $1::timestamp', ['2024-01-01 00:00:00']],
    ['at', '<=', '2024-01-01T10:30:00Z', `coalesce(m."at", '0001-01-01 00:00:00'::timestamp) <= $1::timestamp`, ['2024-01-01 10:30:00']],
    ['tm', '>=', '10:00', 'm."tm" >= $1::time', ['10:00:00']],
    ['tm', '<', '10:00', `coalesce(m."tm", '00:00:00'::time) < $1::time`, ['10:00:00']],
    ['name', '!=', 'x', 'm."name" <> $1::text', ['x']],
    ['name', '=', '', 'm."name" = $1::text', ['']],
    ['creation', '<', '2024-01-01 10:00:00', 'm."creation" < $1::timestamp', ['2024-01-01 10:00:00']],
    ['modified', '!=', '2024-01-01', 'm."modified" <> $1::timestamp', ['2024-01-01 00:00:00']],
    ['owner', '!=', 'a@b', 'coalesce(m."owner", \'\') <> $1::text', ['a@b']],
    ['data', '=', '{}', 'm."data"::text = $1::text', ['{}']],
    ['data', '!=', '{}', `coalesce(m."data"::text, '') <> $1::text`, ['{}']],
  ])('%s %s %j', (field, op, value, sql, values) => {
    expect(cond(field, op, value)).toEqual({ text: sql, values });
  });

  it('a list or object value for a comparison is a 417', () => {
    for (const value of [['a'], { a: 1 }]) {
      const t = thrown(() => cond('status', '=', value));
      expect(t.error).toBeInstanceOf(ValidationError);
      expect(t.status).toBe(417);
    }
  });

  it.each([
    ['qty', 'abc'],
    ['amount', '1.2.3'],
    ['due', '2024-02-30'],
    ['due', 'tomorrow'],
    ['at', '2024-01-01 25:00'],
    ['tm', '99:00'],
    ['done', 'maybe'],
  ])('junk value for %s (%j) is a 417 from coercion', (field, value) => {
    const t = thrown(() => cond(field, '=', value));
    expect(t.error).toBeInstanceOf(ValidationError);
    expect(t.status).toBe(417);
  });
});

describe('NULL handling (frappe ifnull semantics)', () => {
  it('= with an empty value matches NULL rows through coalesce', () => {
    expect(cond('status', '=', '')).toEqual({ text: `coalesce(m."status", '') = $1::text`, values: [''] });
    expect(cond('status', '=', null)).toEqual({ text: `coalesce(m."status", '') = $1::text`, values: [''] });
    expect(cond('due', '=', '')).toEqual({ text: `coalesce(m."due", '0001-01-01'::date) = $1::date`, values: ['0001-01-01'] });
    expect(cond('at', '=', null)).toEqual({
      text: `coalesce(m."at", '0001-01-01 00:00:00'::timestamp) = $1::timestamp`,
      values: ['0001-01-01 00:00:00'],
    });
    expect(cond('tm', '=', '')).toEqual({ text: `coalesce(m."tm", '00:00:00'::time) = $1::time`, values: ['00:00:00'] });
  });

  it('!= keeps NULL rows (coalesce), != on NOT NULL columns does not need it', () => {
    expect(cond('subject', '!=', 'x').text).toBe(`coalesce(m."subject", '') <> $1::text`);
    expect(cond('qty', '!=', 1).text).toBe('m."qty" <> $1::bigint');
    expect(cond('done', '!=', 1).text).toBe('m."done" <> $1::smallint');
  });

  it('empty numeric values compare as 0', () => {
    expect(cond('qty', '=', '')).toEqual({ text: 'm."qty" = $1::bigint', values: [0] });
    expect(cond('amount', '>', null)).toEqual({ text: 'm."amount" > $1::numeric', values: [0] });
  });

  it('is set / is not set', () => {
    expect(cond('status', 'is', 'set')).toEqual({ text: `coalesce(m."status", '') <> ''`, values: [] });
    expect(cond('status', 'is', 'not set')).toEqual({ text: `coalesce(m."status", '') = ''`, values: [] });
    expect(cond('status', 'IS', ' Not  Set ').text).toBe(`coalesce(m."status", '') = ''`);
    expect(cond('due', 'is', 'set').text).toBe(`coalesce(m."due", '0001-01-01'::date) <> '0001-01-01'::date`);
    expect(cond('at', 'is', 'not set').text).toBe(`coalesce(m."at", '0001-01-01 00:00:00'::timestamp) = '0001-01-01 00:00:00'::timestamp`);
    expect(cond('qty', 'is', 'set').text).toBe('m."qty" <> 0');
    expect(cond('done', 'is', 'not set').text).toBe('m."done" = 0');
    expect(cond('data', 'is', 'set').text).toBe(`coalesce(m."data"::text, '') <> ''`);
  });

  it.each(['', 'yes', null, 1, ['set']])('is with %j is a 417', (value) => {
    const t = thrown(() => cond('status', 'is', value));
    expect(t.error).toBeInstanceOf(ValidationError);
    expect(t.status).toBe(417);
  });
});

describe('like / not like', () => {
  it.each([
    ['status', 'like', '%pen%', 'm."status" ILIKE $1::text', ['%pen%']],
    ['status', 'LIKE', 'Open', 'm."status" ILIKE $1::text', ['Open']],
    ['status', 'not like', '%pen%', `coalesce(m."status", '') NOT ILIKE $1::text`, ['%pen%']],
    ['status', 'like', '', `coalesce(m."status", '') ILIKE $1::text`, ['']],
    ['status', 'like', null, `coalesce(m."status", '') ILIKE $1::text`, ['']],
    ['subject', 'like', 'a\\%b_', 'm."subject" ILIKE $1::text', ['a\\%b_']],
    ['subject', 'like', 5, 'm."subject" ILIKE $1::text', ['5']],
    ['qty', 'like', '%5%', 'm."qty"::text ILIKE $1::text', ['%5%']],
    ['due', 'like', '2024%', 'm."due"::text ILIKE $1::text', ['2024%']],
    ['due', 'not like', '2024%', `coalesce(m."due", '0001-01-01'::date)::text NOT ILIKE $1::text`, ['2024%']],
    ['data', 'like', '%x%', 'm."data"::text ILIKE $1::text', ['%x%']],
  ])('%s %s %j', (field, op, value, sql, values) => {
    expect(cond(field, op, value)).toEqual({ text: sql, values });
  });

  it('a list value is a 417', () => {
    expect(thrown(() => cond('status', 'like', ['%a%'])).status).toBe(417);
  });
});

describe('in / not in', () => {
  it.each([
    ['status', 'in', ['Open', 'Closed'], `coalesce(m."status", '') = ANY($1::text[])`, [['Open', 'Closed']]],
    ['status', 'in', 'Open, Closed ', `coalesce(m."status", '') = ANY($1::text[])`, [['Open', 'Closed']]],
    ['status', 'in', 'Open', `coalesce(m."status", '') = ANY($1::text[])`, [['Open']]],
    ['status', 'not in', ['Open'], `coalesce(m."status", '') <> ALL($1::text[])`, [['Open']]],
    ['status', 'in', [], `coalesce(m."status", '') = ANY($1::text[])`, [['']]],
    ['status', 'not in', [], `coalesce(m."status", '') <> ALL($1::text[])`, [['']]],
    ['status', 'in', '', `coalesce(m."status", '') = ANY($1::text[])`, [['']]],
    ['status', 'in', ['a', null], `coalesce(m."status", '') = ANY($1::text[])`, [['a', '']]],
    ['qty', 'in', '1, 2', 'm."qty" = ANY($1::bigint[])', [[1, 2]]],
    ['qty', 'not in', [3], 'm."qty" <> ALL($1::bigint[])', [[3]]],
    ['qty', 'in', 7, 'm."qty" = ANY($1::bigint[])', [[7]]],
    ['name', 'in', ['a', 'b'], 'm."name" = ANY($1::text[])', [['a', 'b']]],
    ['due', 'in', ['2024-01-01', ''], `coalesce(m."due", '0001-01-01'::date) = ANY($1::date[])`, [['2024-01-01', '0001-01-01']]],
    ['at', 'in', ['2024-01-01'], `coalesce(m."at", '0001-01-01 00:00:00'::timestamp) = ANY($1::timestamp[])`, [['2024-01-01 00:00:00']]],
  ])('%s %s %j', (field, op, value, sql, values) => {
    expect(cond(field, op, value)).toEqual({ text: sql, values });
  });

  it('["in", null] matches nothing, ["not in", null] matches everything', () => {
    expect(cond('status', 'in', null)).toEqual({ text: 'false', values: [] });
    expect(cond('status', 'not in', null)).toEqual({ text: 'true', values: [] });
  });

  it('nested or junk items are a 417', () => {
    expect(thrown(() => cond('status', 'in', [['a']])).error).toBeInstanceOf(ValidationError);
    expect(thrown(() => cond('status', 'in', { a: 1 })).error).toBeInstanceOf(ValidationError);
    expect(thrown(() => cond('qty', 'in', 'a,b')).status).toBe(417);
  });
});

describe('between', () => {
  it('date bounds', () => {
    expect(cond('due', 'between', ['2024-01-01', '2024-01-31'])).toEqual({
      text: `coalesce(m."due", '0001-01-01'::date) BETWEEN $1::date AND $2::date`,
      values: ['2024-01-01', '2024-01-31'],
    });
  });

  it('a date on a datetime column covers whole days', () => {
    expect(cond('at', 'between', ['2024-01-01', '2024-01-31'])).toEqual({
      text: `coalesce(m."at", '0001-01-01 00:00:00'::timestamp) BETWEEN $1::timestamp AND $2::timestamp`,
      values: ['2024-01-01 00:00:00', '2024-01-31 23:59:59.999999'],
    });
    expect(cond('at', 'between', ['2024-01-01 10:00', '2024-01-02 11:30:00']).values).toEqual(['2024-01-01 10:00:00', '2024-01-02 11:30:00']);
    expect(cond('creation', 'between', ['2024-01-01', '2024-01-01']).text).toBe('m."creation" BETWEEN $1::timestamp AND $2::timestamp');
  });

  it('missing or empty bounds mean today', () => {
    expect(cond('due', 'between', []).values).toEqual(['2024-05-15', '2024-05-15']);
    expect(cond('due', 'between', ['2024-01-01']).values).toEqual(['2024-01-01', '2024-05-15']);
    expect(cond('due', 'between', ['', null]).values).toEqual(['2024-05-15', '2024-05-15']);
    expect(cond('at', 'between', [null, '2024-06-01']).values).toEqual(['2024-05-15 00:00:00', '2024-06-01 23:59:59.999999']);
  });

  it('numeric bounds are plain numbers', () => {
    expect(cond('qty', 'between', [1, '10'])).toEqual({ text: 'm."qty" BETWEEN $1::bigint AND $2::bigint', values: [1, 10] });
    expect(cond('amount', 'between', ['0.5', 2])).toEqual({ text: 'm."amount" BETWEEN $1::numeric AND $2::numeric', values: [0.5, 2] });
  });

  it.each([['2024-01-01'], [{ from: 1 }], [['a', 'b', 'c']], [[['2024-01-01'], '2024-01-02']], [['junk', '2024-01-01']]])('bad value %j is a 417', (value) => {
    const t = thrown(() => cond('due', 'between', value));
    expect(t.error).toBeInstanceOf(ValidationError);
    expect(t.status).toBe(417);
  });
});

describe('timespan / previous / next', () => {
  // TODAY is Wednesday 2024-05-15
  it.each([
    ['last 7 days', '2024-05-08', '2024-05-15'],
    ['last 14 days', '2024-05-01', '2024-05-15'],
    ['last 30 days', '2024-04-15', '2024-05-15'],
    ['last week', '2024-05-06', '2024-05-12'],
    ['last month', '2024-04-01', '2024-04-30'],
    ['last quarter', '2024-01-01', '2024-03-31'],
    ['last 6 months', '2023-11-15', '2024-05-15'],
    ['last year', '2023-01-01', '2023-12-31'],
    ['yesterday', '2024-05-14', '2024-05-14'],
    ['today', '2024-05-15', '2024-05-15'],
    ['tomorrow', '2024-05-16', '2024-05-16'],
    ['this week', '2024-05-13', '2024-05-19'],
    ['this month', '2024-05-01', '2024-05-31'],
    ['this quarter', '2024-04-01', '2024-06-30'],
    ['this year', '2024-01-01', '2024-12-31'],
    ['next 7 days', '2024-05-15', '2024-05-22'],
    ['next 14 days', '2024-05-15', '2024-05-29'],
    ['next 30 days', '2024-05-15', '2024-06-14'],
    ['next week', '2024-05-20', '2024-05-26'],
    ['next month', '2024-06-01', '2024-06-30'],
    ['next quarter', '2024-07-01', '2024-09-30'],
    ['next 6 months', '2024-05-15', '2024-11-15'],
    ['next year', '2025-01-01', '2025-12-31'],
    [' This  Month ', '2024-05-01', '2024-05-31'],
  ])('%s → [%s, %s]', (span, from, to) => {
    expect(cond('due', 'timespan', span)).toEqual({
      text: `coalesce(m."due", '0001-01-01'::date) BETWEEN $1::date AND $2::date`,
      values: [from, to],
    });
  });

  it('on a datetime column the range covers whole days', () => {
    expect(cond('at', 'timespan', 'today').values).toEqual(['2024-05-15 00:00:00', '2024-05-15 23:59:59.999999']);
    expect(cond('modified', 'timespan', 'yesterday')).toEqual({
      text: 'm."modified" BETWEEN $1::timestamp AND $2::timestamp',
      values: ['2024-05-14 00:00:00', '2024-05-14 23:59:59.999999'],
    });
  });

  it('month ends, leap years and year boundaries', () => {
    const range = (span: string, today: string) => countStatement({ filters: [['due', 'timespan', span]] }, ctx('Task', ADMIN, { today })).values;
    expect(range('last month', '2024-03-31')).toEqual(['2024-02-01', '2024-02-29']);
    expect(range('next month', '2024-01-31')).toEqual(['2024-02-01', '2024-02-29']);
    expect(range('last 6 months', '2024-08-31')).toEqual(['2024-02-29', '2024-08-31']);
    expect(range('last quarter', '2024-01-10')).toEqual(['2023-10-01', '2023-12-31']);
    expect(range('next week', '2024-12-30')).toEqual(['2025-01-06', '2025-01-12']);
    expect(range('this week', '2024-05-19')).toEqual(['2024-05-13', '2024-05-19']); // Sunday ends the week
    expect(range('this week', '2024-05-13')).toEqual(['2024-05-13', '2024-05-19']); // Monday starts it
    expect(range('last year', '2024-02-29')).toEqual(['2023-01-01', '2023-12-31']);
  });

  it.each([
    ['previous', '1 week', '2024-05-06', '2024-05-12'],
    ['previous', '1 month', '2024-04-01', '2024-04-30'],
    ['previous', '3 months', '2024-01-01', '2024-03-31'],
    ['previous', '6 months', '2023-11-15', '2024-05-15'],
    ['previous', '1 year', '2023-01-01', '2023-12-31'],
    ['next', '1 week', '2024-05-20', '2024-05-26'],
    ['next', '1 month', '2024-06-01', '2024-06-30'],
    ['next', '3 months', '2024-07-01', '2024-09-30'],
    ['next', '6 months', '2024-05-15', '2024-11-15'],
    ['next', '1 year', '2025-01-01', '2025-12-31'],
  ])('%s %s → [%s, %s]', (op, value, from, to) => {
    expect(cond('due', op, value).values).toEqual([from, to]);
  });

  it.each([
    ['timespan', 'last 8 days'],
    ['timespan', 'forever'],
    ['timespan', ''],
    ['timespan', ['today']],
    ['previous', '2 weeks'],
    ['next', 'week'],
    ['next', 1],
  ])('%s %j is a 417', (op, value) => {
    const t = thrown(() => cond('due', op, value));
    expect(t.error).toBeInstanceOf(ValidationError);
    expect(t.status).toBe(417);
  });

  it('timespan on a non-date column is a 417', () => {
    expect(thrown(() => cond('qty', 'timespan', 'today')).status).toBe(417);
  });
});

describe('tree operators', () => {
  const descendants = (anchor: string) =>
    `(WITH RECURSIVE _tree(name) AS (SELECT t."name" FROM ${CAT} t WHERE ${anchor} UNION SELECT t."name" FROM ${CAT} t JOIN _tree ON t."parent_category" = _tree.name) SELECT name FROM _tree)`;
  const ancestors = `(WITH RECURSIVE _tree(name) AS (SELECT t."parent_category" FROM ${CAT} t WHERE t."name" = $1::text UNION SELECT t."parent_category" FROM ${CAT} t JOIN _tree ON t."name" = _tree.name) SELECT name FROM _tree WHERE name IS NOT NULL AND name <> '')`;

  it.each([
    ['descendants of', `coalesce(m."category", '') IN ${descendants('t."parent_category" = $1::text')}`],
    ['descendants of (inclusive)', `coalesce(m."category", '') IN ${descendants('t."name" = $1::text')}`],
    ['not descendants of', `coalesce(m."category", '') NOT IN ${descendants('t."parent_category" = $1::text')}`],
    ['ancestors of', `coalesce(m."category", '') IN ${ancestors}`],
    ['not ancestors of', `coalesce(m."category", '') NOT IN ${ancestors}`],
  ])('Link to a tree: %s', (op, sql) => {
    expect(cond('category', op, 'Books')).toEqual({ text: sql, values: ['Books'] });
  });

  it('name of a tree DocType', () => {
    expect(cond('name', 'descendants of', 'Books', 'Category')).toEqual({
      text: `m."name" IN ${descendants('t."parent_category" = $1::text')}`,
      values: ['Books'],
    });
    expect(cond('parent_category', 'ancestors of', 'Books', 'Category').text).toBe(`coalesce(m."parent_category", '') IN ${ancestors}`);
  });

  it('on a non-tree target is a 417', () => {
    for (const [field, doctype] of [
      ['status', 'Task'],
      ['project', 'Task'],
      ['name', 'Task'],
      ['title', 'Category'],
    ] as const) {
      const t = thrown(() => cond(field, 'descendants of', 'x', doctype));
      expect(t.error, field).toBeInstanceOf(ValidationError);
      expect(t.status).toBe(417);
    }
  });

  it('a list value is a 417', () => {
    expect(thrown(() => cond('category', 'ancestors of', ['a'])).status).toBe(417);
  });
});

describe('operator validation', () => {
  it.each(['==', 'equals', 'ilike', 'regexp', 'is not', '= 1 or 1=1', '; drop', 'descendants', '', 'not between', '!in'])(
    "unknown operator %j → 417 with Frappe's message",
    (op) => {
      const t = thrown(() => cond('status', op, 'x'));
      expect(t.error).toBeInstanceOf(ValidationError);
      expect(t.error).not.toBeInstanceOf(DataError);
      expect(t.status).toBe(417);
      expect(t.message).toBe(
        'Operator must be one of =, !=, >, <, >=, <=, like, not like, in, not in, is, between, timespan, previous, next, ancestors of, descendants of, not ancestors of, not descendants of, descendants of (inclusive)',
      );
    },
  );

  it('operators are case-insensitive and trimmed', () => {
    expect(cond('status', ' In ', ['a']).text).toBe(`coalesce(m."status", '') = ANY($1::text[])`);
    expect(cond('category', 'Descendants Of (Inclusive)', 'a').text).toContain('t."name" = $1::text');
    expect(cond('due', 'BETWEEN', ['2024-01-01', '2024-01-02']).text).toContain('BETWEEN');
  });
});
