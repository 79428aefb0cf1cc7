// History against the reference model (issue 31): random operations on contents that chunk and bucket (run with
// SEGMENT_FRAGMENT_BYTES=256, as `npm run test:segments` does), then a read at every revision equals the model's
// content after that step, at the root and at random paths; a restore to a revision equals the model's old content.
// PROPERTY_RUNS sets the number of runs; PROPERTY_SEED replays one.
import fc from 'fast-check';
import { parse, stringify } from 'lossless-json';
import { type Project, call, newProject } from '../support/api';
import { anyRequest, initialContent, layeredContent, resolveBody } from '../support/model-generators';
import { type Json, type JsonObject, formatPath, reference, sameJson } from '../support/model-reference';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 10);
const SEED = process.env.PROPERTY_SEED === undefined ? undefined : Number(process.env.PROPERTY_SEED);

const send = (p: Project, route: string, body: unknown, key: string) =>
  call('POST', `${p.content}/${route}`, {
    token: p.key,
    rawBody: stringify(body),
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
  });

/** Every path to a value at most 3 levels down (the root included), for reads at a revision. */
function paths(value: Json, at: string[] = [], found: string[][] = []): string[][] {
  found.push(at);
  if (at.length >= 3 || value === null || typeof value !== 'object' || !('constructor' in Object(value))) return found;
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...at, String(i)], found));
  else if (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null)
    for (const k of Object.keys(value)) paths((value as JsonObject)[k] as Json, [...at, k], found);
  return found;
}

/** Newest first, until the entry named `key` is there (the consumer logs in commit order). */
async function historyUntil(p: Project, key: string): Promise<Map<string, string>> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const byKey = new Map<string, string>();
    let before: string | null = null;
    do {
      const r = await call('GET', `${p.content}/history?limit=100${before ? `&before=${before}` : ''}`, {
        token: p.key,
      });
      expect(r.status).toBe(200);
      for (const e of r.body.entries) if (e.idempotencyKey) byKey.set(e.idempotencyKey, e.revision);
      before = r.body.next;
    } while (before !== null);
    if (byKey.has(key)) return byKey;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the history never showed ${key}`);
}

const readAt = async (p: Project, revision: string, path: string[]) =>
  call('GET', `${p.content}?at=${revision}${path.length ? `&path=${encodeURIComponent(formatPath(path))}` : ''}`, {
    token: p.key,
  });

describe('history against the model', () => {
  it('GET ?at=<each revision> equals the model after that step; restore equals the old content', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(initialContent, layeredContent),
        fc.array(fc.oneof(...anyRequest), { minLength: 1, maxLength: 12 }),
        fc.nat(),
        async (initial, requests, pick) => {
          const p = await newProject();
          let model: JsonObject = {};
          /** The model's content after each step that logged a change, by its Idempotency-Key. */
          const after = new Map<string, JsonObject>();
          const steps: Array<[string, unknown]> = [['update', { content: initial }], ...requests];
          for (const [i, [route, raw]] of steps.entries()) {
            if (route === 'get') continue;
            const body = resolveBody(raw as Record<string, unknown>, model);
            const expected = reference(route as never, body, model);
            const reply = await send(p, route, body, `step-${i}`);
            expect(reply.status).toBe(expected.status);
            model = expected.content;
            if (reply.status === 200) after.set(`step-${i}`, model);
          }
          expect((await send(p, 'set', { path: 'done', value: 1 }, 'done')).status).toBe(200);
          const revisions = await historyUntil(p, 'done');
          const checked = [...after].filter(([key]) => revisions.has(key));
          for (const [key, content] of checked) {
            const revision = revisions.get(key) as string;
            const all = paths(content);
            for (const path of [[], all[pick % all.length] as string[], ['no', 'such']]) {
              const expected = reference('get', path.length ? { path: formatPath(path) } : {}, content);
              const r = await readAt(p, revision, path);
              const context = `at ${key} (${revision}) path ${formatPath(path)}: ${r.status} ${r.text.slice(0, 300)}, model ${expected.status} ${stringify(expected.value)?.slice(0, 300)}`;
              if (r.status !== expected.status) throw new Error(context);
              if (r.status === 200 && !sameJson((parse(r.text) as { value: unknown }).value, expected.value))
                throw new Error(context);
            }
          }
          // Restore the whole content to a random step: equal to the model's content then.
          if (checked.length > 0) {
            const [key, content] = checked[pick % checked.length] as [string, JsonObject];
            const r = await send(p, 'restore', { at: revisions.get(key) }, 'restore');
            expect(r.status).toBe(200);
            const now = await call('GET', p.content, { token: p.key });
            const value = (parse(now.text) as { value: unknown }).value;
            if (!sameJson(value, content)) throw new Error(`restore to ${key}: ${now.text.slice(0, 300)}`);
          }
        },
      ),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
  }, 600_000);
});
