import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDoctype, insert, listRows, otherUser, shownNames } from './list-support';
import { screenshots, seriousViolations, signedIn, startDesk, stopDesk, type DeskFixture } from './support';

/**
 * Lists that show what matters: a filter widget per fieldtype (a Select's options, a Check as
 * yes/no, a date picker), the status filter and Draft badges only on submittable DocTypes, the
 * user's list settings (columns, sort, page length) kept across visits, and the sidebar's
 * Assigned To / Created By counts filtering the list.
 */

vi.setConfig({ testTimeout: 150_000 });

let f: DeskFixture;
beforeAll(async () => {
  f = await startDesk();
});
afterAll(() => stopDesk(f));

const CHORE = {
  name: 'Chore',
  autoname: 'field:title',
  fields: [
    { fieldname: 'title', fieldtype: 'Data', reqd: 1 },
    { fieldname: 'kind', fieldtype: 'Select', options: 'Indoor\nOutdoor', in_list_view: 1, in_standard_filter: 1 },
    { fieldname: 'done', fieldtype: 'Check', in_list_view: 1, in_standard_filter: 1 },
    { fieldname: 'due', fieldtype: 'Date', in_list_view: 1, in_standard_filter: 1 },
    { fieldname: 'notes', fieldtype: 'Small Text' },
  ],
};

const sorted = (names: string[]) => [...names].sort();

