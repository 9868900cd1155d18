import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { field, screenshots, seriousViolations, signedIn, startDesk, stopDesk, type DeskFixture } from './support';

/** The search box in the desk's bar: Ctrl+K or `/`, DocTypes and documents, opened with the keyboard. */

vi.setConfig({ testTimeout: 90_000 });

let f: DeskFixture;
beforeAll(async () => {
  f = await startDesk();
});
afterAll(() => stopDesk(f));

const box = (page: Page) => page.getByRole('combobox', { name: 'Search DocTypes and documents' });

describe('the search box', () => {
  it('opens with Ctrl+K, finds a document by its title and opens its form with Enter', async () => {
    const { page, tenant, origin } = await signedIn(f);
    const created = await tenant.call('POST', '/api/resource/ToDo', { json: { description: 'Order the orchid seeds' } });
    const name = created.body.data.name as string;
    await page.goto(`${origin}/app`);
    await page.getByRole('heading', { level: 1 }).waitFor();

    await page.keyboard.press('Control+k');
    await expect.poll(() => box(page).evaluate((e) => e === document.activeElement)).toBe(true);
    const searched = page.waitForResponse((r) => r.url().includes('frappe.utils.global_search.search') && r.url().includes('orchid'));
    await page.keyboard.type('orchid');
    await searched;
    const option = page.getByRole('option', { name: /Order the orchid seeds/ });
    await expect.poll(() => option.count()).toBe(1);
    await expect.poll(() => page.getByRole('group', { name: 'Documents' }).count()).toBe(1);
    // While its list is open React Aria hides the rest of the page from assistive technology
    // (aria-hidden) without taking it out of the tab order, as a combobox popup should: that is
    // the one finding axe has then, and the page is checked whole once the list is closed.
    expect((await seriousViolations(page)).filter((v) => !v.startsWith('aria-hidden-focus'))).toEqual([]);
    await screenshots(page, 'search');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('listbox').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Backspace');
    await expect.poll(() => option.count()).toBe(1);

    await box(page).focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${origin}/app/todo/${name}`);
    await expect.poll(() => field(page, 'description').inputValue()).toBe('Order the orchid seeds');
    expect(await box(page).inputValue()).toBe('');
    await page.context().close();
  });

  it('opens with `/` (not while typing in a field), finds a DocType and opens its list; Escape closes it', async () => {
    const { page, origin } = await signedIn(f, { viewport: { width: 360, height: 740 } });
    await page.goto(`${origin}/app`);
    await page.getByRole('heading', { level: 1 }).waitFor();

    await page.keyboard.press('/');
    await expect.poll(() => box(page).evaluate((e) => e === document.activeElement)).toBe(true);
    await page.keyboard.type('todo');
    const doctype = page.getByRole('group', { name: 'DocTypes' }).getByRole('option', { name: /^ToDo/ });
    await expect.poll(() => doctype.count()).toBe(1);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('listbox').count()).toBe(0);

    await page.keyboard.type('x');
    await expect.poll(() => page.getByRole('listbox').count()).toBe(1);
    await page.keyboard.press('Backspace');
    await expect.poll(() => doctype.count()).toBe(1);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${origin}/app/todo`);

    // `/` typed in a form field is text, not the shortcut
    await page.goto(`${origin}/app/todo/new`);
    await field(page, 'description').click();
    await page.keyboard.type('a/b');
    expect(await field(page, 'description').inputValue()).toBe('a/b');
    expect(await box(page).evaluate((e) => e === document.activeElement)).toBe(false);
    await page.context().close();
  });
});
