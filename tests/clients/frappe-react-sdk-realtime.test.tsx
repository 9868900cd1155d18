// @vitest-environment jsdom
import path from 'node:path';
import { act, createElement, type ReactNode } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { FrappeProvider, useFrappeDocTypeEventListener, useFrappeDocumentEventListener, useFrappeEventListener } from 'frappe-react-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/process';
import { startTestServer, type TestServer, type TestTenant } from '../support/server';
import { waitFor } from './react-act';

/**
 * The real frappe-react-sdk's realtime hooks, rendered in jsdom (the SDK's own tests' way), on a
 * page served from Quire's origin: the SDK opens Socket.IO at `url` with `socketPort` and the
 * `siteName` namespace, sends the token on the handshake, and its hooks emit Frappe's subscribe
 * events. What the hooks hear is what Quire sends for committed changes.
 */

declare const jsdom: { reconfigure(options: { url: string }): void; window: { _origin: string } };
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const LAB_APP = path.join(ROOT, 'tests/fixtures/apps/lab_app');
let server: TestServer;
let t: TestTenant;

beforeAll(async () => {
  const name = `rtreact${Math.random().toString(36).slice(2, 8)}`;
  server = await startTestServer({ defaultTenant: name, apps: [LAB_APP] });
  t = await server.tenant('rtreact', name);
  jsdom.reconfigure({ url: `${server.url}/app` });
  jsdom.window._origin = server.url;
});
afterAll(() => server.close());

/** Renders `hook` inside a FrappeProvider with a socket (token auth) and keeps every value it returned. */
async function render(hook: () => void): Promise<Root> {
  function Probe(): ReactNode {
    hook();
    return null;
  }
  const root = createRoot(document.createElement('div'));
  await act(() => {
    root.render(
      createElement(
        FrappeProvider,
        {
          url: server.url,
          socketPort: String(server.port),
          siteName: t.name,
          enableSocket: true,
          tokenParams: { useToken: true, type: 'token' as const, token: () => `${t.api_key}:${t.api_secret}` },
        },
        createElement(Probe),
      ),
    );
    return Promise.resolve();
  });
  return root;
}

/** Keeps trying `change` until the hook heard something: the SDK's subscribe events carry no acknowledgement. */
async function untilHeard(heard: () => number, change: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 20 && heard() === 0; i++) {
    await change();
    try {
      await waitFor(() => heard() > 0, 500);
    } catch {
      // not subscribed yet: change again
    }
  }
  expect(heard()).toBeGreaterThan(0);
}

describe('frappe-react-sdk realtime hooks', () => {
  it('useFrappeDocumentEventListener hears doc_update for the document, and its viewers', async () => {
    const todo = await t.call('POST', '/api/resource/ToDo', { json: { description: 'live' } });
    const name = todo.body.data.name as string;
    const updates: Array<{ doctype: string; name: string; modified: string }> = [];
    let viewers: string[] = [];
    const root = await render(() => {
      const { viewers: v } = useFrappeDocumentEventListener('ToDo', name, (e) => updates.push(e));
      viewers = v;
    });
    let last = '';
    await untilHeard(
      () => updates.length,
      async () => {
        last = (await t.call('PUT', `/api/resource/ToDo/${name}`, { json: { description: `live ${Date.now()}` } })).body.data.modified as string;
      },
    );
    expect(updates.at(-1)).toEqual({ doctype: 'ToDo', name, modified: last });
    expect(viewers).toEqual([]); // the only viewer is this user: Frappe sends no doc_viewers then
    act(() => root.unmount());
  });

  it('useFrappeDocTypeEventListener hears list_update when a document of the DocType is created', async () => {
    const heard: Array<{ doctype: string; name: string; user: string }> = [];
    const root = await render(() => useFrappeDocTypeEventListener('ToDo', (e) => heard.push(e)));
    let created = '';
    await untilHeard(
      () => heard.filter((e) => e.name === created).length,
      async () => {
        created = (await t.call('POST', '/api/resource/ToDo', { json: { description: 'listed' } })).body.data.name as string;
      },
    );
    expect(heard.find((e) => e.name === created)).toEqual({ doctype: 'ToDo', name: created, user: 'Administrator' });
    act(() => root.unmount());
  });

  it('useFrappeEventListener hears what a server function publishes to the user', async () => {
    const heard: unknown[] = [];
    const root = await render(() => useFrappeEventListener('lab_announcement', (e) => heard.push(e)));
    await untilHeard(
      () => heard.length,
      () => t.call('POST', '/api/method/lab_app.api.announce', { json: { text: 'from the server' } }),
    );
    expect(heard[0]).toEqual({ text: 'from the server' });
    act(() => root.unmount());
  });
});
