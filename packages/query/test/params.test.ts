import { describe, it, expect } from 'vitest';
import { DataError, ValidationError } from '@quire/errors';
import { rowsToArrays } from '../src/index';
import { list, thrown } from './fixtures';

const tail = (text: string) => text.slice(text.indexOf(' LIMIT '));

describe('JSON parameters', () => {
  it.each(['fields', 'filters', 'or_filters'] as const)('malformed JSON in %s is a 417 ValidationError', (param) => {
    const t = thrown(() => list({ [param]: '[["status", "=", ' }));
    expect(t.error).toBeInstanceOf(ValidationError);
    expect(t.status).toBe(417);
    expect(t.message).toBe(`Invalid JSON in ${param}`);
  });

  it('accepts JSON strings and parsed values alike', () => {
    const a = list({ fields: '["name","status"]', filters: '{"status":"Open"}' });
    const b = list({ fields: ['name', 'status'], filters: { status: 'Open' } });
    expect(a).toEqual(b);
  });

  it('fields: a JSON string value "name" means ["name"], bare * means ["*"], default ["name"]', () => {
    expect(list({ fields: '"status"' }).keys).toEqual(['status']);
    expect(list({ fields: '*' }).keys).toContain('secret');
    expect(list({ fields: ' * ' }).keys[0]).toBe('name');
    expect(list({}).keys).toEqual(['name']);
    expect(list({ fields: '' }).keys).toEqual(['name']);
    expect(list({ fields: '[]' }).keys).toEqual(['name']);
    expect(list({ fields: [] }).keys).toEqual(['name']);
  });

  it('fields: bare non-JSON text is a 417, not a 500', () => {
    const t = thrown(() => list({ fields: 'name,status' }));
    expect(t.error).toBeInstanceOf(ValidationError);
    expect(t.status).toBe(417);
  });

  it.each([[[1]], [[null]], [[['name']]], [[{ a: 1 }]], ['{"a":1}'], ['42'], [true]])('fields: non-string entries %j → DataError', (fields) => {
    const t = thrown(() => list({ fields }));
    expect(t.error).toBeInstanceOf(DataError);
    expect(t.status).toBe(417);
  });
});

describe('as_dict', () => {
  it.each([
    [undefined, true],
    [null, true],
    ['', true],
    ['true', true],
    ['True', true],
    ['1', true],
    [true, true],
    [1, true],
    ['false', false],
    ['FALSE', false],
    ['0', false],
    [false, false],
    [0, false],
  ])('%j → %s', (value, expected) => {
    expect(list({ as_dict: value }).asDict).toBe(expected);
  });

  it.each(['yes', 'no', '2', 2, [], {}])('junk %j → 417', (value) => {
    const t = thrown(() => list({ as_dict: value }));
    expect(t.error).toBeInstanceOf(ValidationError);
    expect(t.status).toBe(417);
  });
});

describe('limits', () => {
  it('defaults to 20 rows from offset 0, both bound', () => {
    const q = list({});
    expect(tail(q.text)).toBe(' LIMIT $1 OFFSET $2');
    expect(q.values).toEqual([20, 0]);
  });

  it('limit wins over limit_page_length; blanks fall through', () => {
    expect(list({ limit: '5', limit_page_length: '7' }).values).toEqual([5, 0]);
    expect(list({ limit: '', limit_page_length: '7' }).values).toEqual([7, 0]);
    expect(list({ limit: null, limit_page_length: 7 }).values).toEqual([7, 0]);
    expect(list({ limit_page_length: '' }).values).toEqual([20, 0]);
    expect(list({ limit_start: '40', limit_page_length: '10' }).values).toEqual([10, 40]);
    expect(list({ limit_start: 3 }).values).toEqual([20, 3]);
  });

  it('0 means all rows, clamped to the server cap; above the cap is clamped', () => {
    expect(list({ limit_page_length: '0' }).values).toEqual([500, 0]);
    expect(list({ limit: 0 }).values).toEqual([500, 0]);
    expect(list({ limit_page_length: 100000 }).values).toEqual([500, 0]);
    expect(list({ limit_page_length: 500 }).values).toEqual([500, 0]);
    expect(list({ limit_page_length: 3 }, 'Task', undefined, { maxPageLength: 2 }).values).toEqual([2, 0]);
  });

  it.each([
    { limit_start: '-1' },
    { limit_start: 'abc' },
    { limit_start: 1.5 },
    { limit_start: '1e3' },
    { limit_start: '99999999999999999999' },
    { limit_page_length: '-5' },
    { limit_page_length: '10; drop table x' },
    { limit: 'all' },
    { limit: [10] },
    { limit: -1 },
  ])('%j → 417', (params) => {
    const t = thrown(() => list(params));
    expect(t.error).toBeInstanceOf(ValidationError);
    expect(t.status).toBe(417);
  });
});

describe('rowsToArrays', () => {
  it('orders values by keys and fills missing keys with undefined', () => {
    const rows = [
      { name: 'a', status: 'Open', 'items.qty': 2 },
      { status: 'Closed', name: 'b' },
    ];
    expect(rowsToArrays(rows, ['status', 'name', 'items.qty'])).toEqual([
      ['Open', 'a', 2],
      ['Closed', 'b', undefined],
    ]);
    expect(rowsToArrays([], ['name'])).toEqual([]);
  });
});
