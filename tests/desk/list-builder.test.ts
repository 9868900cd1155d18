import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { insert, listRows, shownNames } from './list-support';
import { field, screenshots, seriousViolations, signedIn, startDesk, stopDesk, type DeskFixture } from './support';

/**
 * The README's Book built in the DocType builder, with its list options set there: a field In
 * List View and Bold (in the fields grid's row dialog), the title field, the default sort. Its
 * list then shows real columns, the titles, and the bold field in bold, not only its IDs.
 */

vi.setConfig({ testTimeout: 150_000 });

let f: DeskFixture;
beforeAll(async () => {
  f = await startDesk();
});
afterAll(() => stopDesk(f));

const gridRow = (page: Page, n: number) => page.locator(`[data-fieldname="fields"] tbody tr[data-idx="${n}"]`);

async function addField(page: Page, n: number, label: string, fieldtype: string, reqd = false): Promise<void> {
  await page.getByRole('button', { name: 'Add row (Fields)' }).click();
  await gridRow(page, n).locator('[data-fieldname="label"]').fill(label);
  await gridRow(page, n).locator('[data-fieldname="fieldtype"]').selectOption(fieldtype);
  if (reqd) await gridRow(page, n).locator('[data-fieldname="reqd"]').check();
}

/** Opens row `n` of the fields grid in its dialog, checks the given options there, and closes it. */
async function setRowOptions(page: Page, n: number, checks: string[]): Promise<void> {
  await page.getByRole('button', { name: `Edit row ${n} (Fields)` }).click();
  const dialog = page.getByRole('dialog', { name: `Fields: row ${n}` });
  for (const fieldname of checks) await dialog.locator(`[data-fieldname="${fieldname}"]`).check();
  await dialog.getByRole('button', { name: 'Done' }).click();
  await expect.poll(() => dialog.count()).toBe(0);
}

describe('list options in the DocType builder', () => {
  it("builds the README's Book with In List View, Bold, a title field and a sort; its list shows them", async () => {
    const { page, tenant, origin } = await signedIn(f);
    await page.goto(`${origin}/app/doctype/new`);
    await field(page, '__newname').fill('Book');
    await field(page, 'module').fill('Custom');
    await page.getByRole('option', { name: 'Custom', exact: true }).click();
    await expect.poll(() => page.getByRole('listbox').count()).toBe(0);
    await field(page, 'autoname').fill('field:isbn');
    await addField(page, 1, 'ISBN', 'Data', true);
    await addField(page, 2, 'Title', 'Data');
    await addField(page, 3, 'Pages', 'Int');
    await addField(page, 4, 'Published', 'Date');

    // The row dialog has every list option of a DocField.
    await page.getByRole('button', { name: 'Edit row 3 (Fields)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Fields: row 3' });
    for (const label of ['In List View', 'In Standard Filter', 'In Global Search', 'Bold', 'Mandatory Depends On']) {
      expect(await dialog.getByLabel(label, { exact: true }).count(), label).toBe(1);
    }
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'list-builder-row');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await setRowOptions(page, 3, ['in_list_view', 'bold']);
    await setRowOptions(page, 4, ['in_list_view', 'in_standard_filter']);

    // The DocType's own list options.
    await field(page, 'title_field').fill('title');
    await field(page, 'show_title_field_in_link').check();
    await field(page, 'search_fields').fill('title');
    await field(page, 'sort_field').fill('pages');
    await field(page, 'sort_order').selectOption('ASC');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(`${origin}/app/doctype/Book`);

    const saved = (await tenant.call('GET', '/api/resource/DocType/Book')).body.data;
    expect(saved).toMatchObject({ title_field: 'title', show_title_field_in_link: 1, search_fields: 'title', sort_field: 'pages', sort_order: 'ASC' });
    const options = Object.fromEntries(
      (saved.fields as Array<{ fieldname: string; in_list_view: number; bold: number; in_standard_filter: number }>).map((x) => [
        x.fieldname,
        [x.in_list_view, x.bold, x.in_standard_filter],
      ]),
    );
    expect(options).toEqual({ isbn: [0, 0, 0], title: [0, 0, 0], pages: [1, 1, 0], published: [1, 0, 1] });

    await insert(tenant, 'Book', { isbn: '978-0441013593', title: 'Dune', pages: 412, published: '1965-08-01' });
    await insert(tenant, 'Book', { isbn: '978-0547928227', title: 'The Hobbit', pages: 310 });
    await page.goto(`${origin}/app/book`);
    await expect.poll(() => listRows(page).count()).toBe(2);
    // Sorted by pages, ascending (the DocType's sort); the title first with the ID beneath; Pages in bold.
    expect(await shownNames(page)).toEqual(['978-0547928227', '978-0441013593']);
    const headers = (await page.locator('table.list thead th').allTextContents()).map((h) => h.replace(/[↑↓]/g, '').trim());
    expect(headers).toEqual(['', 'Title', 'Pages', 'Published']);
    const dune = page.getByRole('link', { name: /Dune/ });
    expect(await dune.textContent()).toBe('Dune978-0441013593');
    expect(await page.locator('tr[data-name="978-0441013593"] td[data-fieldname="pages"] strong').textContent()).toBe('412');
    expect(await page.locator('tr[data-name="978-0441013593"] td[data-fieldname="published"] strong').count()).toBe(0);
    // Published is a quick filter now (a date).
    expect(await page.getByRole('group', { name: 'Quick filters' }).getByLabel('Published').getAttribute('type')).toBe('date');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'list-book');
    await page.context().close();
  });
});
