import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUser, originOf } from '../oauth/support';
import { PASSWORD, screenshots, seriousViolations, signedIn, startDesk, stopDesk, type DeskFixture } from './support';

/** Signing in and out of the desk, and its home page, in a real Chromium. */

// A browser test clicks through several pages: on a busy 2-core machine one can take longer than the suite's 30 s.
vi.setConfig({ testTimeout: 90_000 });

let f: DeskFixture;
beforeAll(async () => {
  f = await startDesk();
});
afterAll(() => stopDesk(f));

describe('signing in', () => {
  it('a wrong password shows Frappe’s message; the login page has no serious axe violations', async () => {
    const tenant = await f.server.tenant('login');
    await createUser(tenant, 'bo@example.com');
    const page = await f.browser.newPage();
    const origin = originOf(f.server, tenant);
    await page.goto(`${origin}/`);
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'login');

    const usr = page.locator('input[name="usr"]');
    const pwd = page.locator('input[name="pwd"]');
    await usr.fill('bo@example.com');
    await pwd.fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Invalid login credentials');
    expect(new URL(page.url()).pathname).toBe('/login');
    await screenshots(page, 'login-failed');

    // Keyboard only: the user field has focus, Tab moves on, Enter signs in.
    await page.reload();
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('usr');
    await page.keyboard.type('bo@example.com');
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/app`), page.keyboard.press('Enter')]);
    await page.close();
  });

  it('home lists the DocTypes the user may read by module; / goes to /app; logging out goes back to /login', async () => {
    const { page, origin } = await signedIn(f);
    const desk = page.getByRole('region', { name: 'Desk' });
    await expect.poll(() => desk.getByRole('link', { name: 'ToDo' }).count()).toBe(1);
    await expect.poll(() => page.getByRole('region', { name: 'Core' }).getByRole('link', { name: 'User', exact: true }).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'home');

    await page.goto(`${origin}/`);
    expect(new URL(page.url()).pathname).toBe('/app');

    await page.getByRole('button', { name: /^Account:/ }).click();
    await Promise.all([page.waitForURL(`${origin}/login`), page.getByRole('menuitem', { name: 'Log out' }).click()]);
    await page.goto(`${origin}/app/todo`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.context().close();
  });
});
