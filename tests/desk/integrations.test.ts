import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { parseCidrList } from '@quire/webhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hostFetch } from '../support/host-fetch';
import { contentSecurityRefusals, field, screenshots, seriousViolations, signedIn, startDesk, stopDesk, type DeskFixture } from './support';

/**
 * The screens the spec names: User -> API Access ("Generate Keys"), webhooks managed in the desk
 * (a delivery seen in the Webhook Request Log, and replayed from it), and an OAuth Client whose
 * secret is shown once. Each secret shown is used against the real API to prove it is the one.
 */

vi.setConfig({ testTimeout: 90_000 });

let f: DeskFixture;
beforeAll(async () => {
  f = await startDesk({ auth: true, webhooks: { allowNets: parseCidrList('127.0.0.1/32') } });
});
afterAll(() => stopDesk(f));

/** The values a SecretDialog shows, by their labels. */
async function shownSecrets(page: Page): Promise<Record<string, string>> {
  const dialog = page.getByRole('alertdialog');
  await expect.poll(() => dialog.count()).toBe(1);
  const codes = dialog.locator('code[data-secret]');
  const out: Record<string, string> = {};
  for (let i = 0; i < (await codes.count()); i++) {
    const code = codes.nth(i);
    out[(await code.getAttribute('data-secret')) ?? ''] = (await code.textContent()) ?? '';
  }
  return out;
}

/** Picks a Link field's value from its search results with the keyboard. */
async function chooseLink(page: Page, fieldname: string, value: string): Promise<void> {
  await field(page, fieldname).fill(value);
  const option = page.getByRole('option', { name: new RegExp(value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) });
  await expect.poll(() => option.count()).toBeGreaterThan(0);
  await option.first().click();
  expect(await field(page, fieldname).inputValue()).toBe(value);
}

describe('User -> API Access', () => {
  it('Generate Keys shows the secret once, with the ready header, which then authenticates as the user', async () => {
    const { page, origin, email } = await signedIn(f);
    await page.goto(`${origin}/app/user/${encodeURIComponent(email)}`);
    await expect.poll(() => field(page, 'email').inputValue()).toBe(email);
    await page.getByRole('button', { name: 'Generate Keys' }).click();
    const shown = await shownSecrets(page);
    expect(shown['API Key']).toMatch(/^[0-9a-f]{15}$/);
    expect(shown['API Secret']).toMatch(/^[0-9a-f]{48}$/);
    expect(shown['Authorization header']).toBe(`Authorization: token ${shown['API Key']}:${shown['API Secret']}`);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'user-api-keys');

    // Used as curl would: the header, from outside the browser.
    const header = shown['Authorization header']!.slice('Authorization: '.length);
    const who = await hostFetch(`${origin}/api/method/frappe.auth.get_logged_user`, { headers: { Authorization: header } });
    expect(await who.json()).toEqual({ message: email });

    await page.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => page.getByRole('alertdialog').count()).toBe(0);
    // Never shown again: the form has the key, and no trace of the secret.
    await page.reload();
    await expect.poll(() => field(page, 'api_key').inputValue()).toBe(shown['API Key']);
    expect(await page.content()).not.toContain(shown['API Secret']);
    await page.context().close();
  });
});

describe('webhooks in the desk', () => {
  it('a webhook made in its form delivers to a local receiver; the Request Log shows the delivery and Replay sends it again', async () => {
    const received: Array<{ id: string; body: string }> = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ id: String(req.headers['webhook-id'] ?? ''), body });
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    try {
      const { page, origin, tenant } = await signedIn(f);
      await page.goto(`${origin}/app/webhook/new`);
      await field(page, '__newname').fill('todo-created');
      await chooseLink(page, 'webhook_doctype', 'ToDo');
      await field(page, 'webhook_docevent').selectOption('after_insert');
      await field(page, 'request_url').fill(`http://127.0.0.1:${port}/hook`);
      await field(page, 'request_structure').selectOption('JSON');
      await field(page, 'webhook_json').fill('{"what": "{{ doc.description }}"}');
      expect(await seriousViolations(page)).toEqual([]);
      await screenshots(page, 'webhook-new');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.waitForURL(`${origin}/app/webhook/todo-created`);

      await tenant.call('POST', '/api/resource/ToDo', { json: { description: 'Ring the bell' } });
      await expect.poll(() => received.length, { timeout: 15_000 }).toBe(1);
      expect(JSON.parse(received[0]!.body)).toEqual({ what: 'Ring the bell' });

      // The form links to its log, filtered to this webhook; the delivery is there once recorded.
      await page.getByRole('link', { name: 'Request Log' }).click();
      await page.waitForURL(/\/app\/webhook-request-log\?/);
      const rows = page.getByRole('table').getByRole('row');
      await expect
        .poll(
          async () => {
            await page.reload();
            await page.getByRole('table').waitFor();
            return rows.count();
          },
          { timeout: 15_000 },
        )
        .toBe(2);
      expect(await seriousViolations(page)).toEqual([]);
      await screenshots(page, 'webhook-request-log-list');
      await rows.nth(1).getByRole('link').first().click();
      await page.waitForURL(/\/app\/webhook-request-log\/[^/?]+$/);
      await expect.poll(() => field(page, 'outcome').inputValue()).toBe('Delivered');
      expect(await field(page, 'status_code').inputValue()).toBe('200');
      expect(await field(page, 'event_id').inputValue()).toBe(received[0]!.id);
      expect(await field(page, 'response').inputValue()).toBe('{"ok":true}');
      expect(await seriousViolations(page)).toEqual([]);
      await screenshots(page, 'webhook-request-log-form');

      await page.getByRole('button', { name: 'Replay' }).click();
      await expect.poll(() => page.locator('.live').textContent()).toContain('sent again');
      await expect.poll(() => received.length, { timeout: 15_000 }).toBe(2);
      expect(received[1]!.id).toBe(received[0]!.id); // the same event, so a receiver can recognise it
      await page.context().close();
    } finally {
      receiver.close();
    }
  });
});

