import { makePrincipal } from '@quire/permissions';
import { DEFAULT_RETRY_POLICY, Dispatcher, parseCidrList, type DeliveryDeps, type DispatcherOptions } from '@quire/webhooks';
import { expect } from 'vitest';
import type { Receiver } from '../support/receiver';
import type { TestServer, TestTenant } from '../support/server';

/**
 * The dispatcher on its own, on a test server's database (which delivers nothing itself): what
 * dispatcher.test.ts and fairness.test.ts make their dispatchers, webhooks and events with.
 */

const ADMIN = makePrincipal('Administrator', ['Administrator', 'System Manager']);

export interface DispatcherLab {
  /** A dispatcher on the server's outbox (4 slots unless told), closed (forced) by `closeAll`. */
  dispatcher: (options?: Partial<DispatcherOptions>) => Dispatcher;
  /** A webhook on ToDo inserts to the receiver's `/<name>`; answers that path. */
  webhook: (t: TestTenant, name: string) => Promise<string>;
  closeAll: () => Promise<void>;
}

export function dispatcherLab(server: () => TestServer, receiver: () => Receiver, leaseMarginMs: number): DispatcherLab {
  const running = new Set<Dispatcher>();
  return {
    dispatcher(options = {}) {
      const { db, platform } = server();
      const deps: DeliveryDeps = {
        db,
        async contextFor(name) {
          const tenant = platform.tenants.get(name);
          return tenant ? platform.context(tenant, ADMIN) : undefined;
        },
        pausedTenants: () => platform.tenants.paused(),
        allow: parseCidrList('127.0.0.1/32'),
        policy: { ...DEFAULT_RETRY_POLICY, baseDelayMs: 200, jitter: 0 },
        leaseMarginMs,
      };
      const d = new Dispatcher(deps, { concurrency: 4, sweepIntervalMs: 100, ...options });
      running.add(d);
      return d;
    },
    async webhook(t, name) {
      const res = await t.call('POST', '/api/resource/Webhook', {
        json: { name, webhook_doctype: 'ToDo', webhook_docevent: 'after_insert', request_url: `${receiver().url}/${name}`, timeout: 5 },
      });
      expect(res.status, res.text).toBe(200);
      return `/${name}`;
    },
    async closeAll() {
      await Promise.all([...running].map((d) => d.close(true)));
    },
  };
}

/** Inserts `n` ToDos in one request (each raises its after_insert webhooks). */
export async function insertTodos(t: TestTenant, n: number): Promise<void> {
  const docs = Array.from({ length: n }, (_, i) => ({ doctype: 'ToDo', description: `d ${i}` }));
  expect((await t.call('POST', '/api/method/frappe.client.insert_many', { json: { docs } })).status).toBe(200);
}
