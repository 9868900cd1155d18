import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { pythonJsonDumps } from '@quire/frappe-compat';
import { frappeSignature, standardWebhookHeaders, standardWebhookSecret } from '../src/signing';

describe('frappeSignature', () => {
  it('matches the RFC 4231 HMAC-SHA256 test vector (case 2), base64-encoded', () => {
    expect(frappeSignature('Jefe', 'what do ya want for nothing?')).toBe('W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM=');
  });

  it('matches Python: base64(hmac.new(secret.encode(), json.dumps(data).encode("utf8"), sha256).digest())', () => {
    // Computed with CPython 3 for the same data and the secret "sécret".
    const data = {
      name: 'SINV-0001',
      grand_total: 1500.5,
      items: [{ qty: 2, rate: 10 }],
      customer: 'Zürich 🚀',
      nothing: null,
      ok: true,
    };
    const body = pythonJsonDumps(data);
    expect(body).toBe(
      '{"name": "SINV-0001", "grand_total": 1500.5, "items": [{"qty": 2, "rate": 10}], "customer": "Z\\u00fcrich \\ud83d\\ude80", "nothing": null, "ok": true}',
    );
    expect(frappeSignature('sécret', body)).toBe('N7aFrkGvax/mnuMLiB3bKJlSPa+oFmMWHwD5AU47qrw=');
  });

  it('signs the UTF-8 bytes of the body', () => {
    const body = '{"city": "Zürich"}';
    const expected = createHmac('sha256', Buffer.from('k', 'utf8')).update(Buffer.from(body, 'utf8')).digest('base64');
    expect(frappeSignature('k', body)).toBe(expected);
    expect(frappeSignature('k', body)).not.toBe(frappeSignature('k', `${body} `));
    expect(frappeSignature('k', body)).not.toBe(frappeSignature('K', body));
  });

  it('handles an empty secret and body', () => {
    expect(frappeSignature('', '')).toBe('thNnmggU2ex3L5XXeMNfxf8Wl8STcVZTxscSFEKSxa0=');
  });
});

describe('standardWebhookHeaders', () => {
  const secret = 'my webhook sécret';
  const body = '{"name": "SINV-0001", "total": 10}';

  it('is verified by the standardwebhooks package', () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = standardWebhookHeaders(secret, 'msg_2b1c', timestamp, body);
    const receiver = new Webhook(standardWebhookSecret(secret));
    expect(receiver.verify(body, headers)).toEqual({ name: 'SINV-0001', total: 10 });
  });

  it('is produced the same way by the standardwebhooks package', () => {
    const timestamp = 1_700_000_000;
    const headers = standardWebhookHeaders(secret, 'msg_1', timestamp, body);
    const signer = new Webhook(standardWebhookSecret(secret));
    expect(headers).toEqual({
      'webhook-id': 'msg_1',
      'webhook-timestamp': '1700000000',
      'webhook-signature': signer.sign('msg_1', new Date(timestamp * 1000), body),
    });
  });

  it('is rejected when anything was tampered with', () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = standardWebhookHeaders(secret, 'msg_1', timestamp, body);
    const receiver = new Webhook(standardWebhookSecret(secret));
    expect(() => receiver.verify(`${body} `, headers)).toThrow();
    expect(() => receiver.verify(body, { ...headers, 'webhook-id': 'msg_2' })).toThrow();
    expect(() => receiver.verify(body, { ...headers, 'webhook-timestamp': String(timestamp + 1) })).toThrow();
    expect(() => new Webhook(standardWebhookSecret('other')).verify(body, headers)).toThrow();
  });

  it('is rejected by the receiver when too old', () => {
    const old = Math.floor(Date.now() / 1000) - 3600;
    const headers = standardWebhookHeaders(secret, 'msg_1', old, body);
    expect(() => new Webhook(standardWebhookSecret(secret)).verify(body, headers)).toThrow(/timestamp/i);
  });

  it('signs `${id}.${timestamp}.${body}` with the UTF-8 secret', () => {
    const headers = standardWebhookHeaders('k', 'id', 42.9, 'b');
    const expected = createHmac('sha256', Buffer.from('k')).update('id.42.b').digest('base64');
    expect(headers['webhook-timestamp']).toBe('42');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('refuses a non-finite timestamp', () => {
    expect(() => standardWebhookHeaders('k', 'id', Number.NaN, 'b')).toThrow(RangeError);
  });
});

describe('standardWebhookSecret', () => {
  it('is whsec_ + base64 of the UTF-8 secret', () => {
    expect(standardWebhookSecret('secret')).toBe('whsec_c2VjcmV0');
    expect(standardWebhookSecret('é')).toBe('whsec_w6k=');
    expect(standardWebhookSecret('')).toBe('whsec_');
  });
});
