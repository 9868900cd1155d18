import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDoctype, insert, otherUser } from './list-support';
import { signedIn, startDesk, stopDesk, type DeskFixture } from './support';

/**
 * `show_title_field_in_link`: a Link to such a DocType shows the linked document's title, in a
 * list's column and in a form's link, from frappe.desk.search.get_link_title; which answers
 * nothing for other DocTypes, or to a caller who may not read the document.
 */

vi.setConfig({ testTimeout: 150_000 });

let f: DeskFixture;
beforeAll(async () => {
  f = await startDesk();
});
afterAll(() => stopDesk(f));

const AUTHOR = {
  name: 'Author',
  autoname: 'hash',
  title_field: 'full_name',
  show_title_field_in_link: 1,
  fields: [{ fieldname: 'full_name', fieldtype: 'Data', reqd: 1 }],
  // Read only for their owner: a plain user may not read another's Author.
  permissions: [
    { role: 'System Manager', read: 1, write: 1, create: 1, delete: 1 },
    { role: 'All', read: 1, write: 1, create: 1, if_owner: 1 },
  ],
};
const NOVEL = {
  name: 'Novel',
  autoname: 'field:title',
  fields: [
    { fieldname: 'title', fieldtype: 'Data', reqd: 1 },
    { fieldname: 'author', fieldtype: 'Link', options: 'Author', in_list_view: 1 },
    { fieldname: 'editor', fieldtype: 'Link', options: 'User', in_list_view: 1 },
  ],
};

describe('titles in links', () => {
  it('a Link to a DocType with show_title_field_in_link shows the title in the list and the form; the API answers it only to readers', async () => {
    const { page, tenant, origin, email } = await signedIn(f);
    await createDoctype(tenant, AUTHOR);
    await createDoctype(tenant, NOVEL);
    const author = await insert(tenant, 'Author', { full_name: 'Ursula K. Le Guin' });
    await insert(tenant, 'Novel', { title: 'The Dispossessed', author, editor: email });

    // The API: the title for a DocType that asks for it, nothing for one that does not.
    const title = await tenant.call('GET', '/api/method/frappe.desk.search.get_link_title', { query: { doctype: 'Author', docname: author } });
    expect(title.status, title.text).toBe(200);
    expect(title.body.message).toBe('Ursula K. Le Guin');
    const plain = await tenant.call('GET', '/api/method/frappe.desk.search.get_link_title', { query: { doctype: 'Novel', docname: 'The Dispossessed' } });
    expect(plain.status).toBe(200);
    expect(plain.body.message).toBeUndefined();
    const stranger = await otherUser(tenant, 'stranger@example.com', []); // no role beyond All: not the Author's owner
    const hidden = await tenant.call('GET', '/api/method/frappe.desk.search.get_link_title', {
      query: { doctype: 'Author', docname: author },
      auth: stranger,
    });
    expect(hidden.status, hidden.text).toBe(200);
    expect(hidden.body.message).toBeUndefined();
    const bad = await tenant.call('GET', '/api/method/frappe.desk.search.get_link_title', { query: { doctype: 'Author' } });
    expect(bad.status).toBe(417);

    // The list's Author column shows the title; the User column (no such flag) its name.
    await page.goto(`${origin}/app/novel`);
    const cell = page.locator('table.list td[data-fieldname="author"]').first();
    await expect.poll(() => cell.textContent()).toBe('Ursula K. Le Guin');
    expect(await page.locator('table.list td[data-fieldname="editor"]').first().textContent()).toBe(email);

    // The form's link to the Author names the title.
    await page.goto(`${origin}/app/novel/The Dispossessed`);
    await expect.poll(() => page.getByRole('link', { name: 'Open Author Ursula K. Le Guin' }).count()).toBe(1);
  });
});
