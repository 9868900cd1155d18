import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GADGET_GROUP, LISTED_GADGET, postDoctype } from '../support/doctypes';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';

/**
 * The list query language over HTTP (frappe-wire.md §2): every operator of §2.3 with Frappe's NULL
 * handling, on a DocType created at runtime, in two tenants whose data must never mix.
 */

let server: TestServer;
let a: TestTenant;
let b: TestTenant;

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
/** The 15th of the previous calendar month (what `previous 1 month` covers). */
const lastMonth15 = (() => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)).toISOString().slice(0, 10);
})();

async function define(t: TestTenant): Promise<void> {
  const group = await postDoctype(t, GADGET_GROUP);
  expect(group.status).toBe(200);
  const gadget = await postDoctype(t, LISTED_GADGET);
  expect(gadget.status).toBe(200);
  // Electronics > (Phones > Smartphones), Audio
  for (const [name, parent] of [
    ['Electronics', null],
    ['Phones', 'Electronics'],
    ['Smartphones', 'Phones'],
    ['Audio', 'Electronics'],
    ['Garden', null],
  ] as const) {
    expect((await t.call('POST', '/api/resource/Gadget Group', { json: { name, parent_gadget_group: parent } })).status).toBe(200);
  }
}

const ROWS = [
  { code: 'G1', label: 'alpha', qty: 5, price: 10.5, active: 1, due: day(-3), seen_at: `${day(-3)} 10:00:00`, colour: 'Red', group: 'Smartphones' },
  { code: 'G2', label: 'beta', qty: 0, price: 0, active: 0, due: day(0), seen_at: `${day(0)} 23:59:59.5`, colour: 'Green', group: 'Audio' },
  { code: 'G3', label: null, qty: 12, price: 99.99, active: 1, due: day(10), seen_at: null, colour: null, group: 'Garden' },
  { code: 'G4', label: '', qty: -2, price: 1, active: 0, due: null, seen_at: `${lastMonth15} 08:00:00`, colour: 'Blue', group: null },
  { code: 'G5', label: 'Alpha_2%', qty: 7, price: 7, active: 1, due: day(1), seen_at: `${day(1)} 00:00:00`, colour: 'Red', group: 'Phones' },
];

beforeAll(async () => {
  server = await startTestServer();
  [a, b] = await Promise.all([server.tenant('opa'), server.tenant('opb')]);
  await Promise.all([define(a), define(b)]);
  for (const row of ROWS) expect((await a.call('POST', '/api/resource/Gadget', { json: row })).status).toBe(200);
  // Tenant B holds different gadgets under the same codes: any mixing shows up as wrong names.
  for (const code of ['G1', 'G2', 'B9'])
    expect((await b.call('POST', '/api/resource/Gadget', { json: { code, label: 'from-b', qty: 1000 } })).status).toBe(200);
});
afterAll(() => server.close());

async function codes(t: TestTenant, filters: unknown, extra: Record<string, string> = {}): Promise<string[]> {
  const res = await t.call('GET', '/api/resource/Gadget', {
    query: { fields: '["name"]', filters: JSON.stringify(filters), order_by: 'name asc', limit: '0', ...extra },
  });
  expect(res.status, res.text).toBe(200);
  return (res.body.data as Array<{ name: string }>).map((r) => r.name);
}