describe('OAuth Client', () => {
  it('shows the secret once after the client is created; Reset Secret shows a new one and the old stops working', async () => {
    const { page, origin, email } = await signedIn(f);
    await page.goto(`${origin}/app/oauth-client/new`);
    await field(page, 'app_name').fill('Reporting robot');
    await field(page, 'client_type').selectOption('Confidential');
    await chooseLink(page, 'user', email);
    await field(page, 'scopes').fill('all');
    await field(page, 'grant_type').selectOption('Client Credentials');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(/\/app\/oauth-client\/(?!new)[^/]+$/);
    const shown = await shownSecrets(page);
    const clientId = shown['Client ID']!;
    const secret = shown['Client Secret']!;
    expect(secret.length).toBeGreaterThanOrEqual(20);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshots(page, 'oauth-client-secret');

    const token = (s: string) =>
      hostFetch(`${origin}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${clientId}:${s}`).toString('base64')}` },
        body: 'grant_type=client_credentials',
      });
    expect((await token(secret)).status).toBe(200);

    await page.getByRole('button', { name: 'Done' }).click();
    await page.reload();
    await expect.poll(() => field(page, 'app_name').inputValue()).toBe('Reporting robot');
    expect(await page.getByRole('alertdialog').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    await page.getByRole('button', { name: 'Reset Secret' }).click();
    const fresh = (await shownSecrets(page))['Client Secret']!;
    expect(fresh).not.toBe(secret);
    expect((await token(fresh)).status).toBe(200);
    expect(((await (await token(secret)).json()) as { error?: string }).error).toBe('invalid_client');
    await page.context().close();
  });
});

describe('the API reference', () => {
  it('/api/docs renders the site’s OpenAPI description with Redoc, loading nothing from elsewhere', async () => {
    const { page, origin } = await signedIn(f);
    // Every request the page starts, answered or refused: Redoc's side menu once asked Redocly's CDN for its logo.
    const isForeign = (url: string) => !url.startsWith(`${origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:');
    const foreign: string[] = [];
    page.on('request', (r) => {
      if (isForeign(r.url())) foreign.push(r.url());
    });
    const described = page.waitForResponse((r) => r.url() === `${origin}/api/openapi.json` && r.status() === 200);
    await page.goto(`${origin}/api/docs`);
    await described;
    await expect.poll(() => page.getByText('Quire API', { exact: false }).count(), { timeout: 30_000 }).toBeGreaterThan(0);
    await expect.poll(() => page.locator('[data-section-id^="tag/ToDo"]').count(), { timeout: 30_000 }).toBeGreaterThan(0);
    // The attribution, where the logo was, is rendered (its image mounts after it) and links out but loads nothing.
    const attribution = page.getByRole('link', { name: /API docs by Redocly/ });
    await expect.poll(() => attribution.count()).toBe(1);
    expect(await attribution.locator('img').count()).toBe(0);
    // The page's own resources are done with, and a refusal would have been reported by now.
    await page.waitForLoadState('networkidle');
    expect(contentSecurityRefusals(page)).toEqual([]);
    expect(foreign).toEqual([]);
    await page.screenshot({ path: 'test-results/desk/api-docs-desktop.png' });
    await page.context().close();
  });
});
