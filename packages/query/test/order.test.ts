import { describe, it, expect } from 'vitest';
import { DataError, ValidationError } from '@quire/errors';
import { MANAGER, list, thrown } from './fixtures';

const orderOf = (text: string) => {
  const i = text.indexOf(' ORDER BY ');
  return i < 0 ? undefined : text.slice(i + ' ORDER BY '.length, text.indexOf(' LIMIT '));
};
const groupOf = (text: string) => {
  const i = text.indexOf(' GROUP BY ');
  return i < 0 ? undefined : text.slice(i + ' GROUP BY '.length, text.search(/ ORDER BY | LIMIT /));
};

describe('order_by: default', () => {
  it('uses the DocType sort field and order', () => {
    expect(orderOf(list({}).text)).toBe('m."creation" DESC');
    expect(orderOf(list({ order_by: '' }).text)).toBe('m."creation" DESC');
    expect(orderOf(list({ order_by: '  ' }).text)).toBe('m."creation" DESC');
    expect(orderOf(list({ order_by: null }).text)).toBe('m."creation" DESC');
    expect(orderOf(list({}, 'Plain Sort').text)).toBe('m."subject" ASC');
  });

  it('a comma list sort field keeps its directions; items without one use sort_order', () => {
    expect(orderOf(list({}, 'Sorted').text)).toBe('m."modified" DESC, m."subject" ASC');
  });
});

describe('order_by: accepted', () => {
  it.each([
    ['name asc', 'm."name" ASC'],
    ['name', 'm."name" ASC'],
    ['modified DESC', 'm."modified" DESC'],
    ['  modified   desc  ,  name  ', 'm."modified" DESC, m."name" ASC'],
    ['`modified` desc', 'm."modified" DESC'],
    ['`tabTask`.`modified` desc, name asc', 'm."modified" DESC, m."name" ASC'],
    ['tabTask.modified desc', 'm."modified" DESC'],
    ['`tabTask`.modified Asc', 'm."modified" ASC'],
    ['qty desc, amount', 'm."qty" DESC, m."amount" ASC'],
    ['idx', 'm."idx" ASC'],
  ])('%s', (orderBy, expected) => {
    expect(orderOf(list({ order_by: orderBy }).text)).toBe(expected);
  });

  it('an alias or output key from fields', () => {
    expect(orderOf(list({ fields: ['name', 'subject as s'], order_by: 's desc' }).text)).toBe('"s" DESC');
    expect(orderOf(list({ fields: ['name', 'items.qty'], order_by: 'items.qty desc' }).text)).toBe('"items.qty" DESC');
    expect(orderOf(list({ fields: ['name', 'category.title'], order_by: 'category.title desc' }, 'Task', MANAGER).text)).toBe('"category.title" DESC');
    expect(orderOf(list({ fields: ['name', 'count(*) as n'], group_by: 'name', order_by: 'n' }).text)).toBe('"n" ASC');
  });

  it('a joined child DocType', () => {
    const q = list({ fields: ['name', 'items.qty'], order_by: '`tabTask Item`.`qty` desc, name' });
    expect(orderOf(q.text)).toBe('c1."qty" DESC, m."name" ASC');
    expect(orderOf(list({ fields: ['name', 'items.qty as q'], order_by: 'items.rate' }).text)).toBe('c1."rate" ASC');
    expect(orderOf(list({ fields: ['name', 'category.title'], order_by: 'category.name desc' }).text)).toBe('l1."name" DESC');
  });
});

