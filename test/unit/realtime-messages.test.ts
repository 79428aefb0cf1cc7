// A message for many subscriptions, encoded once (encodeForEach): each frame is exactly what encoding the message
// with that subscription's id gives (encodeWithin), `changed` included when the frame passes 128 KB by its id.
import fc from 'fast-check';
import { LosslessNumber } from '../../lib/content/json';
import { MAX_MESSAGE_BYTES, encodeForEach, encodeWithin } from '../../lib/realtime/messages';

const id = fc.string({ unit: fc.constantFrom(...'AZaz09_-'.split('')), minLength: 1, maxLength: 16 });
const value = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.constant(new LosslessNumber('12345678901234567890.5')),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
);
const change = fc.oneof(
  fc.record({ path: fc.string(), value }),
  fc.record({ path: fc.string(), deleted: fc.constant(true as const) }),
);

describe('encodeForEach', () => {
  it('gives each subscription the frame encodeWithin gives it', () => {
    fc.assert(
      fc.property(fc.array(change, { maxLength: 4 }), fc.array(id, { minLength: 1, maxLength: 5 }), (changes, ids) => {
        const revision = '0000000000000000000000000000000000000042';
        const frame = encodeForEach({ type: 'change', revision, changes });
        for (const sub of ids) expect(frame(sub)).toBe(encodeWithin({ type: 'change', id: sub, revision, changes }));
        const changed = encodeForEach({ type: 'changed', revision });
        for (const sub of ids) expect(JSON.parse(changed(sub))).toEqual({ type: 'changed', id: sub, revision });
      }),
    );
  });

  it('puts changed in place of a frame its id takes over the limit, and only that one', () => {
    const revision = '7';
    const base = JSON.stringify({ type: 'change', id: '', revision, changes: [{ path: 'a', value: '' }] });
    // A value that leaves room for an id of 5 characters, not 6.
    const value = 'x'.repeat(MAX_MESSAGE_BYTES - Buffer.byteLength(base) - 5);
    const frame = encodeForEach({ type: 'change', revision, changes: [{ path: 'a', value }] });
    expect(Buffer.byteLength(frame('abcde'))).toBe(MAX_MESSAGE_BYTES);
    expect(JSON.parse(frame('abcde')).changes[0].value).toBe(value);
    expect(JSON.parse(frame('abcdef'))).toEqual({ type: 'changed', id: 'abcdef', revision });
    expect(frame('abcdef')).toBe(
      encodeWithin({ type: 'change', id: 'abcdef', revision, changes: [{ path: 'a', value }] }),
    );
  });
});
