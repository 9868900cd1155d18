import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUser } from '../oauth/support';
import { field, screenshots, seriousViolations, signedIn, startDesk, stopDesk, type DeskFixture } from './support';

/** A form's timeline: the Version of an edit, comments, assignments and attachments, through the desk and checked through the API. */

// A browser test clicks through several pages: on a busy 2-core machine one can take longer than the suite's 30 s.
vi.setConfig({ testTimeout: 120_000 });

let f: DeskFixture;
beforeAll(async () => {
  f = await startDesk();
});
afterAll(() => stopDesk(f));

describe('the form timeline', () => {
  it('shows the diff of an edit, a comment added through the box, an assignment added and removed', async () => {
    const { page, tenant, origin } = await signedIn(f);
    await createUser(tenant, 'bob@example.com');
    const created = await tenant.call('POST', '/api/resource/ToDo', { json: { description: 'Paint the fence', priority: 'Low' } });
    const name = created.body.data.name as string;
    await page.goto(`${origin}/app/todo/${name}`);
    await expect.poll(() => field(page, 'description').inputValue()).toBe('Paint the fence');
    const timeline = page.getByRole('region', { name: 'Activity' });
    await expect.poll(() => timeline.textContent()).toContain('No activity yet.');

    // An edit saved in the form: ToDo tracks changes, so its Version shows with the field's label.
    await field(page, 'priority').selectOption('High');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const items = timeline.locator('.timeline-feed > li');
    await expect.poll(() => items.first().textContent()).toMatch(/^ada Tester changed Priority from Low to High/);
    expect(await items.first().locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);

    // A comment through the box: typed markup stays text.
    await timeline.getByLabel('Add a comment').fill('Bring the <b>green</b> paint');
    await timeline.getByRole('button', { name: 'Comment', exact: true }).click();
    await expect.poll(() => items.first().textContent()).toContain('ada Tester commented');
    expect(await items.first().locator('.timeline-comment').textContent()).toBe('Bring the <b>green</b> paint');
    expect(await timeline.getByLabel('Add a comment').inputValue()).toBe('');
    const comments = await tenant.call('GET', '/api/resource/Comment', {
      query: { filters: JSON.stringify([['reference_name', '=', name]]), fields: JSON.stringify(['comment_type', 'comment_email', 'content']) },
    });
    expect(comments.body.data).toEqual([
      { comment_type: 'Comment', comment_email: 'ada@example.com', content: expect.stringContaining('Bring the &lt;b&gt;green') },
    ]);

    // Someone's comment with markup of its own: formatting kept, anything active gone.
    await tenant.call('POST', '/api/method/frappe.desk.form.utils.add_comment', {
      json: {
        reference_doctype: 'ToDo',
        reference_name: name,
        content: '<p>Use <strong>two</strong> coats <img src="x" onerror="window.hacked=1"></p><script>window.hacked=1</script>',
      },
    });
    // The API's comment reaches the open form through docinfo_update (realtime).
    await expect.poll(() => items.first().locator('.timeline-comment strong').textContent(), { timeout: 20_000 }).toBe('two');
    expect(await items.first().locator('.timeline-comment img, .timeline-comment script').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { hacked?: number }).hacked)).toBeUndefined();

    // Assign to bob with the User search.
    const assignees = page.getByRole('region', { name: 'Assigned to' });
    await expect.poll(() => assignees.textContent()).toContain('Nobody yet');
    await assignees.getByRole('button', { name: 'Assign to' }).click();
    const dialog = page.getByRole('dialog', { name: 'Assign this document' });
    const searched = page.waitForResponse((r) => r.url().includes('search_link') && r.url().includes('txt=bob'));
    await dialog.getByRole('combobox', { name: 'User' }).fill('bob');
    await searched;
    await expect.poll(() => page.getByRole('option', { name: /bob@example\.com/ }).count()).toBe(1);
    await page.getByRole('option', { name: /bob@example\.com/ }).click();
    await dialog.getByRole('button', { name: 'Assign', exact: true }).click();
    await expect.poll(() => dialog.count()).toBe(0);
    await expect.poll(() => assignees.getByRole('listitem').locator('span[title]').allTextContents()).toEqual(['bob Tester']);
    const open = await tenant.call('GET', '/api/resource/ToDo', {
      query: { filters: JSON.stringify([['reference_name', '=', name]]), fields: JSON.stringify(['allocated_to', 'status', 'reference_type']) },
    });
    expect(open.body.data).toEqual([{ allocated_to: 'bob@example.com', status: 'Open', reference_type: 'ToDo' }]);
    await expect.poll(() => items.first().textContent()).toContain('assigned bob Tester');

    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'form-timeline');
    // Newest first, all the way down.
    const times = await items.locator(':scope > time, .timeline-by time').evaluateAll((els) => els.map((e) => e.getAttribute('datetime') ?? ''));
    expect(times.length).toBeGreaterThanOrEqual(4);
    expect([...times].sort().reverse()).toEqual(times);

    await assignees.getByRole('button', { name: 'Remove assignment to bob Tester' }).click();
    await expect.poll(() => assignees.textContent()).toContain('Nobody yet');
    const after = await tenant.call('GET', '/api/resource/ToDo', {
      query: { filters: JSON.stringify([['reference_name', '=', name]]), fields: JSON.stringify(['allocated_to', 'status']) },
    });
    expect(after.body.data).toEqual([{ allocated_to: 'bob@example.com', status: 'Cancelled' }]);
    await page.context().close();
  });

  it('lists attachments and uploads one against the document', async () => {
    const { page, tenant, origin } = await signedIn(f, { viewport: { width: 360, height: 740 } });
    const created = await tenant.call('POST', '/api/resource/ToDo', { json: { description: 'File the receipts' } });
    const name = created.body.data.name as string;
    await page.goto(`${origin}/app/todo/${name}`);
    const timeline = page.getByRole('region', { name: 'Activity' });
    await expect.poll(() => timeline.textContent()).toContain('No files attached.');
    await timeline.getByLabel('Attach a file').setInputFiles({ name: 'receipt.txt', mimeType: 'text/plain', buffer: Buffer.from('12.50 EUR') });
    const link = timeline.getByRole('link', { name: 'receipt.txt' });
    await expect.poll(() => link.count()).toBe(1);
    const href = await link.getAttribute('href');
    // Private (as Frappe's uploader makes attachments), and served to this reader.
    expect(href).toMatch(/^\/private\/files\/receipt/);
    expect(await timeline.getByRole('listitem').filter({ hasText: 'receipt.txt' }).textContent()).toContain('private');
    const served = await page.evaluate(async (url) => (await fetch(url)).text(), href ?? '');
    expect(served).toBe('12.50 EUR');
    const files = await tenant.call('GET', '/api/resource/File', {
      query: { filters: JSON.stringify([['attached_to_name', '=', name]]), fields: JSON.stringify(['attached_to_doctype', 'file_url']) },
    });
    expect(files.body.data).toEqual([{ attached_to_doctype: 'ToDo', file_url: href }]);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'form-attachments');
    await page.context().close();
  });
});
