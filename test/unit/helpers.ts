// Test helpers: what a refusal says to a client (status and stable code), never its message; content operations.
import type { Json, JsonObject } from '../../lib/content/json';
import type { ContentOperation } from '../../lib/content/model';
import { Refusal } from '../../lib/config/errors';
import { statusOf } from '../../lib/config/error-codes';
import { parsePath } from '../../lib/paths';

/** The refusal `fn` throws; fails the test when it throws something else or nothing. */
export function thrownBy(fn: () => unknown): Refusal {
  try {
    fn();
  } catch (error) {
    if (error instanceof Refusal) return error;
    throw error;
  }
  throw new Error('expected a refusal, but nothing was thrown');
}

/** `{ statusCode, code }` of the refusal `fn` throws (its status as the edge answers it). */
export function failure(fn: () => unknown): { statusCode: number; code: string } {
  const error = thrownBy(fn);
  return { statusCode: statusOf(error.code), code: error.code };
}

export const badRequest = (code: string) => ({ statusCode: 400, code });

/** Content operations as the routes build them, from a dot path. */
export const set = (path: string, value: Json): ContentOperation => ({ kind: 'set', segments: parsePath(path), value });
export const insert = (path: string, index: number, value: Json): ContentOperation => ({
  kind: 'insert',
  segments: parsePath(path),
  value,
  index,
});
export const push = (path: string, value: Json): ContentOperation => ({
  kind: 'push',
  segments: parsePath(path),
  value,
});
export const add = (path: string, amount: number): ContentOperation => ({
  kind: 'add',
  segments: parsePath(path),
  amount,
});
export const del = (path: string): ContentOperation => ({ kind: 'delete', segments: parsePath(path) });
export const replace = (content: JsonObject): ContentOperation => ({ kind: 'replace', content });

/**
 * An expected one-item write as the compiler sends it: a write of its own drops the token a commit over several items
 * left (`tx`, `rt`, `pa`), named last and removed last (lib/expressions compileCommitStamp).
 */
export function clearingCommit<
  T extends { UpdateExpression: string; ExpressionAttributeNames: Record<string, string> },
>(expected: T): T {
  const n = Object.keys(expected.ExpressionAttributeNames).length;
  const [tx, rt, pa] = [n, n + 1, n + 2].map((i) => `#n${i}`) as [string, string, string];
  const removes = `${tx}, ${rt}, ${pa}`;
  return {
    ...expected,
    UpdateExpression: expected.UpdateExpression.includes(' REMOVE ')
      ? `${expected.UpdateExpression}, ${removes}`
      : `${expected.UpdateExpression} REMOVE ${removes}`,
    ExpressionAttributeNames: { ...expected.ExpressionAttributeNames, [tx]: 'tx', [rt]: 'rt', [pa]: 'pa' },
  };
}
