import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUser, originOf } from '../oauth/support';
import { ALL_RIGHTS, createDoctype, insert, listRows, rowBox, selectionBar, shownNames } from './list-support';
import { PASSWORD, screenshots, seriousViolations, signedIn, signIn, startDesk, stopDesk, type DeskFixture } from './support';

/**
 * A list's selection and its bulk actions in the desk (Frappe's list view): rows picked with their
 * checkboxes, then Edit, Assign to, Export (a CSV download) and Delete (an in-page dialog), each
 * checked through the API; a refusal (a linked document) shown in the page; "all matching the
 * filter" acting beyond the page shown.
 */

vi.setConfig({ testTimeout: 150_000 });

let f: DeskFixture;
beforeAll(async () => {
  f = await startDesk();
});
afterAll(() => stopDesk(f));

describe('a list selection', () => {
  it('is edited, assigned and exported in bulk, the bar naming how many are selected', async () => {
    const { page, tenant, origin } = await signedIn(f);
    const a = await insert(tenant, 'ToDo', { description: 'Sweep the yard', priority: 'Low' });
    const b = await insert(tenant, 'ToDo', { description: 'Paint the fence', priority: 'Low' });
    const c = await insert(tenant, 'ToDo', { description: 'Fix the gate', priority: 'Low' });
    await page.goto(`${origin}/app/todo`);
    await expect.poll(() => listRows(page).count()).toBe(3);
    // The title (ToDo's title_field) is what a row shows, its name beneath.
    expect(await page.getByRole('link', { name: /Sweep the yard/ }).textContent()).toContain(a);

    await rowBox(page, a).check();
    // The keyboard: Space on a focused checkbox toggles it.
    await rowBox(page, b).focus();
    await page.keyboard.press('Space');
    await expect.poll(() => selectionBar(page).getByRole('status').textContent()).toBe('2 selected');
    expect(await rowBox(page, c).isChecked()).toBe(false);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'list-selection');

    // Edit: one field, one value, for both.
    await selectionBar(page).getByRole('button', { name: 'Edit' }).click();
    const editDialog = page.getByRole('dialog');
    await editDialog.getByLabel('Field').selectOption('priority');
    await editDialog.locator('[data-fieldname="priority"]').selectOption('High');
    expect(await seriousViolations(page)).toEqual([]);
    await editDialog.getByRole('button', { name: 'Update' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: '2 records updated.' }).count()).toBe(1);
    const priorities = async () => {
      const res = await tenant.call('GET', '/api/resource/ToDo', { query: { fields: '["name","priority"]', limit_page_length: 10 } });
      return Object.fromEntries((res.body.data as Array<{ name: string; priority: string }>).map((r) => [r.name, r.priority]));
    };
    expect(await priorities()).toEqual({ [a]: 'High', [b]: 'High', [c]: 'Low' });
    // The list shows the new values (it was asked again), the selection stays.
    await expect.poll(() => page.locator(`tr[data-name="${a}"] td[data-fieldname="priority"]`).textContent()).toBe('High');
    expect(await rowBox(page, a).isChecked()).toBe(true);

    // Assign to: a user searched as one types, one ToDo per document.
    await selectionBar(page).getByRole('button', { name: 'Assign to' }).click();
    const assignDialog = page.getByRole('dialog');
    await assignDialog.getByRole('combobox', { name: /User/ }).fill('ada');
    await page.getByRole('option', { name: /ada@example\.com/ }).click();
    await assignDialog.getByLabel('Comment (optional)').fill('Before the weekend');
    await assignDialog.getByRole('button', { name: 'Assign to' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: '2 records assigned to ada@example.com.' }).count()).toBe(1);
    const assignments = await tenant.call('GET', '/api/resource/ToDo', {
      query: { fields: '["reference_name","allocated_to","description"]', filters: JSON.stringify([['reference_type', '=', 'ToDo']]) },
    });
    expect((assignments.body.data as Array<{ reference_name: string }>).map((r) => r.reference_name).sort()).toEqual([a, b].sort());
    expect(assignments.body.data.every((r: { allocated_to: string }) => r.allocated_to === 'ada@example.com')).toBe(true);

    // Export: the visible columns of the selected rows, as a CSV file downloaded by the browser.
    const [download] = await Promise.all([page.waitForEvent('download'), selectionBar(page).getByRole('button', { name: 'Export' }).click()]);
    expect(download.suggestedFilename()).toBe('ToDo.csv');
    const csv = fs.readFileSync(await download.path(), 'utf8');
    const lines = csv.trim().split(/\r?\n/);
    expect(lines[0]).toContain('"ID"');
    expect(lines).toHaveLength(3);
    expect(csv).toContain('Sweep the yard');
    expect(csv).toContain('Paint the fence');
    expect(csv).not.toContain('Fix the gate');
    await page.context().close();
  });

  it('is deleted after an in-page question; a document others link to is refused in the page and stays', async () => {
    const { page, tenant, origin } = await signedIn(f);
    await createDoctype(tenant, { name: 'Shelf', autoname: 'field:label', fields: [{ fieldname: 'label', fieldtype: 'Data', reqd: 1, in_list_view: 1 }] });
    await createDoctype(tenant, { name: 'Novel', fields: [{ fieldname: 'shelf', fieldtype: 'Link', options: 'Shelf', in_list_view: 1 }] });
    await insert(tenant, 'Shelf', { label: 'Attic' });
    await insert(tenant, 'Shelf', { label: 'Hall' });
    await insert(tenant, 'Novel', { shelf: 'Hall' });

    await page.goto(`${origin}/app/shelf`);
    await expect.poll(() => listRows(page).count()).toBe(2);
    await page.getByRole('checkbox', { name: 'Select all on this page' }).check();
    await expect.poll(() => selectionBar(page).getByRole('status').textContent()).toBe('2 selected');
    await selectionBar(page).getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('alertdialog');
    await expect.poll(() => dialog.getByRole('heading').textContent()).toBe('Delete 2 Shelf records?');
    expect(await dialog.textContent()).toMatch(/Hall, Attic|Attic, Hall/);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'list-delete-dialog');
    await dialog.getByRole('button', { name: 'Delete' }).click();

    // Attic went; Hall is linked from a Novel: Frappe's LinkExistsError, in the page.
    const refusal = page.getByRole('alert').filter({ hasText: '1 record was not deleted' });
    await expect.poll(() => refusal.count()).toBe(1);
    expect(await refusal.textContent()).toMatch(/Hall.*linked with Novel|linked/i);
    await expect.poll(() => shownNames(page)).toEqual(['Hall']);
    expect((await tenant.call('GET', '/api/resource/Shelf/Attic')).status).toBe(404);
    expect((await tenant.call('GET', '/api/resource/Shelf/Hall')).status).toBe(200);
    // What could not be deleted stays selected.
    expect(await rowBox(page, 'Hall').isChecked()).toBe(true);
    await screenshots(page, 'list-delete-refused');

    // A submitted document: cancel it first, in Frappe's words.
    await createDoctype(tenant, { name: 'Claim', is_submittable: 1, fields: [{ fieldname: 'subject', fieldtype: 'Data', in_list_view: 1 }] });
    const claim = await insert(tenant, 'Claim', { subject: 'Taxi', docstatus: 1 });
    expect((await tenant.call('GET', `/api/resource/Claim/${claim}`)).body.data.docstatus).toBe(1);
    await page.goto(`${origin}/app/claim`);
    await rowBox(page, claim).check();
    await selectionBar(page).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
    const submitted = page.getByRole('alert').filter({ hasText: '1 record was not deleted' });
    await expect.poll(() => submitted.count()).toBe(1);
    expect(await submitted.textContent()).toMatch(/cancel/i);
    expect((await tenant.call('GET', `/api/resource/Claim/${claim}`)).status).toBe(200);
    await page.context().close();
  });

  it('"all matching the filter" acts on every matching record, beyond the page', async () => {
    const { page, tenant, origin } = await signedIn(f);
    for (let i = 1; i <= 23; i++) await insert(tenant, 'ToDo', { description: `Chore ${i}`, priority: 'Low' });
    await insert(tenant, 'ToDo', { description: 'Not this one', priority: 'High' });
    await page.goto(`${origin}/app/todo?filters=${encodeURIComponent('[["priority","=","Low"]]')}`);
    await expect.poll(() => listRows(page).count()).toBe(20);
    // Shift+click selects the range from the row last toggled.
    const shown = await shownNames(page);
    await rowBox(page, shown[1] as string).click();
    await rowBox(page, shown[5] as string).click({ modifiers: ['Shift'] });
    await expect.poll(() => selectionBar(page).getByRole('status').textContent()).toBe('5 selected');
    expect(await rowBox(page, shown[0] as string).isChecked()).toBe(false);
    expect(await rowBox(page, shown[3] as string).isChecked()).toBe(true);
    await selectionBar(page).getByRole('button', { name: 'Clear selection' }).click();
    await expect.poll(() => selectionBar(page).count()).toBe(0);
    await page.getByRole('checkbox', { name: 'Select all on this page' }).check();
    await expect.poll(() => selectionBar(page).getByRole('status').textContent()).toBe('20 selected');
    await selectionBar(page).getByRole('button', { name: 'Select all 23 matching the filter' }).click();
    await expect.poll(() => selectionBar(page).getByRole('status').textContent()).toBe('All 23 matching records selected');

    const [download] = await Promise.all([page.waitForEvent('download'), selectionBar(page).getByRole('button', { name: 'Export' }).click()]);
    const csv = fs.readFileSync(await download.path(), 'utf8');
    expect(csv.trim().split(/\r?\n/)).toHaveLength(24); // header + 23
    expect(csv).toContain('Chore 23');
    expect(csv).not.toContain('Not this one');

    await selectionBar(page).getByRole('button', { name: 'Assign to' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('combobox', { name: /User/ }).fill('ada');
    await page.getByRole('option', { name: /ada@example\.com/ }).click();
    await dialog.getByRole('button', { name: 'Assign to' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: '23 records assigned' }).count()).toBe(1);
    const count = await tenant.call('GET', '/api/method/frappe.client.get_count', {
      query: { doctype: 'ToDo', filters: JSON.stringify([['reference_type', '=', 'ToDo']]) },
    });
    expect(count.body.message).toBe(23);
    await page.context().close();
  });

  it('offers only the actions the user has the rights for', async () => {
    const tenant = await f.server.tenant('desk');
    expect((await tenant.call('POST', '/api/resource/Role', { json: { role_name: 'Clerk', desk_access: 1 } })).status).toBe(200);
    await createUser(tenant, 'cleo@example.com', ['Clerk']);
    // DocPerm's defaults grant write, create, delete, report and export (as Frappe's do): refused here explicitly.
    const clerk = (rights: Record<string, number>) => ({ role: 'Clerk', read: 1, write: 0, create: 0, delete: 0, report: 0, export: 0, ...rights });
    await createDoctype(tenant, { name: 'Memo', permissions: [ALL_RIGHTS, clerk({})], fields: [{ fieldname: 'subject', fieldtype: 'Data', in_list_view: 1 }] });
    await createDoctype(tenant, {
      name: 'Note Card',
      permissions: [ALL_RIGHTS, clerk({ write: 1, delete: 1 })],
      fields: [{ fieldname: 'subject', fieldtype: 'Data', in_list_view: 1 }],
    });
    const memo = await insert(tenant, 'Memo', { subject: 'Read me' });
    const card = await insert(tenant, 'Note Card', { subject: 'Edit me' });

    const context = await f.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const origin = originOf(f.server, tenant);
    await signIn(page, origin, 'cleo@example.com', PASSWORD);
    const offered = async () =>
      (await selectionBar(page).locator('.actions button').allTextContents()).filter((b) => b !== 'Clear selection' && b !== 'Assign to');

    await page.goto(`${origin}/app/memo`);
    await rowBox(page, memo).check();
    await expect.poll(() => selectionBar(page).getByRole('status').textContent()).toBe('1 selected');
    expect(await offered()).toEqual([]);

    await page.goto(`${origin}/app/note-card`);
    await rowBox(page, card).check();
    await expect.poll(() => selectionBar(page).getByRole('status').textContent()).toBe('1 selected');
    expect(await offered()).toEqual(['Edit', 'Delete']);
    await context.close();
  });
});
