import { describe, expect, it } from 'vitest';
import { pythonJsonDumps, pythonNumberRepr } from '../src/json-dumps';

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
    [{ ключ: 'значение' }, '{"\\u043a\\u043b\\u044e\\u0447": "\\u0437\\u043d\\u0430\\u0447\\u0435\\u043d\\u0438\\u0435"}'],
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
    // eslint-disable-next-line no-loss-of-precision -- the point: this literal is not representable, as in Python
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
