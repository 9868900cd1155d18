import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { field, screenshots, seriousViolations, signedIn, startDesk, stopDesk, type DeskFixture } from './support';

/** A form's habits: Ctrl+S, asking before leaving unsaved changes, the title, the badge, breadcrumbs. */

// A browser test clicks through several pages: on a busy 2-core machine one can take longer than the suite's 30 s.
vi.setConfig({ testTimeout: 120_000 });

let f: DeskFixture;
beforeAll(async () => {
  f = await startDesk();
});
afterAll(() => stopDesk(f));

describe('form habits', () => {
  it('Ctrl+S saves; the heading and the tab show the title_field; no Draft badge on ToDo', async () => {
    const { page, tenant, origin } = await signedIn(f);
    const created = await tenant.call('POST', '/api/resource/ToDo', { json: { description: 'Call the plumber', priority: 'Low' } });
    const name = created.body.data.name as string;
    await page.goto(`${origin}/app/todo/${name}`);
    await expect.poll(() => field(page, 'description').inputValue()).toBe('Call the plumber');

    // ToDo's title_field is description: the heading and the browser's title say it, not the random name.
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Call the plumber');
    expect(await page.title()).toBe('Call the plumber · Quire');
    // ToDo is not submittable: no Draft badge (nor Submitted, Cancelled).
    expect(await page.locator('.form-head .status').count()).toBe(0);
    expect(await page.getByText('Draft', { exact: true }).count()).toBe(0);

    await field(page, 'priority').selectOption('High');
    // Unsaved: the form says so.
    await expect.poll(() => page.locator('.form-head .status').textContent()).toBe('Not saved');
    // The browser's "save page" is not what happens: the page stays, the document is saved.
    expect(await page.getByRole('button', { name: 'Save', exact: true }).getAttribute('aria-keyshortcuts')).toBe('Control+S Meta+S');
    await field(page, 'priority').focus();
    await page.keyboard.press('Control+s');
    await expect.poll(async () => (await tenant.call('GET', `/api/resource/ToDo/${name}`)).body.data.priority).toBe('High');
    await expect.poll(() => page.locator('.live').first().textContent()).toContain('Saved');
    expect(await page.locator('.form-head .status').count()).toBe(0);

    // Cmd+S too (macOS).
    await field(page, 'description').fill('Call the plumber today');
    await page.keyboard.press('Meta+s');
    await expect.poll(async () => (await tenant.call('GET', `/api/resource/ToDo/${name}`)).body.data.description).toBe('Call the plumber today');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Call the plumber today');
    await page.context().close();
  });

  it('leaving a form with unsaved changes asks in the page: Cancel keeps the edits, Leave goes', async () => {
    const { page, tenant, origin } = await signedIn(f);
    const created = await tenant.call('POST', '/api/resource/ToDo', { json: { description: 'Half done', priority: 'Low' } });
    const name = created.body.data.name as string;
    const crumbs = page.getByRole('navigation', { name: 'Breadcrumbs' });
    const dialog = page.getByRole('alertdialog', { name: 'Leave this page?' });
    // A new document nobody typed into leaves freely; one with something typed asks.
    await page.goto(`${origin}/app/todo/new`);
    await crumbs.getByRole('link', { name: 'ToDo' }).click();
    await page.waitForURL(`${origin}/app/todo`);
    await page.goto(`${origin}/app/todo/new`);
    await field(page, 'description').fill('Something');
    await crumbs.getByRole('link', { name: 'ToDo' }).click();
    await expect.poll(() => dialog.count()).toBe(1);
    await dialog.getByRole('button', { name: 'Leave' }).click();
    await page.waitForURL(`${origin}/app/todo`);

    // Nothing changed: the breadcrumb's link leaves without a question.
    await page.goto(`${origin}/app/todo/${name}`);
    await expect.poll(() => field(page, 'description').inputValue()).toBe('Half done');
    await crumbs.getByRole('link', { name: 'ToDo' }).click();
    await page.waitForURL(`${origin}/app/todo`);
    await page.goBack();
    await expect.poll(() => field(page, 'description').inputValue()).toBe('Half done');

    await field(page, 'description').fill('Half done, and then some');
    await crumbs.getByRole('link', { name: 'ToDo' }).click();
    await expect.poll(() => dialog.count()).toBe(1);
    expect(await dialog.textContent()).toContain('not saved');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'form-leave-dirty');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => dialog.count()).toBe(0);
    expect(new URL(page.url()).pathname).toBe(`/app/todo/${name}`);
    expect(await field(page, 'description').inputValue()).toBe('Half done, and then some');

    // Any link in the desk asks too; Leave goes, and the edit is not saved.
    await page.getByRole('link', { name: 'Quire' }).click();
    await expect.poll(() => dialog.count()).toBe(1);
    await dialog.getByRole('button', { name: 'Leave' }).click();
    await page.waitForURL(`${origin}/app`);
    expect((await tenant.call('GET', `/api/resource/ToDo/${name}`)).body.data.description).toBe('Half done');

    // Closing or reloading the tab with unsaved changes: the browser's own question (a beforeunload
    // the page cancels), only while something is unsaved.
    const wouldAsk = () =>
      page.evaluate(() => {
        const e = new Event('beforeunload', { cancelable: true });
        window.dispatchEvent(e);
        return e.defaultPrevented;
      });
    await page.goto(`${origin}/app/todo/${name}`);
    await expect.poll(() => field(page, 'description').inputValue()).toBe('Half done');
    expect(await wouldAsk()).toBe(false);
    await field(page, 'description').fill('Changed again');
    expect(await wouldAsk()).toBe(true);
    await page.context().close();
  });

  it('breadcrumbs lead from a form to its list and its module, and show on the list', async () => {
    const { page, tenant, origin } = await signedIn(f, { viewport: { width: 360, height: 740 } });
    const created = await tenant.call('POST', '/api/resource/ToDo', { json: { description: 'Find the crumbs' } });
    const name = created.body.data.name as string;
    await page.goto(`${origin}/app/todo/${name}`);
    const crumbs = page.getByRole('navigation', { name: 'Breadcrumbs' });
    await expect.poll(() => crumbs.getByRole('listitem').allTextContents()).toEqual(['Desk', 'ToDo', 'Find the crumbs']);
    expect(await crumbs.locator('[aria-current="page"]').textContent()).toBe('Find the crumbs');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'form-breadcrumbs');

    await crumbs.getByRole('link', { name: 'ToDo' }).click();
    await page.waitForURL(`${origin}/app/todo`);
    // The list has them too (the shell draws them on a list's route): module → DocType (current).
    await expect.poll(() => crumbs.getByRole('listitem').allTextContents()).toEqual(['Desk', 'ToDo']);
    expect(await crumbs.locator('[aria-current="page"]').textContent()).toBe('ToDo');
    expect(await crumbs.count()).toBe(1);

    await crumbs.getByRole('link', { name: 'Desk' }).click();
    await page.waitForURL(`${origin}/app#module-Desk`);
    await expect.poll(() => page.getByRole('heading', { name: 'Desk', level: 2 }).count()).toBe(1);
    expect(await crumbs.count()).toBe(0);
    await page.context().close();
  });
});
