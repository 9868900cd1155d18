import { parseCidrList } from '@quire/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quireJson } from '../support/process';
import { startReceiver, type Receiver } from '../support/receiver';
import { databaseUrl, startTestServer, type TestServer } from '../support/server';

/**
 * Every process writes documents through the same runtime, so a change made by the CLI reaches the
 * webhook outbox exactly like one made through the API, and a running webhooks service delivers it.
 */

let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startTestServer({ webhooks: { allowNets: parseCidrList('127.0.0.1/32') } });
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

describe('documents written by the CLI', () => {
  it('a Webhook on User after_insert fires for a user made with `quire user create`', async () => {
    const t = await server.tenant('cli');
    const name = `users-${t.name}`;
    const hook = await t.call('POST', '/api/resource/Webhook', {
      json: {
        name,
        webhook_doctype: 'User',
        webhook_docevent: 'after_insert',
        request_url: `${receiver.url}/${name}`,
        request_method: 'POST',
        webhook_data: [
          { fieldname: 'name', key: 'user' },
          { fieldname: 'first_name', key: 'first_name' },
        ],
      },
    });
    expect(hook.status, hook.text).toBe(200);

    const email = `cli-${t.name}@example.com`;
    const created = await quireJson(['user', 'create', '--tenant', t.name, '--email', email, '--first-name', 'Ada'], { DATABASE_URL: databaseUrl() });
    expect(created.code, JSON.stringify(created.json)).toBe(0);
    expect(created.json).toMatchObject({ tenant: t.name, name: email });

    const outbox = await server.db.query<{ event: string; reference_doctype: string; reference_name: string; user: string }>(
      `SELECT "event", "reference_doctype", "reference_name", "user" FROM quire.webhook_events WHERE "tenant" = $1 AND "webhook" = $2`,
      [t.name, name],
    );
    expect(outbox.rows).toEqual([{ event: 'after_insert', reference_doctype: 'User', reference_name: email, user: 'Administrator' }]);

    const [delivered] = await receiver.waitFor(1, 10_000, (r) => r.url === `/${name}`);
    expect(JSON.parse(delivered!.body)).toEqual({ user: email, first_name: 'Ada' });
  });
});
