// The client's JSON reading (client/src/json.ts): every digit and every key exact, on engines whose JSON.parse
// misreads escaped keys (V8: nodejs/node#63785).
import fc from 'fast-check';
import { parseJson } from '../../src/json';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 200);

describe('parseJson', () => {
  it('reads an escaped key right after a key ending in an escaped backslash (which JSON.parse may misread)', () => {
    JSON.parse('{"\\\\":0}'); // a key `\`: on V8 13.6/14.6, `{"\n":1}` parsed next by JSON.parse reads as `{"\\":1}`
    JSON.parse('{"h":[],"\\\\":0}');
    expect(Object.keys(parseJson('{"\\n":1}') as object)).toEqual(['\n']);
    expect(Object.keys(parseJson('{"\\u0000":1}') as object)).toEqual(['\u0000']);
    expect(Object.keys(parseJson('{"h":1,"\\"":2}') as object)).toEqual(['h', '"']);
  });

  it('round-trips objects whose keys are escapes, whatever was parsed before', () => {
    const alphabet = fc.constantFrom('a', '\\', '"', '\n', '\u0000', 'é', '/', '\u2028', '~k0~');
    const key = fc.array(alphabet, { minLength: 1, maxLength: 3 }).map((cs) => cs.join(''));
    const value = fc.dictionary(key, fc.oneof(fc.integer(), fc.dictionary(key, fc.boolean(), { maxKeys: 3 })), {
      maxKeys: 4,
    });
    fc.assert(
      fc.property(fc.array(value, { minLength: 2, maxLength: 6 }), (values) => {
        for (const v of values) expect(parseJson(JSON.stringify(v))).toEqual(v);
      }),
      { numRuns: RUNS * 5 },
    );
  });

  it('keeps key order, a __proto__ key as an own property, and the last of duplicate keys', () => {
    const value = parseJson('{"b":1,"\\u0061":2,"__proto__":{"x":1},"\\u005f_proto__":3,"a":4}') as Record<
      string,
      unknown
    >;
    expect(Object.keys(value)).toEqual(['b', 'a', '__proto__']);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toBe(3);
    expect(value.a).toBe(4);
  });

  it('refuses a __proto__ key when asked, escaped or not, and text that is not JSON', () => {
    for (const text of ['{"__proto__":1}', '{"\\u005f_proto__":1}', '[{"a":{"__pro\\u0074o__":1}}]'])
      expect(() => parseJson(text, { refuseReservedKey: true })).toThrow(/"__proto__" cannot be used as a key/);
    for (const text of ['{"a\\q":1}', '{"\\n" 1}', '{"\\n":}', 'hello'])
      expect(() => parseJson(text)).toThrow(SyntaxError);
  });

  it('keeps every digit of numbers under escaped keys', () => {
    expect(JSON.stringify(parseJson('{"\\n":123456789012345678901234567890,"x":[1.10]}'))).toBe(
      '{"\\n":123456789012345678901234567890,"x":[1.10]}',
    );
  });
});