describe('every operator, with Frappe NULL handling', () => {
  const cases: Array<[string, unknown, string[]]> = [
    ['= on text', [['label', '=', 'alpha']], ['G1']],
    ["= '' matches NULL and empty", [['label', '=', '']], ['G3', 'G4']],
    ['!= matches NULL rows', [['label', '!=', 'alpha']], ['G2', 'G3', 'G4', 'G5']],
    ['<> is !=', [['colour', '<>', 'Red']], ['G2', 'G3', 'G4']],
    ['> on Int', [['qty', '>', 5]], ['G3', 'G5']],
    ['< on Int', [['qty', '<', 0]], ['G4']],
    ['>= on Currency', [['price', '>=', 10.5]], ['G1', 'G3']],
    ['<= on Currency with a numeric string', [['price', '<=', '1']], ['G2', 'G4']],
    ['= on Check', [['active', '=', 1]], ['G1', 'G3', 'G5']],
    ['> on Date leaves NULL out', [['due', '>', day(0)]], ['G3', 'G5']],
    ['< on Date counts NULL as the earliest date', [['due', '<', day(0)]], ['G1', 'G4']],
    ['>= on Datetime with a date', [['seen_at', '>=', day(0)]], ['G2', 'G5']],
    ['like is case-insensitive with the client’s %', [['label', 'like', 'alp%']], ['G1', 'G5']],
    ['not like matches NULL rows', [['label', 'not like', '%a%']], ['G3', 'G4']],
    ['like with an escaped wildcard literal', [['label', 'like', '%\\_2\\%']], ['G5']],
    ['in with a list', [['colour', 'in', ['Red', 'Blue']]], ['G1', 'G4', 'G5']],
    ['in with a comma-separated string', [['colour', 'in', 'Green, Blue']], ['G2', 'G4']],
    ['not in keeps NULL rows', [['colour', 'not in', ['Red', 'Green']]], ['G3', 'G4']],
    ['in [] matches empty values', [['colour', 'in', []]], ['G3']],
    ['in null matches nothing', [['colour', 'in', null]], []],
    ['not in null matches everything', [['colour', 'not in', null]], ['G1', 'G2', 'G3', 'G4', 'G5']],
    ['is set', [['label', 'is', 'set']], ['G1', 'G2', 'G5']],
    ['is not set', [['label', 'is', 'not set']], ['G3', 'G4']],
    ['between dates', [['due', 'between', [day(-3), day(1)]]], ['G1', 'G2', 'G5']],
    ['between on a Datetime takes whole days', [['seen_at', 'between', [day(0), day(0)]]], ['G2']],
    ['between numbers', [['qty', 'between', [0, 7]]], ['G1', 'G2', 'G5']],
    ['timespan today', [['due', 'timespan', 'today']], ['G2']],
    ['timespan last 7 days', [['due', 'timespan', 'last 7 days']], ['G1', 'G2']],
    ['timespan next 30 days', [['due', 'timespan', 'next 30 days']], ['G2', 'G3', 'G5']],
    [
      'previous 1 month on a Datetime',
      [['seen_at', 'previous', '1 month']],
      ROWS.filter((r) => r.seen_at?.slice(0, 7) === lastMonth15.slice(0, 7)).map((r) => r.code),
    ],
    ['descendants of', [['group', 'descendants of', 'Electronics']], ['G1', 'G2', 'G5']],
    ['descendants of (inclusive)', [['group', 'descendants of (inclusive)', 'Phones']], ['G1', 'G5']],
    ['not descendants of keeps rows without a group', [['group', 'not descendants of', 'Electronics']], ['G3', 'G4']],
    ['ancestors of', [['group', 'ancestors of', 'Phones']], []],
    ['not ancestors of', [['group', 'not ancestors of', 'Smartphones']], ['G1', 'G2', 'G3', 'G4']],
    ['dict filter is equality', { colour: 'Red' }, ['G1', 'G5']],
    ['dict filter with an operator', { qty: ['>=', 7] }, ['G3', 'G5']],
    ['4-element filter naming the DocType', [['Gadget', 'qty', '=', 0]], ['G2']],
    [
      'several filters are ANDed',
      [
        ['active', '=', 1],
        ['qty', '<', 10],
      ],
      ['G1', 'G5'],
    ],
  ];
  for (const [what, filters, expected] of cases) {
    it(what, async () => {
      expect(await codes(a, filters)).toEqual(expected);
    });
  }

  it('ancestors of a group on the tree itself', async () => {
    const res = await a.call('GET', '/api/resource/Gadget Group', {
      query: { filters: JSON.stringify([['name', 'ancestors of', 'Smartphones']]), order_by: 'name asc' },
    });
    expect(res.body.data.map((r: { name: string }) => r.name)).toEqual(['Electronics', 'Phones']);
  });

  it('or_filters are ORed and ANDed with filters', async () => {
    expect(
      await codes(a, [['active', '=', 1]], {
        or_filters: JSON.stringify([
          ['qty', '>', 10],
          ['colour', '=', 'Red'],
        ]),
      }),
    ).toEqual(['G1', 'G3', 'G5']);
  });
});

