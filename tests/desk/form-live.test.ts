import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUser } from '../oauth/support';
import type { TestTenant } from '../support/server';
import { until } from '../support/until';
import { field, screenshots, seriousViolations, signedIn, startDesk, stopDesk, type DeskFixture } from './support';

/** A form open while someone else saves the same document: told through realtime (doc_update) before any save. */

// A browser test clicks through several pages: on a busy 2-core machine one can take longer than the suite's 30 s.
vi.setConfig({ testTimeout: 120_000 });

let f: DeskFixture;
beforeAll(async () => {
  f = await startDesk();
});
afterAll(() => stopDesk(f));

const BOB = 'bob@example.com';

/** Bob, a second System Manager, with API keys of his own. */
async function bob(tenant: TestTenant): Promise<string> {
  await createUser(tenant, BOB);
  const keys = await tenant.call('POST', '/api/method/frappe.core.doctype.user.user.generate_keys', { json: { user: BOB } });
  const key = (await tenant.call('GET', `/api/resource/User/${BOB}`)).body.data.api_key as string;
  return `token ${key}:${keys.body.message.api_secret as string}`;
}

describe('a form others change', () => {
  it('says who changed the open document; Reload shows their version; a save of the old one is still refused', async () => {
    const { page, tenant, origin } = await signedIn(f);
    const bobsAuth = await bob(tenant);
    const created = await tenant.call('POST', '/api/resource/ToDo', { json: { description: 'Plan the trip', priority: 'Low' } });
    const name = created.body.data.name as string;
    const saveAsBob = async (json: Record<string, unknown>) => {
      const res = await tenant.call('PUT', `/api/resource/ToDo/${name}`, { json, auth: bobsAuth });
      expect(res.status, res.text).toBe(200);
    };
    await page.goto(`${origin}/app/todo/${name}`);
    await expect.poll(() => field(page, 'description').inputValue()).toBe('Plan the trip');
    // The page names its site, the namespace of the desk's socket (/<site>).
    expect(await page.locator('meta[name="frappe-site-name"]').getAttribute('content')).toBe(tenant.name);
    const notice = page.getByRole('alert').filter({ hasText: 'changed this document' });
    expect(await notice.count()).toBe(0);

    // Ada starts an edit; Bob saves meanwhile. The form's socket joins the document's room a moment
    // after it loads: Bob saves again until one of his saves is heard.
    await field(page, 'priority').selectOption('Medium');
    let saves = 0;
    const heard = await until(
      async () => {
        saves++;
        await saveAsBob({ description: `Plan the trip to Lisbon (${saves})` });
        return until(
          () => notice.count(),
          (n) => n > 0,
          3000,
        );
      },
      (n) => n > 0,
      60_000,
    );
    expect(heard).toBe(1);
    // Named as the timeline names people (docinfo's user_info), once it is asked for again.
    await expect.poll(() => notice.textContent()).toContain('bob Tester changed this document');
    expect(await notice.textContent()).toContain('your unsaved changes here will be lost');
    expect(await field(page, 'priority').inputValue()).toBe('Medium'); // nothing was overwritten behind Ada's back
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'form-live');

    await notice.getByRole('button', { name: 'Reload' }).click();
    await expect.poll(() => field(page, 'description').inputValue()).toBe(`Plan the trip to Lisbon (${saves})`);
    expect(await field(page, 'priority').inputValue()).toBe('Low');
    await expect.poll(() => notice.count()).toBe(0);

    // Ada's own save is not "someone else's".
    await field(page, 'priority').selectOption('High');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(async () => (await tenant.call('GET', `/api/resource/ToDo/${name}`)).body.data.priority).toBe('High');
    await expect.poll(() => page.locator('.live').textContent()).toContain('Saved');
    // Its doc_update arrives too (a negative: given a few seconds to show up wrongly).
    expect(
      await until(
        () => notice.count(),
        (n) => n > 0,
        3000,
      ),
    ).toBe(0);

    // Ignoring the notice and saving the old version: the server refuses it (TimestampMismatchError), shown clearly.
    await saveAsBob({ priority: 'Low' });
    await expect.poll(() => notice.count(), { timeout: 20_000 }).toBe(1);
    await field(page, 'description').fill('Mine wins?');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const stale = page.getByRole('alert').filter({ hasText: 'changed by someone else' });
    await expect.poll(() => stale.count()).toBe(1);
    expect((await tenant.call('GET', `/api/resource/ToDo/${name}`)).body.data.description).toBe(`Plan the trip to Lisbon (${saves})`);
    await page.context().close();
  });
});
