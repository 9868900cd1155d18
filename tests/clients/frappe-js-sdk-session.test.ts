// @vitest-environment jsdom
import { FrappeApp } from 'frappe-js-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';
import { everyMethod, PASSWORD, prepareTenant } from './js-sdk-every-method';

/**
 * Every frappe-js-sdk method with a cookie session, in jsdom (its XMLHttpRequest keeps cookies, as
 * a browser does), on a page served from Quire's origin with a CSRF token in `window.csrf_token`.
 */

declare const jsdom: { reconfigure(options: { url: string }): void; window: { _origin: string } };

let server: TestServer;
let app: FrappeApp;

beforeAll(async () => {
  const name = `sdks${Math.random().toString(36).slice(2, 8)}`;
  server = await startTestServer({ defaultTenant: name });
  const t = await server.tenant('sdks', name);
  await prepareTenant(t);
  jsdom.reconfigure({ url: `${server.url}/app` });
  jsdom.window._origin = server.url; // jsdom's XHR checks the window's own origin
  app = new FrappeApp('');
  const login = await app.auth().loginWithUsernamePassword({ username: 'sdk@example.com', password: PASSWORD });
  expect(login).toEqual({ message: 'Logged In', home_page: '/app', full_name: 'Sdk' });
  // A desk page embeds the session's CSRF token; the SDK sends it on every request from then on.
  const token = await app.call().get<{ message: string }>('frappe.sessions.get_csrf_token');
  (window as unknown as { csrf_token: string }).csrf_token = token.message;
  app = new FrappeApp('');
});
afterAll(() => server.close());

describe('frappe-js-sdk with a cookie session', () => {
  everyMethod(
    () => app,
    () => 'sdk@example.com',
    (name, text) => new File([text], name, { type: 'text/plain' }),
  );

  it('auth.logout ends the session: the next call is refused', async () => {
    await app.auth().logout();
    await expect(app.auth().getLoggedInUser()).rejects.toMatchObject({ httpStatus: 403 });
  });
});
