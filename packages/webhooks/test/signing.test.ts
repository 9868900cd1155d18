import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  frappeSignature,
  pythonJsonDumps,
  pythonNumberRepr,
  standardWebhookHeaders,
  standardWebhookSecret,
} from '../src/signing';

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

describe('pythonJsonDumps', () => {
  it.each<[unknown, string]>([
    [null, 'null'],
    [undefined, 'null'],
    [true, 'true'],
    [false, 'false'],
    [0, '0'],
    [-0, '0'],
    [42, '42'],
    [-7, '-7'],
    [1.0, '1'],
    [1500.5, '1500.5'],
    [0.1, '0.1'],
    [0.30000000000000004, '0.30000000000000004'],
    [100 / 3, '33.333333333333336'],
    [123456789012345.6, '123456789012345.6'],
    [1e15, '1000000000000000'],
    [1e16, '1e+16'],
    [1.5e16, '1.5e+16'],
    [1e22, '1e+22'],
    [1e-5, '1e-05'],
    [1.234e-7, '1.234e-07'],
    [0.0001, '0.0001'],
    [-2.5e-10, '-2.5e-10'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [Number.NaN, 'NaN'],
    [Infinity, 'Infinity'],
    [-Infinity, '-Infinity'],
    ['', '""'],
    ['plain', '"plain"'],
    ['\u007f\u0000\u001f"\\/\b\f\n\r\t', '"\\u007f\\u0000\\u001f\\"\\\\/\\b\\f\\n\\r\\t"'],
    ['🚀é\u2028', '"\\ud83d\\ude80\\u00e9\\u2028"'],
    ['日本', '"\\u65e5\\u672c"'],
    ['\ud800', '"\\ud800"'],
    [[], '[]'],
    [{}, '{}'],
    [[[]], '[[]]'],
    [{ a: {} }, '{"a": {}}'],
    [[1, 'a', null, true, 2.5], '[1, "a", null, true, 2.5]'],
    [{ b: 1, a: [1, { c: 'd' }] }, '{"b": 1, "a": [1, {"c": "d"}]}'],
    [{ 'ключ': 'значение' }, '{"\\u043a\\u043b\\u044e\\u0447": "\\u0437\\u043d\\u0430\\u0447\\u0435\\u043d\\u0438\\u0435"}'],
  ])('%j', (value, expected) => {
    expect(pythonJsonDumps(value)).toBe(expected);
  });

  it('writes bigint as a Python int', () => {
    expect(pythonJsonDumps({ big: 12345678901234567890n })).toBe('{"big": 12345678901234567890}');
  });

  it('keeps insertion order of keys (not sorted)', () => {
    expect(pythonJsonDumps({ z: 1, a: 2, m: 3 })).toBe('{"z": 1, "a": 2, "m": 3}');
  });

  it('keeps any key order given as a Map', () => {
    const map = new Map<string, unknown>([
      ['b', 1],
      ['10', 2],
      ['2', 3],
    ]);
    expect(pythonJsonDumps(map)).toBe('{"b": 1, "10": 2, "2": 3}');
    expect(pythonJsonDumps({ data: map })).toBe('{"data": {"b": 1, "10": 2, "2": 3}}');
  });

  it('omits undefined properties and writes undefined array items as null', () => {
    expect(pythonJsonDumps({ a: undefined, b: 1 })).toBe('{"b": 1}');
    expect(pythonJsonDumps([undefined, 1])).toBe('[null, 1]');
  });

  it('uses toJSON (dates become ISO strings)', () => {
    expect(pythonJsonDumps({ at: new Date('2024-01-02T03:04:05.000Z') })).toBe('{"at": "2024-01-02T03:04:05.000Z"}');
  });

  it('refuses values Python cannot serialise', () => {
    expect(() => pythonJsonDumps({ f: () => 1 })).toThrow(TypeError);
    expect(() => pythonJsonDumps([Symbol('x')])).toThrow(TypeError);
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(() => pythonJsonDumps(loop)).toThrow(/Circular reference detected/);
  });

  it('allows the same object twice when it is not circular', () => {
    const shared = { x: 1 };
    expect(pythonJsonDumps([shared, shared])).toBe('[{"x": 1}, {"x": 1}]');
  });

  it('produces valid JSON that round-trips for JSON-native data', () => {
    const data = { name: 'A "quoted" \\ name', list: [1, 2.5, -3e-7, 'x\ny'], nested: { deep: [{ e: '🎉' }] }, n: null };
    expect(JSON.parse(pythonJsonDumps(data))).toEqual(data);
  });
});

describe('pythonNumberRepr', () => {
  it.each<[number, string]>([
    [1, '1'],
    [-1, '-1'],
    [2.5, '2.5'],
    [1e16, '1e+16'],
    [1e100, '1e+100'],
    [9007199254740993, '9007199254740992'],
    [1e-7, '1e-07'],
    [0.000123, '0.000123'],
    [Number.NaN, 'nan'],
    [Infinity, 'inf'],
    [-Infinity, '-inf'],
  ])('%s → %s', (n, expected) => {
    expect(pythonNumberRepr(n)).toBe(expected);
  });
});
