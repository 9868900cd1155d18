import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestTenant } from '../support/server';
import { field, screenshots, seriousViolations, signedIn, startDesk, stopDesk, type DeskFixture } from './support';

/** Runtime DocTypes in the desk: a submittable one through its states, one with a child table, permlevels. */

// A browser test clicks through several pages: on a busy 2-core machine one can take longer than the suite's 30 s.
vi.setConfig({ testTimeout: 90_000 });

let f: DeskFixture;
beforeAll(async () => {
  f = await startDesk();
});
afterAll(() => stopDesk(f));

const SYSTEM_MANAGER = { role: 'System Manager', read: 1, write: 1, create: 1, delete: 1, submit: 1, cancel: 1, amend: 1 };

async function createDoctype(t: TestTenant, def: Record<string, unknown>): Promise<void> {
  const res = await t.call('POST', '/api/resource/DocType', { json: { module: 'Custom', permissions: [SYSTEM_MANAGER], ...def } });
  expect(res.status, res.text).toBe(200);
}

describe('documents of runtime DocTypes', () => {
  it('a submittable document is saved, submitted, cancelled and amended with the form’s buttons', async () => {
    const { page, tenant, origin } = await signedIn(f);
    await createDoctype(tenant, {
      name: 'Expense Claim',
      is_submittable: 1,
      fields: [
        { fieldname: 'title', fieldtype: 'Data', reqd: 1, in_list_view: 1 },
        { fieldname: 'amount', fieldtype: 'Currency', in_list_view: 1 },
        { fieldname: 'spent_on', fieldtype: 'Date' },
        { fieldname: 'details', fieldtype: 'Section Break', label: 'Details' },
        { fieldname: 'notes', fieldtype: 'Small Text' },
        { fieldname: 'reimbursed', fieldtype: 'Check' },
      ],
    });
    await page.goto(`${origin}/app/expense-claim/new`);
    await field(page, 'title').fill('Train to Lyon');
    await field(page, 'amount').fill('84.5');
    await field(page, 'reimbursed').check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(/\/app\/expense-claim\/(?!new)[^/]+$/);
    const name = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);

    await page.getByRole('button', { name: 'Submit', exact: true }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Cancel', exact: true }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Save', exact: true }).count()).toBe(0);
    expect(await field(page, 'title').getAttribute('readonly')).not.toBeNull();
    expect((await tenant.call('GET', `/api/resource/Expense Claim/${name}`)).body.data.docstatus).toBe(1);
    await screenshots(page, 'submitted-form');

    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Amend', exact: true }).count()).toBe(1);
    expect((await tenant.call('GET', `/api/resource/Expense Claim/${name}`)).body.data.docstatus).toBe(2);

    await page.getByRole('button', { name: 'Amend', exact: true }).click();
    await page.waitForURL(`${origin}/app/expense-claim/new`);
    expect(await field(page, 'title').inputValue()).toBe('Train to Lyon');
    await field(page, 'amount').fill('86');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(`${origin}/app/expense-claim/${name}-1`);
    const amended = (await tenant.call('GET', `/api/resource/Expense Claim/${name}-1`)).body.data;
    expect(amended).toMatchObject({ amended_from: name, docstatus: 0, title: 'Train to Lyon', amount: 86, reimbursed: 1 });

    await page.goto(`${origin}/app/expense-claim`);
    await expect.poll(() => page.getByRole('table').getByRole('row').count()).toBe(3);
    expect(await page.getByRole('cell', { name: 'Cancelled' }).count()).toBe(1);
    await page.context().close();
  });

  it('a child table is edited as a grid: rows added, filled, removed and saved with the document', async () => {
    const { page, tenant, origin } = await signedIn(f, { viewport: { width: 360, height: 740 } });
    await createDoctype(tenant, {
      name: 'Order Line',
      istable: 1,
      permissions: [],
      fields: [
        { fieldname: 'item', fieldtype: 'Data', reqd: 1, in_list_view: 1 },
        { fieldname: 'qty', fieldtype: 'Int', in_list_view: 1 },
      ],
    });
    await createDoctype(tenant, {
      name: 'Purchase Order',
      fields: [
        { fieldname: 'supplier', fieldtype: 'Data', reqd: 1, in_list_view: 1 },
        { fieldname: 'lines', fieldtype: 'Table', options: 'Order Line', label: 'Lines' },
      ],
    });
    await page.goto(`${origin}/app/purchase-order/new`);
    await field(page, 'supplier').fill('Acme');
    const addRow = page.getByRole('button', { name: /^Add row/ });
    await addRow.click();
    await addRow.click();
    await addRow.click();
    const cell = (row: number, fieldname: string) => page.locator(`[data-fieldname="lines"] tr[data-idx="${row}"] [data-fieldname="${fieldname}"]`);
    await cell(1, 'item').fill('Bolts');
    await cell(1, 'qty').fill('10');
    await cell(2, 'item').fill('Nuts');
    await cell(2, 'qty').fill('20');
    await cell(3, 'item').fill('Washers');
    await cell(3, 'qty').fill('30');
    await page.getByRole('button', { name: 'Remove row 2' }).click();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'child-table-form');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(/\/app\/purchase-order\/(?!new)[^/]+$/);
    const name = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);

    const saved = (await tenant.call('GET', `/api/resource/Purchase Order/${name}`)).body.data;
    expect(saved.lines.map((r: Record<string, unknown>) => [r.idx, r.item, r.qty])).toEqual([
      [1, 'Bolts', 10],
      [2, 'Washers', 30],
    ]);

    // The saved rows come back into the grid; one edited in place keeps its name.
    await expect.poll(() => cell(2, 'item').inputValue()).toBe('Washers');
    await cell(2, 'qty').fill('35');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect
      .poll(async () => (await tenant.call('GET', `/api/resource/Purchase Order/${name}`)).body.data.lines.map((r: Record<string, unknown>) => r.qty))
      .toEqual([10, 35]);
    const after = (await tenant.call('GET', `/api/resource/Purchase Order/${name}`)).body.data;
    expect(after.lines[1].name).toBe(saved.lines[1].name);
    await page.context().close();
  });

  it('fields above the user’s permlevel are not shown; read-only levels cannot be edited', async () => {
    const { page, tenant, origin } = await signedIn(f);
    await createDoctype(tenant, {
      name: 'Audit Note',
      permissions: [SYSTEM_MANAGER, { role: 'System Manager', permlevel: 2, read: 1, write: 0, create: 0, delete: 0 }],
      fields: [
        { fieldname: 'subject', fieldtype: 'Data', in_list_view: 1 },
        { fieldname: 'secret_remark', fieldtype: 'Data', permlevel: 1 },
        { fieldname: 'audit_code', fieldtype: 'Data', permlevel: 2 },
      ],
    });
    const created = await tenant.call('POST', '/api/resource/Audit Note', { json: { subject: 'Q3', secret_remark: 'classified', audit_code: 'A-7' } });
    expect(created.status, created.text).toBe(200);
    await page.goto(`${origin}/app/audit-note/${created.body.data.name as string}`);
    await expect.poll(() => field(page, 'subject').inputValue()).toBe('Q3');
    expect(await page.locator('[data-fieldname="secret_remark"]').count()).toBe(0);
    expect(await page.content()).not.toContain('classified');
    expect(await field(page, 'audit_code').inputValue()).toBe('A-7');
    expect(await field(page, 'audit_code').getAttribute('readonly')).not.toBeNull();
    await page.context().close();
  });
});
