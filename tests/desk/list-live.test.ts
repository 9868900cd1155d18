import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { insert, listRows, otherUser, rowBox, selectionBar, shownNames } from './list-support';
import { screenshots, signedIn, startDesk, stopDesk, type DeskFixture } from './support';

/**
 * A list follows changes (realtime `list_update` for its DocType): another user's new ToDo appears
 * without a reload, and the user's filter, selection and scroll position stay as they were.
 */

vi.setConfig({ testTimeout: 150_000 });

let f: DeskFixture;
beforeAll(async () => {
  f = await startDesk();
});
afterAll(() => stopDesk(f));

describe('a live list', () => {
  it("shows another user's new ToDo without a reload, keeping the filter, the selection and the scroll", async () => {
    const { page, tenant, origin } = await signedIn(f);
    const bob = await otherUser(tenant, 'bob@example.com');
    const names: string[] = [];
    for (let i = 1; i <= 30; i++) names.push(await insert(tenant, 'ToDo', { description: `High ${i}`, priority: 'High' }));
    await insert(tenant, 'ToDo', { description: 'Low one', priority: 'Low' });

    await page.goto(`${origin}/app/todo?filters=${encodeURIComponent('[["priority","=","High"]]')}&page_length=100`);
    await expect.poll(() => listRows(page).count()).toBe(30);
    const oldest = names[0] as string; // at the bottom: newest first
    await rowBox(page, oldest).check();
    await rowBox(page, oldest).scrollIntoViewIfNeeded();
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    const scrolled = await page.evaluate(() => window.scrollY);
    expect(scrolled).toBeGreaterThan(0);

    // Bob adds one that matches the filter and one that does not.
    const added = await insert(tenant, 'ToDo', { description: 'Added by Bob', priority: 'High' }, bob);
    const other = await insert(tenant, 'ToDo', { description: 'Low by Bob', priority: 'Low' }, bob);
    await expect.poll(() => shownNames(page), { timeout: 30_000 }).toContain(added);
    expect(await shownNames(page)).not.toContain(other);
    expect(await listRows(page).count()).toBe(31);
    // Still filtered, still selected, not thrown back to the top.
    expect(JSON.parse(new URL(page.url()).searchParams.get('filters') ?? '[]')).toEqual([['priority', '=', 'High']]);
    expect(await rowBox(page, oldest).isChecked()).toBe(true);
    expect(await selectionBar(page).getByRole('status').textContent()).toBe('1 selected');
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThanOrEqual(scrolled);

    // A selected record someone else deletes is no longer selected once the list has refreshed.
    await rowBox(page, names[1] as string).check();
    await expect.poll(() => selectionBar(page).getByRole('status').textContent()).toBe('2 selected');
    const gone = await tenant.call('DELETE', `/api/resource/ToDo/${names[1] as string}`, { auth: bob });
    expect([200, 202], gone.text).toContain(gone.status);
    await expect.poll(() => shownNames(page), { timeout: 30_000 }).not.toContain(names[1]);
    await expect.poll(() => selectionBar(page).getByRole('status').textContent()).toBe('1 selected');
    await screenshots(page, 'list-live');
    await page.context().close();
  });
});