describe('order_by: rejected', () => {
  // frappe tests/test_db_query.py::test_order_by_group_by_sanitizer and more
  it.each([
    'sleep (1) asc',
    'SLEEP(0)',
    'sleep(1)',
    'name asc, (select 1)',
    '(select 1)',
    'name; drop table x',
    'name asc; select 1',
    '1=1',
    'name = 1',
    '1',
    '1 desc',
    'name -- x',
    'name --',
    'name /* x */',
    '/**/name',
    'name#',
    '`name`` desc',
    '``name`',
    '`name',
    "'name'",
    '"name"',
    'name asc desc',
    'name desc nulls first',
    'name,',
    ',name',
    'name,,owner',
    'nаme', // Cyrillic а
    'name\u2003desc', // em space
    'name\u00a0desc', // no-break space
    '`category.title`',
    'timestamp(modified)',
    'if(1,name,owner)',
    'name collate "C"',
    'extractvalue(1,concat(0x7e,version()))',
    'case when 1=1 then name else owner end',
    '@@version',
    'm.name',
  ])('%j → 417', (orderBy) => {
    const t = thrown(() => list({ order_by: orderBy }));
    expect(t.error).toBeInstanceOf(ValidationError);
    expect(t.status).toBe(417);
    if (!(t.error instanceof DataError)) expect(t.message).toBe('Illegal SQL Query');
  });

  it('non-string values are illegal', () => {
    for (const value of [['name'], { name: 'asc' }, 1, true]) {
      expect(thrown(() => list({ order_by: value })).message).toBe('Illegal SQL Query');
    }
  });

  it('unknown or hidden columns → DataError', () => {
    for (const orderBy of ['nope', 'nope desc', 'Name', 'tabTask.nope', 'subject.x', 'doctype']) {
      const t = thrown(() => list({ order_by: orderBy }));
      expect(t.error, orderBy).toBeInstanceOf(DataError);
      expect(t.message).toMatch(/^Field not permitted in query: /);
    }
    const t = thrown(() => list({ order_by: 'secret desc' }, 'Task', MANAGER));
    expect(t.message).toBe('Field not permitted in query: secret');
  });

  it('a table not joined by fields → "Please select atleast 1 column"', () => {
    for (const [orderBy, doctype] of [
      ['`tabTask Item`.`qty` desc', 'Task Item'],
      ['tabProject.name', 'Project'],
      ['items.qty', 'Task Item'],
      ['category.title', 'Category'],
    ]) {
      const t = thrown(() => list({ order_by: orderBy }));
      expect(t.error, orderBy).toBeInstanceOf(ValidationError);
      expect(t.error).not.toBeInstanceOf(DataError);
      expect(t.message).toBe(`Please select atleast 1 column from ${doctype} to sort/group`);
    }
  });
});

describe('group_by', () => {
  it.each([
    ['status', 'm."status"'],
    ['`status`', 'm."status"'],
    ['status, qty', 'm."status", m."qty"'],
    ['`tabTask`.`status`', 'm."status"'],
  ])('%s', (groupBy, expected) => {
    expect(groupOf(list({ fields: ['count(*) as n'], group_by: groupBy }).text)).toBe(expected);
  });

  it('a joined child DocType', () => {
    const q = list({ fields: ['items.item', 'sum(items.qty) as q'], group_by: '`tabTask Item`.`item`' });
    expect(groupOf(q.text)).toBe('c1."item"');
    expect(groupOf(list({ fields: ['items.item', 'count(*)'], group_by: 'items.item' }).text)).toBe('c1."item"');
  });

  it.each(['SLEEP(0)', 'status desc', 'status asc', '1', 'status; drop table x', '(select 1)', 'status -- x', 'n'])('%j → 417', (groupBy) => {
    const t = thrown(() => list({ fields: ['status', 'count(*) as n'], group_by: groupBy }));
    expect(t.error).toBeInstanceOf(ValidationError);
    expect(t.status).toBe(417);
  });

  it('an output alias is not a group_by column', () => {
    expect(thrown(() => list({ fields: ['status as s', 'count(*)'], group_by: 's' })).message).toBe('Field not permitted in query: s');
  });

  it('a table not joined → "Please select atleast 1 column"', () => {
    expect(thrown(() => list({ fields: ['count(*)'], group_by: '`tabTask Item`.item' })).message).toBe(
      'Please select atleast 1 column from Task Item to sort/group',
    );
  });
});
