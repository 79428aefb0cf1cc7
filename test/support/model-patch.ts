// The reference model of PATCH content, written from the README's Patches section and RFCs 6902 and 7396 alone
// (never from lib/): a JSON Patch applied operation by operation on a copy (the first failure leaves the content as
// it was, with its status and index), a merge patch applied as RFC 7396 says. Only well-formed documents are modelled
// (the multi-process suite sends no others); values follow the content rules already.
import { type Json, type JsonObject, clone, sameJson } from './model-reference';
import { LosslessNumber } from 'lossless-json';

export interface PatchOutcome {
  /** 200, or the status of the first operation that fails. */
  status: number;
  content: JsonObject;
  /** JSON Patch: the position of the first operation that fails. */
  index?: number;
}

/** One JSON Patch operation, as sent. */
export interface PatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  from?: string;
  value?: Json;
}

class Refused extends Error {
  constructor(readonly status: number) {
    super(String(status));
  }
}

const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof LosslessNumber);
const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/** A JSON Pointer's tokens (`~1` is `/`, `~0` is `~`). */
export const pointerTokens = (pointer: string): string[] =>
  pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
/** The JSON Pointer of these tokens. */
export const pointerOf = (tokens: readonly string[]): string =>
  tokens.map((t) => `/${t.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

/** The value at the tokens, or undefined. */
function at(root: Json, tokens: readonly string[]): Json | undefined {
  let node: Json | undefined = root;
  for (const t of tokens) {
    if (Array.isArray(node)) node = ARRAY_INDEX.test(t) ? node[Number(t)] : undefined;
    else if (isObject(node)) node = Object.hasOwn(node, t) ? node[t] : undefined;
    else return undefined;
  }
  return node;
}

/** The container that holds the last token (404 when it is missing, 400 under a scalar). */
function parentOf(root: JsonObject, tokens: readonly string[]): Json[] | JsonObject {
  const parent = at(root, tokens.slice(0, -1));
  if (parent === undefined) throw new Refused(404);
  if (!Array.isArray(parent) && !isObject(parent)) throw new Refused(400);
  return parent;
}

function remove(root: JsonObject, tokens: readonly string[]): Json {
  if (tokens.length === 0) throw new Refused(400);
  // RFC 6902: the location must exist. Under a scalar it does not: 404, as docs/batches-and-patches.md says (only
  // `add` under a scalar is a 400 NOT_A_CONTAINER).
  if (at(root, tokens) === undefined) throw new Refused(404);
  const parent = parentOf(root, tokens);
  const last = tokens[tokens.length - 1] as string;
  if (Array.isArray(parent)) {
    if (!ARRAY_INDEX.test(last) || Number(last) >= parent.length) throw new Refused(404);
    return parent.splice(Number(last), 1)[0] as Json;
  }
  if (!Object.hasOwn(parent, last)) throw new Refused(404);
  const old = parent[last] as Json;
  delete parent[last];
  return old;
}

function add(root: JsonObject, tokens: readonly string[], value: Json): JsonObject {
  if (tokens.length === 0) {
    if (!isObject(value)) throw new Refused(400);
    return value;
  }
  const parent = parentOf(root, tokens);
  const last = tokens[tokens.length - 1] as string;
  if (Array.isArray(parent)) {
    if (last === '-') parent.push(value);
    else if (!ARRAY_INDEX.test(last)) throw new Refused(400);
    else if (Number(last) > parent.length) throw new Refused(400);
    else parent.splice(Number(last), 0, value);
  } else parent[last] = value;
  return root;
}

/** A JSON Patch (RFC 6902) on the content: all or none. */
export function referenceJsonPatch(operations: readonly PatchOperation[], content: JsonObject): PatchOutcome {
  let doc = clone(content);
  for (const [index, operation] of operations.entries()) {
    try {
      const path = pointerTokens(operation.path);
      switch (operation.op) {
        case 'add':
          doc = add(doc, path, clone(operation.value as Json));
          break;
        case 'remove':
          remove(doc, path);
          break;
        case 'replace':
          if (at(doc, path) === undefined) throw new Refused(404);
          if (path.length === 0) doc = add(doc, path, clone(operation.value as Json));
          else {
            remove(doc, path);
            doc = add(doc, path, clone(operation.value as Json));
          }
          break;
        case 'move': {
          const from = pointerTokens(operation.from as string);
          if (at(doc, from) === undefined) throw new Refused(404);
          if (path.length > from.length && from.every((t, i) => t === path[i])) throw new Refused(400);
          const moved = remove(doc, from);
          doc = add(doc, path, moved);
          break;
        }
        case 'copy': {
          const found = at(doc, pointerTokens(operation.from as string));
          if (found === undefined) throw new Refused(404);
          doc = add(doc, path, clone(found));
          break;
        }
        case 'test': {
          const found = at(doc, path);
          if (found === undefined || !sameJson(found, operation.value)) throw new Refused(409);
          break;
        }
      }
    } catch (error) {
      if (error instanceof Refused) return { status: error.status, content, index };
      throw error;
    }
  }
  return { status: 200, content: sameJson(doc, content) ? content : doc };
}

/** RFC 7396: null removes a member, objects merge, anything else replaces. */
function merge(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = merge(out[k], v);
  }
  return out;
}

/** A merge patch (an object) on the content. */
export function referenceMergePatch(patch: JsonObject, content: JsonObject): PatchOutcome {
  const after = merge(content, patch) as JsonObject;
  return { status: 200, content: sameJson(after, content) ? content : after };
}
