import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUser, originOf } from '../oauth/support';
import { PASSWORD, screenshots, seriousViolations, signedIn, startDesk, stopDesk, watchContentSecurity, type DeskFixture } from './support';

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
    await watchContentSecurity(page);
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

  it('Forgot your password? emails a link to the site’s own address; its page sets a new password once, and it signs in', async () => {
    const tenant = await f.server.tenant('reset');
    await createUser(tenant, 'cy@example.com');
    const page = await f.browser.newPage();
    await watchContentSecurity(page);
    const origin = originOf(f.server, tenant);
    await page.goto(`${origin}/login`);
    await page.getByRole('button', { name: 'Forgot your password?' }).click();
    await page.getByLabel('Email').fill('cy@example.com');
    await page.getByRole('button', { name: 'Send the link' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('cy@example.com');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'forgot-password');

    const { rows } = await f.server.db.query<{ message: string }>(`SELECT "message" FROM "${tenant.schema}"."tabEmail Queue"`);
    const link = /open (\S+\/update-password\?key=[0-9a-f]{64})/.exec(rows[0]?.message ?? '')?.[1] ?? '';
    // The site's own address (the test server's port is its own: the page is opened on it).
    expect(link.startsWith(`http://${tenant.name}.localhost/update-password?key=`), link).toBe(true);
    await page.goto(`${origin}${new URL(link).pathname}${new URL(link).search}`);
    // The key leaves the address bar once read.
    await expect.poll(() => new URL(page.url()).search).toBe('');
    await page.getByLabel('New password', { exact: true }).fill('another pass 42!');
    await page.getByLabel('New password, again').fill('another pass 41!');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('differ');
    await page.getByLabel('New password, again').fill('another pass 42!');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Your password is set');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'update-password');

    await page.goto(`${origin}${new URL(link).pathname}${new URL(link).search}`);
    await page.getByLabel('New password', { exact: true }).fill('a third one 7!');
    await page.getByLabel('New password, again').fill('a third one 7!');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/used before or is invalid|not changed/);

    await page.goto(`${origin}/login`);
    await page.getByLabel('Email or user name').fill('cy@example.com');
    await page.getByLabel('Password', { exact: true }).fill('another pass 42!');
    await Promise.all([page.waitForURL(`${origin}/app`), page.getByRole('button', { name: 'Sign in' }).click()]);
    await page.close();
  });
});
