import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDoctype } from './list-support';
import { screenshots, seriousViolations, signedIn, startDesk, stopDesk, type DeskFixture } from './support';

/** Delete on a form: asked in the page, refused in Frappe's words, offered only with the right. */

// A browser test clicks through several pages: on a busy 2-core machine one can take longer than the suite's 30 s.
vi.setConfig({ testTimeout: 120_000 });

let f: DeskFixture;
beforeAll(async () => {
  f = await startDesk();
});
afterAll(() => stopDesk(f));

describe('delete on a form', () => {
  it('asks in a dialog naming the document; Cancel keeps it, Delete removes it and the list says so', async () => {
    const { page, tenant, origin } = await signedIn(f);
    const created = await tenant.call('POST', '/api/resource/ToDo', { json: { description: 'Sweep the floor' } });
    const name = created.body.data.name as string;
    await page.goto(`${origin}/app/todo/${name}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sweep the floor');

    // The browser's confirm() is never used.
    let browserDialogs = 0;
    page.on('dialog', (d) => {
      browserDialogs++;
      void d.dismiss();
    });
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Delete this ToDo?' });
    await expect.poll(() => dialog.count()).toBe(1);
    expect(await dialog.textContent()).toContain(`Delete ToDo Sweep the floor (${name})?`);
    // The safe answer has the focus: Enter by habit deletes nothing.
    expect(await dialog.getByRole('button', { name: 'Cancel' }).evaluate((b) => b === document.activeElement)).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'form-delete');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => dialog.count()).toBe(0);
    expect((await tenant.call('GET', `/api/resource/ToDo/${name}`)).status).toBe(200);

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.waitForURL(`${origin}/app/todo`);
    await expect.poll(() => page.getByText('ToDo Sweep the floor was deleted.').count()).toBe(1);
    expect((await tenant.call('GET', `/api/resource/ToDo/${name}`)).status).toBe(404);
    expect(browserDialogs).toBe(0);
    // The deleted document's page is not left in the history: Back does not lead to it.
    await page.goBack();
    await page.waitForURL((url) => url.pathname !== `/app/todo/${name}` && url.pathname !== '/app/todo');
    await page.context().close();
  });

  it('a document others link to, or a submitted one, is refused in the dialog with the server’s reason', async () => {
    const { page, tenant, origin } = await signedIn(f);
    await createDoctype(tenant, { name: 'Shelf', autoname: 'field:label', fields: [{ fieldname: 'label', fieldtype: 'Data', reqd: 1, unique: 1 }] });
    await createDoctype(tenant, {
      name: 'Book',
      is_submittable: 1,
      title_field: 'title',
      fields: [
        { fieldname: 'title', fieldtype: 'Data', reqd: 1 },
        { fieldname: 'shelf', fieldtype: 'Link', options: 'Shelf' },
      ],
    });
    expect((await tenant.call('POST', '/api/resource/Shelf', { json: { label: 'Poetry' } })).status).toBe(200);
    const book = await tenant.call('POST', '/api/resource/Book', { json: { title: 'Leaves of Grass', shelf: 'Poetry' } });
    const bookName = book.body.data.name as string;

    await page.goto(`${origin}/app/shelf/Poetry`);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Delete this Shelf?' });
    await expect.poll(() => dialog.count()).toBe(1);
    expect(await dialog.textContent()).toContain('Delete Shelf Poetry?');
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    const refusal = dialog.getByRole('alert');
    await expect.poll(() => refusal.textContent()).toContain(`Cannot delete or cancel because Shelf Poetry is linked with Book ${bookName}`);
    expect(await refusal.textContent()).toContain('The document was not deleted');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'form-delete-refused');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(new URL(page.url()).pathname).toBe('/app/shelf/Poetry');
    expect((await tenant.call('GET', '/api/resource/Shelf/Poetry')).status).toBe(200);

    // A submitted Book: cancel it first.
    expect((await tenant.call('PUT', `/api/resource/Book/${bookName}`, { json: { docstatus: 1 } })).status).toBe(200);
    await page.goto(`${origin}/app/book/${bookName}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Leaves of Grass');
    expect(await page.locator('.form-head .status').textContent()).toBe('Submitted');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const bookDialog = page.getByRole('alertdialog', { name: 'Delete this Book?' });
    expect(await bookDialog.textContent()).toContain(`Delete Book Leaves of Grass (${bookName})?`);
    await bookDialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect.poll(() => bookDialog.getByRole('alert').textContent()).toContain('You must Cancel it first');
    expect((await tenant.call('GET', `/api/resource/Book/${bookName}`)).status).toBe(200);
    await page.context().close();
  });

  it('has no Delete without the delete right', async () => {
    const { page, tenant, origin } = await signedIn(f);
    await createDoctype(tenant, {
      name: 'Ledger Entry',
      permissions: [{ role: 'System Manager', read: 1, write: 1, create: 1, delete: 0 }],
      fields: [{ fieldname: 'memo', fieldtype: 'Data' }],
    });
    const entry = await tenant.call('POST', '/api/resource/Ledger Entry', { json: { memo: 'Opening balance' } });
    await page.goto(`${origin}/app/ledger-entry/${entry.body.data.name as string}`);
    await expect.poll(() => page.getByRole('button', { name: 'Save', exact: true }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Delete', exact: true }).count()).toBe(0);
    await page.context().close();
  });
});
