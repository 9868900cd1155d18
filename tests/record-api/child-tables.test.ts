import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_LINE, SALES_ORDER, tenantWithDoctypes } from '../support/doctypes';
import { startTestServer, type TestServer } from '../support/server';
import { DATETIME_RE, expectError, fetchDoc, HASH_RE, insert, listNames, serverMessages, stable, tableCount } from './helpers';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** `Order Line` (child: item reqd, qty Int, assignee Link User) inside `Sales Order` (hash; customer, lines). */
const orderTenant = () => tenantWithDoctypes(server, ORDER_LINE, SALES_ORDER);

const SO = '/api/resource/Sales%20Order';

describe('create with rows', () => {
  it('rows carry name, parent, parentfield, parenttype, idx and doctype', async () => {
    const t = await orderTenant();
    const res = await t.call('POST', SO, {
      json: {
        customer: 'ACME',
        lines: [
          { item: 'A', qty: 1 },
          { item: 'B', qty: 2 },
        ],
      },
    });
    expect(res.status).toBe(200);
    const order = res.body.data;
    expect(order.lines).toHaveLength(2);
    order.lines.forEach((row: Record<string, any>, i: number) => {
      expect(row.name).toMatch(HASH_RE);
      expect(row.parent).toBe(order.name);
      expect(row.parentfield).toBe('lines');
      expect(row.parenttype).toBe('Sales Order');
      expect(row.idx).toBe(i + 1);
      expect(row.doctype).toBe('Order Line');
      expect(row.docstatus).toBe(0);
      expect(row.owner).toBe('Administrator');
      expect(row.creation).toMatch(DATETIME_RE);
      expect(row).not.toHaveProperty('assignee');
    });
    expect(order.lines.map((r: any) => [r.item, r.qty])).toEqual([
      ['A', 1],
      ['B', 2],
    ]);
    expect(await tableCount(server, t, 'Order Line')).toBe(2);
  });

  it('a GET returns the rows in idx order, as created', async () => {
    const t = await orderTenant();
    const order = await insert(t, 'Sales Order', { lines: [{ item: 'A' }, { item: 'B' }, { item: 'C' }] });
    const got = await fetchDoc(t, 'Sales Order', order.name);
    expect(got.lines).toEqual(order.lines);
    expect(got.lines.map((r: any) => r.item)).toEqual(['A', 'B', 'C']);
  });

  it('parent, parenttype, parentfield and idx sent by the client in a row are overwritten', async () => {
    const t = await orderTenant();
    const order = await insert(t, 'Sales Order', {
      lines: [{ item: 'A', parent: 'elsewhere', parenttype: 'ToDo', parentfield: 'bogus', idx: 9 }],
    });
    expect(order.lines[0]).toMatchObject({ parent: order.name, parenttype: 'Sales Order', parentfield: 'lines', idx: 1 });
  });

  it('a document created without the Table key has an empty list of rows', async () => {
    const t = await orderTenant();
    const order = await insert(t, 'Sales Order', { customer: 'ACME' });
    expect(order.lines).toEqual([]);
  });
});

describe('update replaces the list', () => {
  it('a PUT with the Table field deletes omitted rows, keeps and updates named rows, adds new rows', async () => {
    const t = await orderTenant();
    const order = await insert(t, 'Sales Order', {
      lines: [
        { item: 'A', qty: 1 },
        { item: 'B', qty: 2 },
        { item: 'C', qty: 3 },
      ],
    });
    const [a, b, c] = order.lines;
    const res = await t.call('PUT', `${SO}/${order.name}`, {
      json: {
        lines: [
          { name: b.name, qty: 20 },
          { item: 'D', qty: 4 },
        ],
      },
    });
    expect(res.status).toBe(200);
    const lines = res.body.data.lines;
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ name: b.name, item: 'B', qty: 20, idx: 1, creation: b.creation });
    expect(lines[1]).toMatchObject({ item: 'D', qty: 4, idx: 2, parent: order.name });
    expect(lines[1].name).toMatch(HASH_RE);
    expect([a.name, b.name, c.name]).not.toContain(lines[1].name);
    expect((await fetchDoc(t, 'Sales Order', order.name)).lines).toEqual(lines);
    expect(await tableCount(server, t, 'Order Line')).toBe(2);
  });

  it('a PUT may reorder rows: idx follows the order sent', async () => {
    const t = await orderTenant();
    const order = await insert(t, 'Sales Order', { lines: [{ item: 'A' }, { item: 'B' }] });
    const [a, b] = order.lines;
    const res = await t.call('PUT', `${SO}/${order.name}`, { json: { lines: [{ name: b.name }, { name: a.name }] } });
    expect(res.status).toBe(200);
    expect(res.body.data.lines.map((r: any) => [r.name, r.item, r.idx])).toEqual([
      [b.name, 'B', 1],
      [a.name, 'A', 2],
    ]);
  });

  it('a PUT without the Table key leaves the rows untouched', async () => {
    const t = await orderTenant();
    const order = await insert(t, 'Sales Order', {
      customer: 'ACME',
      lines: [
        { item: 'A', qty: 1 },
        { item: 'B', qty: 2 },
      ],
    });
    const res = await t.call('PUT', `${SO}/${order.name}`, { json: { customer: 'Globex' } });
    expect(res.status).toBe(200);
    expect(res.body.data.customer).toBe('Globex');
    const got = await fetchDoc(t, 'Sales Order', order.name);
    expect(got.lines.map((r: any) => [r.name, r.item, r.qty, r.idx])).toEqual(order.lines.map((r: any) => [r.name, r.item, r.qty, r.idx]));
    expect(await tableCount(server, t, 'Order Line')).toBe(2);
  });

  it('a PUT with the Table field set to [] deletes every row', async () => {
    const t = await orderTenant();
    const order = await insert(t, 'Sales Order', { lines: [{ item: 'A' }, { item: 'B' }] });
    const res = await t.call('PUT', `${SO}/${order.name}`, { json: { lines: [] } });
    expect(res.status).toBe(200);
    expect(res.body.data.lines).toEqual([]);
    expect((await fetchDoc(t, 'Sales Order', order.name)).lines).toEqual([]);
    expect(await tableCount(server, t, 'Order Line')).toBe(0);
  });

  it('deleting the parent deletes its rows', async () => {
    const t = await orderTenant();
    const order = await insert(t, 'Sales Order', { lines: [{ item: 'A' }, { item: 'B' }] });
    expect((await t.call('DELETE', `${SO}/${order.name}`)).status).toBe(202);
    expect(await tableCount(server, t, 'Order Line')).toBe(0);
  });

  it('rows of one document are not touched by a PUT on another', async () => {
    const t = await orderTenant();
    const one = await insert(t, 'Sales Order', { lines: [{ item: 'A' }] });
    const two = await insert(t, 'Sales Order', { lines: [{ item: 'B' }] });
    expect((await t.call('PUT', `${SO}/${two.name}`, { json: { lines: [] } })).status).toBe(200);
    expect((await fetchDoc(t, 'Sales Order', one.name)).lines.map((r: any) => r.name)).toEqual([one.lines[0].name]);
  });
});

