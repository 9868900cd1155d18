import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { field, screenshots, seriousViolations, signedIn, startDesk, stopDesk, type DeskFixture } from './support';

/** A ToDo made, found, edited and saved stale through the desk, checked through the API. */

// A browser test clicks through several pages: on a busy 2-core machine one can take longer than the suite's 30 s.
vi.setConfig({ testTimeout: 90_000 });

let f: DeskFixture;
beforeAll(async () => {
  f = await startDesk();
});
afterAll(() => stopDesk(f));

describe('a ToDo through the desk', () => {
  it('is created at /app/todo/new, found in /app/todo (filtered) and through the API, edited and saved', async () => {
    const { page, tenant, origin } = await signedIn(f);
    await page.goto(`${origin}/app/todo/new`);
    await field(page, 'description').fill('Water the plants');
    await field(page, 'priority').selectOption('High');
    await field(page, 'date').fill('2026-03-01');
    // A Link field searches with search_link as one types, and is chosen with the keyboard.
    const searched = page.waitForResponse((r) => r.url().includes('search_link') && r.url().includes('txt=ada'));
    await field(page, 'allocated_to').fill('ada');
    await searched;
    const option = page.getByRole('option', { name: /ada@example\.com/ });
    await expect.poll(() => option.count()).toBe(1);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    expect(await field(page, 'allocated_to').inputValue()).toBe('ada@example.com');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'todo-new');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(/\/app\/todo\/(?!new)[^/]+$/);
    const name = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    await expect.poll(() => page.locator('.live').textContent()).toContain('Saved');

    const api = await tenant.call('GET', `/api/resource/ToDo/${name}`);
    expect(api.body.data).toMatchObject({
      description: 'Water the plants',
      priority: 'High',
      date: '2026-03-01',
      status: 'Open',
      allocated_to: 'ada@example.com',
    });
    // The desk's session was given a CSRF token: its writes carry it, a write without it is refused.
    const bare = await page.evaluate(async () => {
      const res = await fetch('/api/resource/ToDo', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"description": "forged"}' });
      return { status: res.status, body: (await res.json()) as unknown };
    });
    expect(bare).toMatchObject({ status: 400, body: { exc_type: 'CSRFTokenError' } });
    await tenant.call('POST', '/api/resource/ToDo', { json: { description: 'Another one', priority: 'Low' } });

    await page.goto(`${origin}/app/todo`);
    const rows = page.getByRole('table').getByRole('row');
    await expect.poll(() => rows.count()).toBe(3); // header + 2
    await expect.poll(() => page.getByRole('status').filter({ hasText: /of 2$/ }).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'todo-list');

    // Filter: priority = High leaves one row, kept in the URL.
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByLabel('Field of filter 1').selectOption('priority');
    await page.getByLabel('Value of filter 1').selectOption('High');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => rows.count()).toBe(2);
    expect(new URL(page.url()).searchParams.get('filters')).toBe('[["priority","=","High"]]');
    await page.reload();
    await expect.poll(() => rows.count()).toBe(2);

    await page.getByRole('link', { name }).click();
    await page.waitForURL(`${origin}/app/todo/${name}`);
    await expect.poll(() => field(page, 'description').inputValue()).toBe('Water the plants');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'todo-form');
    await field(page, 'status').selectOption('Closed');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(async () => (await tenant.call('GET', `/api/resource/ToDo/${name}`)).body.data.status).toBe('Closed');
    await page.context().close();
  });

  it('a stale save says the document changed and reloads it; a server refusal is shown beside the form', async () => {
    const { page, tenant, origin } = await signedIn(f);
    const created = await tenant.call('POST', '/api/resource/ToDo', { json: { description: 'Shared', priority: 'Low' } });
    const name = created.body.data.name as string;
    await page.goto(`${origin}/app/todo/${name}`);
    await expect.poll(() => field(page, 'description').inputValue()).toBe('Shared');

    // Someone else saves first.
    await tenant.call('PUT', `/api/resource/ToDo/${name}`, { json: { priority: 'High' } });
    await field(page, 'description').fill('Mine');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'changed by someone else' });
    await expect.poll(() => alert.count()).toBe(1);
    await screenshots(page, 'todo-stale');
    await alert.getByRole('button', { name: 'Reload' }).click();
    await expect.poll(() => field(page, 'priority').inputValue()).toBe('High');
    expect(await field(page, 'description').inputValue()).toBe('Shared');

    // A Link to a user that does not exist: the server's message, next to the form.
    await field(page, 'allocated_to').fill('nobody@example.com');
    await expect.poll(() => page.getByRole('listbox').count()).toBe(1);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('listbox').count()).toBe(0);
    expect(await field(page, 'allocated_to').inputValue()).toBe('nobody@example.com');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/nobody@example\.com/);
    await page.context().close();
  });

  it('a deep link to a form works on reload; an unknown DocType slug says so', async () => {
    const { page, tenant, origin } = await signedIn(f, { viewport: { width: 360, height: 740 } });
    const created = await tenant.call('POST', '/api/resource/ToDo', { json: { description: 'Deep', priority: 'Medium' } });
    const name = created.body.data.name as string;
    await page.goto(`${origin}/app/todo/${name}`);
    await expect.poll(() => field(page, 'description').inputValue()).toBe('Deep');
    await page.reload();
    await expect.poll(() => field(page, 'description').inputValue()).toBe('Deep');
    expect(await page.locator('label', { hasText: 'Description' }).count()).toBeGreaterThan(0);

    await page.goto(`${origin}/app/no-such-doctype`);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('no-such-doctype');
    await page.context().close();
  });
});