describe('paging, ordering, fields', () => {
  it('limit_start and limit page through an ordered list', async () => {
    const page = async (start: number) =>
      (await a.call('GET', '/api/resource/Gadget', { query: { order_by: 'qty desc', limit: 2, limit_start: start } })).body.data.map(
        (r: { name: string }) => r.name,
      );
    expect([await page(0), await page(2), await page(4)]).toEqual([['G3', 'G5'], ['G1', 'G2'], ['G4']]);
  });

  it('limit_page_length is the same as limit; the default page is 20 rows', async () => {
    const res = await a.call('GET', '/api/resource/Gadget', { query: { limit_page_length: 3 } });
    expect(res.body.data).toHaveLength(3);
    for (let i = 0; i < 25; i++) await a.call('POST', '/api/resource/Gadget', { json: { code: `P${String(i).padStart(2, '0')}` } });
    expect((await a.call('GET', '/api/resource/Gadget')).body.data).toHaveLength(20);
    expect((await a.call('GET', '/api/resource/Gadget', { query: { limit: 0 } })).body.data).toHaveLength(30);
    const del = await Promise.all(Array.from({ length: 25 }, (_, i) => a.call('DELETE', `/api/resource/Gadget/P${String(i).padStart(2, '0')}`)));
    expect(del.every((r) => r.status === 202)).toBe(true);
  });

  it('the default order is the DocType sort field', async () => {
    const res = await a.call('GET', '/api/resource/Gadget');
    expect(res.body.data.map((r: { name: string }) => r.name)).toEqual(['G5', 'G4', 'G3', 'G2', 'G1']);
  });

  it('group_by with an aggregate', async () => {
    const res = await a.call('GET', '/api/resource/Gadget', {
      query: { fields: '["active","count(name) as n","sum(qty) as total"]', group_by: 'active', order_by: 'active asc' },
    });
    expect(res.body.data).toEqual([
      { active: 0, n: 2, total: -2 },
      { active: 1, n: 3, total: 24 },
    ]);
  });

  it('fields ["*"] returns every column with nulls kept', async () => {
    const res = await a.call('GET', '/api/resource/Gadget', { query: { fields: '["*"]', filters: '[["name","=","G3"]]' } });
    expect(res.body.data[0]).toMatchObject({ name: 'G3', label: null, qty: 12, price: 99.99, active: 1, colour: null, group: 'Garden', docstatus: 0 });
  });

  it('a Link field of the linked DocType can be selected', async () => {
    const res = await a.call('GET', '/api/resource/Gadget', { query: { fields: '["name","group.parent_gadget_group"]', filters: '{"name":"G1"}' } });
    expect(res.body.data).toEqual([{ name: 'G1', 'group.parent_gadget_group': 'Phones' }]);
  });
});

describe('two tenants, hostile inputs', () => {
  it('the same query in each tenant sees only that tenant’s rows', async () => {
    expect(await codes(a, [])).toEqual(['G1', 'G2', 'G3', 'G4', 'G5']);
    expect(await codes(b, [])).toEqual(['B9', 'G1', 'G2']);
    expect(await codes(b, [['qty', '<', 1000]])).toEqual([]);
  });

  const hostile: Array<[string, Record<string, string>]> = [
    ['a subquery in fields', { fields: '["(select name from t_other.\\"tabGadget\\")"]' }],
    ['a schema-qualified field', { fields: `["t_x.\\"tabGadget\\".name"]` }],
    ['a function in fields', { fields: '["version()"]' }],
    ['two fields in one string', { fields: '["name, owner"]' }],
    ['a comment in order_by', { order_by: 'name -- x' }],
    ['a subquery in order_by', { order_by: '(select 1)' }],
    ['sleep in group_by', { group_by: 'SLEEP(1)' }],
    ['a statement in order_by', { order_by: 'name; drop table "tabGadget"' }],
    ['a filter on another table', { filters: '[["t_other.tabGadget","name","=","x"]]' }],
    ['an injected fieldname in filters', { filters: '[["name = name or 1=1 --","=","x"]]' }],
    ['an unknown operator', { filters: '[["name","= ANY(select)","x"]]' }],
    ['malformed JSON', { filters: '[["name","=",' }],
    ['a non-numeric limit', { limit: '1;drop' }],
    ['text for an Int filter', { filters: '[["qty","=","abc"]]' }],
  ];
  for (const [what, query] of hostile) {
    it(`${what} is refused with 417 and no SQL in the answer`, async () => {
      const res = await a.call('GET', '/api/resource/Gadget', { query });
      expect(res.status, res.text).toBe(417);
      expect(['ValidationError', 'DataError']).toContain(res.body.exc_type);
      expect(res.text).not.toMatch(/syntax error|relation "|pg_|postgres/i);
    });
  }

  it('a DocType path segment cannot reach another schema', async () => {
    for (const path of ['/api/resource/..%2Ft_x', `/api/resource/${encodeURIComponent(`"${b.schema}"."tabGadget"`)}`, '/api/resource/tabGadget']) {
      const res = await a.call('GET', path);
      expect(res.status, path).toBe(404);
    }
  });
});