describe('rows are validated', () => {
  it('a row missing a mandatory value answers 417 MandatoryError naming the row, and writes neither parent nor rows', async () => {
    const t = await orderTenant();
    const res = await t.call('POST', SO, { json: { customer: 'ACME', lines: [{ item: 'A' }, { qty: 5 }] } });
    expectError(res, 417, 'MandatoryError');
    expect(serverMessages(res.body)).toEqual(['Error: Order Line Row #2: Value missing for: Item']);
    expect(await listNames(t, 'Sales Order')).toEqual([]);
    expect(await tableCount(server, t, 'Order Line')).toBe(0);
  });

  it('a PUT adding a row missing a mandatory value answers 417 MandatoryError and leaves the rows as they were', async () => {
    const t = await orderTenant();
    const order = await insert(t, 'Sales Order', { customer: 'ACME', lines: [{ item: 'A' }] });
    const res = await t.call('PUT', `${SO}/${order.name}`, { json: { customer: 'Globex', lines: [{ name: order.lines[0].name }, { item: '' }] } });
    expectError(res, 417, 'MandatoryError');
    expect(serverMessages(res.body)).toEqual(['Error: Order Line Row #2: Value missing for: Item']);
    expect(stable(await fetchDoc(t, 'Sales Order', order.name))).toEqual(stable(order));
    expect(await tableCount(server, t, 'Order Line')).toBe(1);
  });

  it('a row value that is not of its fieldtype answers 417 ValidationError and writes nothing', async () => {
    const t = await orderTenant();
    const res = await t.call('POST', SO, { json: { lines: [{ item: 'A', qty: 'many' }] } });
    expectError(res, 417, 'ValidationError');
    expect(await listNames(t, 'Sales Order')).toEqual([]);
    expect(await tableCount(server, t, 'Order Line')).toBe(0);
  });

  it('a row linking to a missing record answers 417 LinkValidationError and writes nothing', async () => {
    const t = await orderTenant();
    const res = await t.call('POST', SO, { json: { lines: [{ item: 'A', assignee: 'nobody@example.com' }] } });
    expectError(res, 417, 'LinkValidationError');
    expect(serverMessages(res.body)).toEqual(['Row #1: Could not find Assignee: nobody@example.com']);
    expect(await listNames(t, 'Sales Order')).toEqual([]);
    expect(await tableCount(server, t, 'Order Line')).toBe(0);
  });

  it.each([
    ['an object', { item: 'A' }],
    ['a string', 'A'],
    ['a number', 3],
  ])('a Table field holding %s instead of a list answers 417 and writes nothing', async (_what, lines) => {
    const t = await orderTenant();
    const res = await t.call('POST', SO, { json: { lines } });
    expectError(res, 417, 'ValidationError');
    expect(await listNames(t, 'Sales Order')).toEqual([]);
  });

  it.each([
    ['a string', 'A'],
    ['a list', ['A']],
    ['null', null],
  ])('a row that is %s instead of an object answers 417 and writes nothing', async (_what, row) => {
    const t = await orderTenant();
    const res = await t.call('POST', SO, { json: { lines: [{ item: 'ok' }, row] } });
    expectError(res, 417, 'ValidationError');
    expect(await listNames(t, 'Sales Order')).toEqual([]);
    expect(await tableCount(server, t, 'Order Line')).toBe(0);
  });
});
