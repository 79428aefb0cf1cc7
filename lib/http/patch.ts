// PATCH content: the two patch media types, and their documents read into the batch planner's operations.
import { Refusal } from '../config/errors';
import { MAX_CONTAINER_DEPTH } from '../config/limits';
import { type BatchOperation, readOperation } from '../content/batch';
import { type Json, assertStorable, isObject } from '../content/json';
import { PATCH_OPS, type PatchOpName } from '../content/patch';
import { formatPointer, parsePointer } from '../paths';
import { parseJson } from './request';

export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export type PatchMediaType = typeof JSON_PATCH | typeof MERGE_PATCH;

/** At most this many operations in a JSON Patch document (as in a batch); none is a patch that changes nothing. */
export const MAX_PATCH_OPERATIONS = 100;

const PATCH_TYPE = /^(application\/(?:json-patch|merge-patch)\+json)\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** The patch media type a Content-Type names, or undefined (PATCH takes no other, nor a body without a type). */
export function patchMediaType(type: string | undefined): PatchMediaType | undefined {
  return PATCH_TYPE.exec(type?.trim() ?? '')?.[1]?.toLowerCase() as PatchMediaType | undefined;
}

/** The envelope check of PATCH: 415 for any other Content-Type, or none. */
export function assertPatchType(type: string | undefined): void {
  if (patchMediaType(type) === undefined) {
    throw new Refusal(
      'UNSUPPORTED_MEDIA_TYPE',
      `PATCH takes Content-Type ${JSON_PATCH} (RFC 6902) or ${MERGE_PATCH} (RFC 7396)`,
    );
  }
}

/** RFC 6902 and 7396 (through RFC 8259) leave a member named twice undefined; A.13 of RFC 6902 makes it an error. */
function duplicateMember(key: string): never {
  throw new Refusal('INVALID_PATCH', `the patch names the member '${key}' twice in one object`);
}

const invalid = (message: string) => new Refusal('INVALID_PATCH', message);
const hasMember = (object: Record<string, unknown>, key: string) => Object.hasOwn(object, key);
const isProperPrefix = (a: readonly string[], b: readonly string[]) =>
  a.length < b.length && a.every((t, i) => t === b[i]);

/** One RFC 6902 operation as its section 4 requires it (unknown members ignored, as section 4 says), or its 400. */
function patchOperation(item: unknown, index: number): BatchOperation {
  return readOperation(index, () => {
    if (!isObject(item)) throw invalid(`operation ${index} must be an object`);
    const op = item.op as PatchOpName;
    if (!PATCH_OPS.includes(op)) throw invalid(`operation ${index}: op must be one of ${PATCH_OPS.join(', ')}`);
    if (typeof item.path !== 'string') throw invalid(`operation ${index} needs a string 'path' (a JSON Pointer)`);
    const path = parsePointer(item.path);
    if (op === 'add' || op === 'replace' || op === 'test') {
      if (!hasMember(item, 'value')) throw invalid(`operation ${index} (${op}) needs 'value' (null is a value)`);
      const value = item.value as Json;
      // What is stored follows the content rules; a tested value is only compared.
      if (op !== 'test') assertStorable(value, MAX_CONTAINER_DEPTH - path.length);
      return { kind: 'patch', op, path, value };
    }
    if (op === 'move' || op === 'copy') {
      if (typeof item.from !== 'string')
        throw invalid(`operation ${index} (${op}) needs a string 'from' (a JSON Pointer)`);
      const from = parsePointer(item.from);
      if (op === 'move' && isProperPrefix(from, path)) {
        throw invalid(`operation ${index}: '${formatPointer(from)}' cannot be moved into its own child`);
      }
      return { kind: 'patch', op, path, from };
    }
    return { kind: 'patch', op, path };
  });
}

/**
 * A PATCH body read into the planner's operations. JSON Patch: an array of up to 100 operations, each checked when
 * its turn comes (a malformed one fails the patch with its index, as in a batch). Merge patch: one operation, an
 * object (a patch that is not one would make the content something else: 400 INVALID_CONTENT).
 */
export function patchOperations(text: string, type: PatchMediaType): { body: unknown; ops: BatchOperation[] } {
  const body = parseJson(text, duplicateMember);
  if (type === MERGE_PATCH) {
    if (!isObject(body)) throw new Refusal('INVALID_CONTENT', 'a merge patch of the content must be a JSON object');
    assertStorable(body, MAX_CONTAINER_DEPTH);
    return { body, ops: [{ kind: 'merge', patch: body }] };
  }
  if (!Array.isArray(body)) throw invalid('a JSON Patch document is an array of operations');
  if (body.length > MAX_PATCH_OPERATIONS) {
    throw invalid(`a JSON Patch document may hold at most ${MAX_PATCH_OPERATIONS} operations`);
  }
  return { body, ops: body.map(patchOperation) };
}