describe('list filters, settings and sidebar', () => {
  it('filters with a widget per fieldtype: a Select as its options, a Check as yes/no, a Date with a picker', async () => {
    const { page, tenant, origin } = await signedIn(f);
    await createDoctype(tenant, CHORE);
    await insert(tenant, 'Chore', { title: 'Dishes', kind: 'Indoor', done: 1, due: '2026-05-01' });
    await insert(tenant, 'Chore', { title: 'Laundry', kind: 'Indoor', done: 0, due: '2026-05-02' });
    await insert(tenant, 'Chore', { title: 'Mowing', kind: 'Outdoor', done: 0, due: '2026-05-01' });
    await page.goto(`${origin}/app/chore`);
    await expect.poll(() => listRows(page).count()).toBe(3);
    // Not submittable: no status filter, no status column, no Draft badge.
    const quick = page.getByRole('group', { name: 'Quick filters' });
    expect(await quick.getByLabel('Status').count()).toBe(0);
    expect(await page.locator('table.list').textContent()).not.toContain('Draft');

    // Select: its options (and Any).
    const kind = quick.getByLabel('Kind');
    expect(await kind.locator('option').allTextContents()).toEqual(['Any', 'Indoor', 'Outdoor']);
    await kind.selectOption('Indoor');
    await expect.poll(async () => sorted(await shownNames(page))).toEqual(['Dishes', 'Laundry']);
    // Check: yes / no.
    const done = quick.getByLabel('Done');
    expect(await done.locator('option').allTextContents()).toEqual(['Any', 'Yes', 'No']);
    await done.selectOption({ label: 'No' });
    await expect.poll(() => shownNames(page)).toEqual(['Laundry']);
    await done.selectOption({ label: 'Any' });
    await kind.selectOption({ label: 'Any' });
    await expect.poll(() => listRows(page).count()).toBe(3);
    // Date: a date input (the browser's picker).
    const due = quick.getByLabel('Due');
    expect(await due.getAttribute('type')).toBe('date');
    await due.fill('2026-05-01');
    await expect.poll(async () => sorted(await shownNames(page))).toEqual(['Dishes', 'Mowing']);
    expect(JSON.parse(new URL(page.url()).searchParams.get('filters') ?? '[]')).toEqual([['due', '=', '2026-05-01']]);

    // The filter rows take the same widgets: a Select field's value is chosen from its options.
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByLabel('Field of filter 2').selectOption('kind');
    expect(await page.getByLabel('Value of filter 2').evaluate((e) => e.tagName)).toBe('SELECT');
    await page.getByLabel('Value of filter 2').selectOption('Outdoor');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => shownNames(page)).toEqual(['Mowing']);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'list-filters');

    // A submittable DocType: the status filter, Draft/Submitted/Cancelled.
    await createDoctype(tenant, { name: 'Claim', is_submittable: 1, fields: [{ fieldname: 'subject', fieldtype: 'Data', in_list_view: 1 }] });
    await insert(tenant, 'Claim', { subject: 'Taxi' });
    await page.goto(`${origin}/app/claim`);
    await expect.poll(() => listRows(page).count()).toBe(1);
    const status = page.getByRole('group', { name: 'Quick filters' }).getByLabel('Status');
    expect(await status.locator('option').allTextContents()).toEqual(['Any', 'Draft', 'Submitted', 'Cancelled']);
    expect(await listRows(page).first().textContent()).toContain('Draft');
    await status.selectOption({ label: 'Submitted' });
    await expect.poll(() => page.getByText('No record matches these filters.').count()).toBe(1);
    await page.context().close();
  });

  it("keeps the user's columns, sort and page length across visits (Frappe's __UserSettings)", async () => {
    const { page, tenant, origin } = await signedIn(f);
    await createDoctype(tenant, CHORE);
    for (const [i, title] of ['Alpha', 'Bravo', 'Charlie'].entries()) await insert(tenant, 'Chore', { title, kind: 'Indoor', notes: `note ${i}` });
    await page.goto(`${origin}/app/chore`);
    await expect.poll(() => listRows(page).count()).toBe(3);

    // Columns: Notes added, Due removed.
    await page.getByRole('button', { name: 'Columns' }).click();
    const columns = page.getByRole('dialog', { name: 'Columns shown' });
    await columns.getByLabel('Notes').check();
    await columns.getByLabel('Due').uncheck();
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    // Sort: a click on a column header (ID ascending), then page length 100.
    await page.getByRole('button', { name: 'ID', exact: true }).click();
    await expect.poll(() => shownNames(page)).toEqual(['Alpha', 'Bravo', 'Charlie']);
    await page.getByLabel('Rows per page').selectOption('100');
    await expect.poll(() => new URL(page.url()).searchParams.get('page_length')).toBe('100');

    // Stored as Frappe stores them (read with the user's session).
    const mine = async () => {
      const res = await page.evaluate(async () => (await fetch('/api/method/frappe.model.utils.user_settings.get?doctype=Chore')).json());
      return JSON.parse((res as { message: string }).message) as { List?: Record<string, unknown> };
    };
    await expect.poll(async () => (await mine()).List?.page_length).toBe(100);
    expect((await mine()).List).toMatchObject({
      fields: [
        ['kind', 'Chore'],
        ['done', 'Chore'],
        ['notes', 'Chore'],
      ],
      order_by: '`tabChore`.`name` asc',
    });

    // A new visit (no state in the URL) opens as the user left it.
    await page.goto(`${origin}/app/chore`);
    await expect.poll(() => shownNames(page)).toEqual(['Alpha', 'Bravo', 'Charlie']);
    const headers = await page.locator('table.list thead th').allTextContents();
    expect(headers.map((h) => h.replace(/[↑↓]/g, '').trim())).toEqual(['', 'ID', 'Kind', 'Done', 'Notes']);
    expect(await page.getByLabel('Rows per page').inputValue()).toBe('100');
    expect(await page.locator('table.list thead th[aria-sort="ascending"]').textContent()).toContain('ID');
    await page.context().close();
  });

  it('shows Assigned To and Created By counts in the sidebar; choosing one filters the list', async () => {
    const { page, tenant, origin } = await signedIn(f);
    const bobAuth = await otherUser(tenant, 'bob@example.com');
    const mine = await insert(tenant, 'ToDo', { description: 'From the admin' });
    await insert(tenant, 'ToDo', { description: 'From Bob' }, bobAuth);
    await insert(tenant, 'ToDo', { description: 'From Bob too' }, bobAuth);
    const assigned = await tenant.call('POST', '/api/method/frappe.desk.form.assign_to.add', {
      json: { doctype: 'ToDo', name: mine, assign_to: JSON.stringify(['ada@example.com']) },
    });
    expect(assigned.status, assigned.text).toBe(200);

    await page.goto(`${origin}/app/todo?filters=${encodeURIComponent('[["reference_type","is not set",""]]')}`);
    const sidebar = page.getByRole('complementary', { name: 'List sidebar' });
    const createdBy = sidebar.getByRole('region', { name: 'Created By' });
    await expect.poll(() => createdBy.getByRole('button').allTextContents()).toEqual(['bob@example.com 2', 'Administrator 1']);
    const assignedTo = sidebar.getByRole('region', { name: 'Assigned To' });
    await expect.poll(() => assignedTo.getByRole('button').allTextContents()).toEqual(['ada@example.com 1']);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'list-sidebar');

    await createdBy.getByRole('button', { name: /bob@example\.com/ }).click();
    await expect.poll(() => listRows(page).count()).toBe(2);
    expect(JSON.parse(new URL(page.url()).searchParams.get('filters') ?? '[]')).toContainEqual(['owner', '=', 'bob@example.com']);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await assignedTo.getByRole('button', { name: /ada@example\.com/ }).click();
    await expect.poll(() => shownNames(page)).toEqual([mine]);
    expect(JSON.parse(new URL(page.url()).searchParams.get('filters') ?? '[]')).toEqual([['_assign', 'like', 'ada@example.com']]);

    // Hidden and shown again.
    await sidebar.getByRole('button', { name: 'Hide sidebar' }).click();
    expect(await createdBy.count()).toBe(0);
    await sidebar.getByRole('button', { name: 'Show sidebar' }).click();
    await expect.poll(() => createdBy.count()).toBe(1);
    await page.context().close();
  });

  it('filters a Link with search: the quick filter suggests users as one types', async () => {
    const { page, tenant, origin } = await signedIn(f);
    const mine = await insert(tenant, 'ToDo', { description: 'For Ada', allocated_to: 'ada@example.com' });
    await insert(tenant, 'ToDo', { description: 'For nobody' });
    await page.goto(`${origin}/app/todo`);
    await expect.poll(() => listRows(page).count()).toBe(2);
    const allocated = page.getByRole('group', { name: 'Quick filters' }).getByRole('combobox', { name: 'Allocated To' });
    const searched = page.waitForResponse((r) => r.url().includes('search_link') && r.url().includes('txt=ad'));
    await allocated.fill('ad');
    await searched;
    await page.getByRole('option', { name: /ada@example\.com/ }).click();
    await expect.poll(() => shownNames(page)).toEqual([mine]);
    expect(JSON.parse(new URL(page.url()).searchParams.get('filters') ?? '[]')).toEqual([['allocated_to', '=', 'ada@example.com']]);
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  });
});
