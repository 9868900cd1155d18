import { afterAll, beforeAll, describe } from 'vitest';
import { adminSdk } from '../support/frappe-js-sdk';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { everyMethod, prepareTenant } from './js-sdk-every-method';

/** Every frappe-js-sdk method with token auth (`Authorization: token key:secret`), from Node. */

let server: TestServer;
let t: TestTenant;
beforeAll(async () => {
  server = await startTestServer();
  t = await server.tenant('sdktok');
  await prepareTenant(t);
});
afterAll(() => server.close());

describe('frappe-js-sdk with token auth', () => {
  everyMethod(
    () => adminSdk(server, t),
    () => 'Administrator',
    (name, text) => new File([text], name, { type: 'text/plain' }),
  );
});
