// The client's path rules against the server's and the reference model (test/support/model-reference.ts): its
// parsePath/formatPath equal lib/paths'; a subscription's value kept by applying each `change` frame (the server's own
// diff and trim, lib/storage/feed/changes.ts) equals the model's value at the path after every random write; and a queued
// write shown optimistically (applyWrite) makes the content the model makes.
import fc from 'fast-check';
import { parsePath as serverParsePath, formatPath as serverFormatPath } from '../../../lib/paths';
import { diffValues, toWire, trimTo } from '../../../lib/storage/feed/changes';
import type { Json as ServerJson } from '../../../lib/content/json';
import { initialContent, rare, requests, resolveBody } from '../../../test/support/model-generators';
import { type JsonObject, reference, sameJson } from '../../../test/support/model-reference';
import { applyChange, applyWrite, type Write } from '../../src/apply';
import { formatPath, parsePath } from '../../src/paths';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 100);

/** The model's value at a path (the whole content for ''), undefined where a GET answers 404. */
const modelValue = (content: JsonObject, path: string) => {
  const got = reference('get', path === '' ? {} : { path }, content);
  return got.status === 200 ? got.value : undefined;
};

describe('parsePath and formatPath: the server’s rules', () => {
  const pathText = fc.string({ unit: fc.constantFrom('a', 'b', '.', '\\', '0', '-', 'é', '__proto__'), maxLength: 12 });

  it('parses every path as lib/paths does, refusing what it refuses (the root, "", is the client’s [])', () => {
    fc.assert(
      fc.property(pathText, (path) => {
        let server: readonly string[] | 'refused';
        try {
          server = serverParsePath(path);
        } catch {
          server = path === '' ? [] : 'refused';
        }
        let client: readonly string[] | 'refused';
        try {
          client = parsePath(path);
        } catch (error) {
          expect(error).toBeInstanceOf(TypeError);
          client = 'refused';
        }
        expect(client).toEqual(server);
      }),
      { numRuns: RUNS * 10 },
    );
  });

  it('formats segments as lib/paths does, and parses them back', () => {
    const segment = fc.string({ unit: fc.constantFrom('a', '.', '\\', '1', ' '), minLength: 1, maxLength: 5 });
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), (segments) => {
        expect(formatPath(segments)).toBe(serverFormatPath(segments));
        expect(parsePath(formatPath(segments))).toEqual(segments);
      }),
      { numRuns: RUNS * 10 },
    );
  });
});

/** Subscription paths into the hot places the generators write: objects, arrays, elements, escaped keys. */
const SUBSCRIPTIONS = [
  '',
  'a',
  'list',
  'list.0',
  'list.1.a',
  'a.list',
  'a.list.0',
  'x\\.y',
  'x\\.y.1',
  '0',
  '0.0.list',
  'constructor',
];

describe('onValue’s change application: the value after each change equals the model’s', () => {
  it('for every subscription path, after every random write (the server’s diff, trimmed to the path, applied)', () => {
    const step = fc.oneof(...requests, ...rare.slice(0, 2));
    fc.assert(
      fc.property(initialContent, fc.array(step, { minLength: 1, maxLength: 12 }), (initial, steps) => {
        let content = initial;
        const held = new Map<string, unknown>(SUBSCRIPTIONS.map((path) => [path, modelValue(content, path)]));
        for (const [route, raw] of steps) {
          const outcome = reference(route, resolveBody(raw, content), content);
          const changes = diffValues(content as ServerJson, outcome.content as ServerJson, []);
          content = outcome.content;
          for (const path of SUBSCRIPTIONS) {
            const base = parsePath(path);
            let value = held.get(path);
            for (const change of trimTo(changes, base).map(toWire)) {
              value = applyChange(value, parsePath(change.path).slice(base.length), change);
            }
            held.set(path, value);
            if (!sameJson(value, modelValue(content, path))) {
              throw new Error(
                `at ${path || '(root)'}: ${JSON.stringify(value)} != ${JSON.stringify(modelValue(content, path))}`,
              );
            }
          }
        }
      }),
      { numRuns: RUNS },
    );
  });
});

/** A request body as the offline queue's write; undefined for one it cannot show (an exact decimal's arithmetic). */
function asWrite(route: string, body: Record<string, unknown>, content: JsonObject): Write | undefined {
  const { path, value, index } = body as { path: string; value: unknown; index: number };
  if (route === 'set' || route === 'push') return { op: route, path, value };
  if (route === 'insert') return { op: route, path, value, index };
  if (route === 'delete') return { op: route, path };
  if (route !== 'increment' && route !== 'decrement') return undefined;
  const target = modelValue(content, path);
  // A double adds what it holds exactly; the server's exact decimals are shown once it answers.
  if (value !== undefined && !Number.isSafeInteger(value)) return undefined;
  if (target !== undefined && !(typeof target === 'number' && Number.isSafeInteger(target))) return undefined;
  return { op: route, path, by: value as number | undefined };
}

describe('applyWrite: a queued write shown before the server has it', () => {
  it('makes the content the model makes for every write the server accepts', () => {
    const step = fc.oneof(...requests.filter((r) => r !== requests.at(-1)));
    let checked = 0;
    fc.assert(
      fc.property(initialContent, fc.array(step, { minLength: 1, maxLength: 12 }), (initial, steps) => {
        let content = initial;
        for (const [route, raw] of steps) {
          const body = resolveBody(raw, content);
          const outcome = reference(route, body, content);
          const write = asWrite(route, body, content);
          if (outcome.status === 200 && write) {
            const shown = applyWrite(content, write);
            if (!sameJson(shown, outcome.content)) {
              throw new Error(
                `${route} ${JSON.stringify(body)}: ${JSON.stringify(shown)} != ${JSON.stringify(outcome.content)}`,
              );
            }
            checked++;
          }
          content = outcome.content;
        }
      }),
      { numRuns: RUNS },
    );
    expect(checked).toBeGreaterThan(RUNS);
  });

  it('refuses what the server refuses for the shape of the content, and never reaches a prototype', () => {
    const content = { s: 'text', list: [1, 2], n: 1 };
    for (const write of [
      { op: 'push', path: 's', value: 1 },
      { op: 'insert', path: 'list', value: 0, index: 3 },
      { op: 'insert', path: 'missing', value: 0, index: 1 },
      { op: 'increment', path: 's' },
      { op: 'set', path: 's.x', value: 1 },
      { op: 'set', path: 'list.x', value: 1 },
      { op: 'set', path: 'list.3', value: 1 },
      { op: 'set', path: '__proto__.polluted', value: 1 },
      { op: 'set', path: 'a.__proto__', value: 1 },
    ] as Write[]) {
      expect(() => applyWrite(content, write)).toThrow(TypeError);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(applyWrite(content, { op: 'delete', path: 's.x' })).toBe(content);
    expect(applyWrite(content, { op: 'delete', path: 'list.-1' })).toEqual({ s: 'text', list: [1], n: 1 });
    expect(content).toEqual({ s: 'text', list: [1, 2], n: 1 });
  });
});
