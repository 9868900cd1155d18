// @vitest-environment jsdom
import { act, createElement, type ReactNode } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import {
  FrappeProvider,
  useFrappeAuth,
  useFrappeCreateDoc,
  useFrappeDeleteDoc,
  useFrappeGetCall,
  useFrappeGetDoc,
  useFrappeGetDocCount,
  useFrappeGetDocList,
  useFrappePostCall,
  useFrappeUpdateDoc,
} from 'frappe-react-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { waitFor } from './react-act';

/**
 * The real frappe-react-sdk, rendered with react-dom in jsdom, talking to a running Quire over
 * jsdom's XMLHttpRequest (real HTTP, jsdom's cookie jar): the page is served from Quire's origin,
 * as a Frappe desk app is, so the SDK sends `X-Frappe-Site-Name: <hostname>` and the tenant is the
 * server's DEFAULT_TENANT. Auth hooks use a cookie session; data hooks use token auth.
 */

declare const jsdom: { reconfigure(options: { url: string }): void; window: { _origin: string } };
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let server: TestServer;
let t: TestTenant;
const PASSWORD = 'react rocks 123';

beforeAll(async () => {
  const name = `react${Math.random().toString(36).slice(2, 8)}`;
  server = await startTestServer({ defaultTenant: name });
  t = await server.tenant('react', name);
  // The page is served by Quire (as a desk app is): jsdom's reconfigure moves the document, and
  // the window's own origin (which jsdom's XHR checks for CORS) is moved with it.
  jsdom.reconfigure({ url: `${server.url}/app` });
  jsdom.window._origin = server.url;
  const res = await t.call('POST', '/api/resource/User', {
    json: { email: 'ada@example.com', first_name: 'Ada', new_password: PASSWORD, roles: [{ role: 'System Manager' }] },
  });
  expect(res.status, res.text).toBe(200);
});
afterAll(() => server.close());

/** Renders a hook inside FrappeProvider and exposes its latest value. */
async function renderHook<T>(hook: () => T, provider: Record<string, unknown> = {}): Promise<{ current: () => T; root: Root }> {
  let latest: T;
  function Probe(): ReactNode {
    latest = hook();
    return null;
  }
  const container = document.createElement('div');
  const root = createRoot(container);
  // A thenable callback keeps act on its async path: it flushes effects and microtasks before resolving.
  await act(() => {
    root.render(
      createElement(
        FrappeProvider,
        { url: '', enableSocket: false, swrConfig: { dedupingInterval: 0, provider: () => new Map() }, ...provider },
        createElement(Probe),
      ),
    );
    return Promise.resolve();
  });
  return { current: () => latest, root };
}

const tokenProvider = () => ({ tokenParams: { useToken: true, type: 'token' as const, token: () => `${t.api_key}:${t.api_secret}` } });

describe('frappe-react-sdk auth hooks with a cookie session', () => {
  it('useFrappeAuth logs in, reads user_id from document.cookie, and logs out', async () => {
    const auth = await renderHook(() => useFrappeAuth());
    expect(auth.current().currentUser).toBeFalsy();
    let response: unknown;
    await act(async () => {
      response = await auth.current().login({ username: 'ada@example.com', password: PASSWORD });
    });
    expect(response).toEqual({ message: 'Logged In', home_page: '/app', full_name: 'Ada' });
    expect(document.cookie).toContain('user_id=ada%40example.com');
    expect(document.cookie).not.toContain('sid=');
    await waitFor(() => auth.current().currentUser === 'ada@example.com');
    await act(async () => {
      await auth.current().logout();
    });
    await waitFor(() => !auth.current().currentUser);
    expect(document.cookie).not.toContain('user_id=ada');
    act(() => auth.root.unmount());
  });

  it('a wrong password rejects with the 401 body', async () => {
    const auth = await renderHook(() => useFrappeAuth());
    let error: unknown;
    await act(async () => {
      await auth
        .current()
        .login({ username: 'ada@example.com', password: 'nope' })
        .catch((e: unknown) => (error = e));
    });
    expect(error).toMatchObject({ httpStatus: 401, exc_type: 'AuthenticationError', message: 'Invalid login credentials' });
    act(() => auth.root.unmount());
  });
});

describe('frappe-react-sdk data hooks with token auth', () => {
  it('create, list, get, count, update and delete a document', async () => {
    const create = await renderHook(() => useFrappeCreateDoc(), tokenProvider());
    let created: { name: string; description: string } | undefined;
    await act(async () => {
      created = await create.current().createDoc('ToDo', { description: 'from react', priority: 'High' });
    });
    expect(created?.description).toBe('from react');
    await waitFor(() => create.current().isCompleted);

    const list = await renderHook(
      () => useFrappeGetDocList('ToDo', { fields: ['name', 'description', 'priority'], filters: [['priority', '=', 'High']] }),
      tokenProvider(),
    );
    await waitFor(() => list.current().data !== undefined);
    expect(list.current().data).toEqual([{ name: created!.name, description: 'from react', priority: 'High' }]);

    const one = await renderHook(() => useFrappeGetDoc('ToDo', created!.name), tokenProvider());
    await waitFor(() => one.current().data !== undefined);
    expect(one.current().data).toMatchObject({ name: created!.name, doctype: 'ToDo', status: 'Open' });

    const count = await renderHook(() => useFrappeGetDocCount('ToDo'), tokenProvider());
    await waitFor(() => count.current().data !== undefined);
    expect(count.current().data).toBe(1);

    const update = await renderHook(() => useFrappeUpdateDoc(), tokenProvider());
    await act(async () => {
      await update.current().updateDoc('ToDo', created!.name, { status: 'Closed' });
    });
    await waitFor(() => update.current().isCompleted);

    const remove = await renderHook(() => useFrappeDeleteDoc(), tokenProvider());
    let deleted: unknown;
    await act(async () => {
      deleted = await remove.current().deleteDoc('ToDo', created!.name);
    });
    expect(deleted).toEqual({ data: 'ok' });
    for (const r of [create, list, one, count, update, remove]) act(() => r.root.unmount());
  });

  it('useFrappeGetCall and useFrappePostCall return the whole body', async () => {
    const get = await renderHook(() => useFrappeGetCall('frappe.auth.get_logged_user'), tokenProvider());
    await waitFor(() => get.current().data !== undefined);
    expect(get.current().data).toEqual({ message: 'Administrator' });
    const post = await renderHook(() => useFrappePostCall('frappe.client.get_count'), tokenProvider());
    let body: unknown;
    await act(async () => {
      body = await post.current().call({ doctype: 'User' });
    });
    expect(body).toEqual({ message: 3 });
    act(() => get.root.unmount());
    act(() => post.root.unmount());
  });

  it('errors surface as FrappeError objects', async () => {
    const one = await renderHook(() => useFrappeGetDoc('ToDo', 'missing-name'), tokenProvider());
    await waitFor(() => one.current().error !== undefined);
    expect(one.current().error).toMatchObject({ httpStatus: 404, exc_type: 'DoesNotExistError' });
    act(() => one.root.unmount());
  });
});
