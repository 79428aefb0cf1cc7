// A small reference model of the content operations, written from /work/shared/spec/decisions.md and the README
// (Paths, Semantics, Values and limits) alone. It is the oracle of the property tests, so it must not share code
// with lib/: it takes a route and the raw request body, and answers the status the service must give and the
// content afterwards. Numbers are exact decimals (DynamoDB's): a number a double cannot hold is a LosslessNumber
// (its digits as written), arithmetic is big.js, and `sameJson` compares decimal values exactly.
import Big from 'big.js';
import { LosslessNumber } from 'lossless-json';

export type Json = null | boolean | number | LosslessNumber | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export type Route = 'set' | 'insert' | 'push' | 'increment' | 'decrement' | 'delete' | 'update' | 'get';

export interface Outcome {
  /** 200, 400 (anything the client sent wrong), or 404 (GET of a missing path). */
  status: 200 | 400 | 404;
  /** The content after the request: the same object when nothing changed. */
  content: JsonObject;
  /** GET: the value at the path (or the whole content). */
  value?: Json;
  /** Which rules of the model the request exercised (for coverage reports). */
  tags: string[];
}

let tags: string[] = [];
const tag = (t: string) => {
  if (!tags.includes(t)) tags.push(t);
};

/** decisions.md: at most 32 levels counting the root and the leaf values, so containers nest at most 31 deep. */
export const MAX_CONTAINER_LEVELS = 31;
export const MAX_PATH_CHARS = 2048;
export const MAX_KEY_CHARS = 1024;
const RESERVED = '__proto__';
/** An integer segment (no leading zeros, no -0, at most 15 digits). */
const INTEGER = /^(0|-?[1-9][0-9]{0,14})$/;

const FIELDS: Record<Exclude<Route, 'get'>, { allowed: string[]; required: string[] }> = {
  set: { allowed: ['path', 'value'], required: ['path', 'value'] },
  insert: { allowed: ['path', 'value', 'index'], required: ['path', 'value', 'index'] },
  push: { allowed: ['path', 'value'], required: ['path', 'value'] },
  increment: { allowed: ['path', 'value'], required: ['path'] },
  decrement: { allowed: ['path', 'value'], required: ['path'] },
  delete: { allowed: ['path'], required: ['path'] },
  update: { allowed: ['content'], required: ['content'] },
};

class ClientError extends Error {
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message);
  }
}
const bad = (why: string): never => {
  tag(`400 ${why}`);
  throw new ClientError(400, why);
};

const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof LosslessNumber);
export const isNumber = (v: unknown): v is number | LosslessNumber =>
  typeof v === 'number' || v instanceof LosslessNumber;
/** The exact decimal value of a number (a double: the decimal it prints as). */
export const decimal = (n: number | LosslessNumber): Big => new Big(typeof n === 'number' ? String(n) : n.value);
const own = (o: object, k: string) => Object.hasOwn(o, k);

/** Splits a dot path into segments, as decisions.md "Paths" describes; throws the 400s. */
export function parsePath(path: unknown): string[] {
  if (typeof path !== 'string') return bad('path is not a string');
  if (path === '') return bad('empty path');
  if (path.length > MAX_PATH_CHARS) return bad('path too long');
  const segments: string[] = [];
  let segment = '';
  for (let i = 0; i < path.length; i++) {
    const c = path.charAt(i);
    if (c === '\\') {
      const next = path.charAt(i + 1);
      if (next !== '.' && next !== '\\') return bad('invalid escape');
      segment += next;
      tag(next === '.' ? 'escaped dot' : 'escaped backslash');
      i++;
    } else if (c === '.') {
      segments.push(segment);
      segment = '';
    } else {
      segment += c;
    }
  }
  segments.push(segment);
  for (const s of segments) {
    if (s === '') bad('empty segment');
    if (s === RESERVED) bad('reserved segment');
    if (s.length > MAX_KEY_CHARS) bad('segment too long');
  }
  if (segments.length > MAX_CONTAINER_LEVELS) bad('path too deep');
  return segments;
}

/** Writes segments back as a path (the inverse of parsePath). */
export const formatPath = (segments: readonly string[]) =>
  segments.map((s) => s.replace(/\\/g, '\\\\').replace(/\./g, '\\.')).join('.');

export const integerSegment = (s: string): number | undefined => (INTEGER.test(s) ? Number(s) : undefined);

/** 0, or a magnitude in [1e-130, 1e126), with at most 38 significant digits: DynamoDB's numbers. */
export function storableNumber(n: number | LosslessNumber): boolean {
  if (typeof n === 'number' && !Number.isFinite(n)) return false;
  const d = decimal(n);
  return d.eq(0) || (d.abs().gte('1e-130') && d.abs().lt('1e126') && d.c.length <= 38);
}

/** Container levels of a value: 0 for a scalar, 1 for an empty array or object. */
export function levels(v: Json): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(levels));
  if (isObject(v)) return 1 + Math.max(0, ...Object.keys(v).map((k) => levels(v[k] as Json)));
  return 0;
}

/** Keys non-empty, not __proto__, not too long; numbers storable; nothing but JSON. */
function checkValue(v: unknown): void {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (isNumber(v)) {
    if (!storableNumber(v)) bad('number out of range or over 38 digits');
    return;
  }
  if (Array.isArray(v)) return v.forEach(checkValue);
  if (!isObject(v)) return bad('not JSON');
  for (const k of Object.keys(v)) {
    if (k === '' || k === RESERVED || k.length > MAX_KEY_CHARS) bad('bad key');
    checkValue(v[k]);
  }
}

/** A value stored under a path of `depthAbove` segments (the root and those containers sit above it). */
function checkStored(v: unknown, depthAbove: number): void {
  checkValue(v);
  if (depthAbove + levels(v as Json) > MAX_CONTAINER_LEVELS) bad('too deep');
}

export function clone<T extends Json>(v: T): T {
  if (Array.isArray(v)) return v.map((x) => clone(x)) as T;
  if (isObject(v)) {
    const out: JsonObject = {};
    for (const k of Object.keys(v))
      Object.defineProperty(out, k, {
        value: clone(v[k] as Json),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return out as T;
  }
  return v;
}

function put(container: JsonObject | Json[], key: string | number, value: Json): void {
  if (Array.isArray(container)) container[key as number] = value;
  else Object.defineProperty(container, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Builds `{a: {b: value}}` for the segments still missing below a created parent: created parents are objects. */
function nested(rest: readonly string[], value: Json): Json {
  let out = value;
  for (let i = rest.length - 1; i >= 0; i--) {
    const o: JsonObject = {};
    put(o, rest[i] as string, out);
    out = o;
  }
  return out;
}

type Place =
  | { found: true; parent: JsonObject | Json[]; key: string | number; node: Json }
  | { found: false; parent: JsonObject | Json[]; key: string | number; rest: string[] };

/**
 * Follows the path for a write. An array takes only integer segments (negative from the end; index == length is
 * the place where a new element would go; beyond is a 400); an object takes every segment as a key; going through
 * a scalar is a 400. The root is an object, so the first segment is always a key.
 */
function placeForWrite(root: JsonObject, segments: readonly string[]): Place {
  let node: Json = root;
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i] as string;
    const last = i === segments.length - 1;
    if (Array.isArray(node)) {
      const index = integerSegment(s);
      if (index === undefined) return bad('key on an array');
      const position = index < 0 ? node.length + index : index;
      if (index < 0) tag('negative index');
      if (position >= 0 && position < node.length) {
        if (last) return { found: true, parent: node, key: position, node: node[position] as Json };
        node = node[position] as Json;
        continue;
      }
      if (index === node.length) {
        tag(last ? 'index == length (append)' : 'index == length (append, parents created)');
        return { found: false, parent: node, key: node.length, rest: segments.slice(i + 1) };
      }
      return bad('index out of range');
    }
    if (isObject(node)) {
      if (i > 0 && integerSegment(s) !== undefined) tag('integer segment as an object key');
      if (own(node, s)) {
        if (last) return { found: true, parent: node, key: s, node: node[s] as Json };
        node = node[s] as Json;
        continue;
      }
      if (!last) tag('missing parents created');
      return { found: false, parent: node, key: s, rest: segments.slice(i + 1) };
    }
    return bad('through a scalar');
  }
  return bad('unreachable');
}

/** Follows the path for a read or a delete: undefined when nothing is there (missing, out of range, wrong kind). */
function placeForRead(
  root: JsonObject,
  segments: readonly string[],
): { parent: JsonObject | Json[]; key: string | number; node: Json } | undefined {
  let parent: JsonObject | Json[] | undefined;
  let key: string | number = '';
  let node: Json = root;
  for (const s of segments) {
    if (Array.isArray(node)) {
      const index = integerSegment(s);
      if (index === undefined) return undefined;
      const position = index < 0 ? node.length + index : index;
      if (position < 0 || position >= node.length) return undefined;
      parent = node;
      key = position;
      node = node[position] as Json;
    } else if (isObject(node)) {
      if (!own(node, s)) return undefined;
      parent = node;
      key = s;
      node = node[s] as Json;
    } else {
      return undefined;
    }
  }
  return parent === undefined ? undefined : { parent, key, node };
}

/** Applies a change to a copy: `change` gets the copy's place for the path. */
function onCopy(content: JsonObject, segments: readonly string[], change: (place: Place) => void): JsonObject {
  const copy = clone(content);
  change(placeForWrite(copy, segments));
  return copy;
}

function checkFields(route: Exclude<Route, 'get'>, body: unknown): Record<string, unknown> {
  if (!isObject(body)) return bad('body is not an object');
  const { allowed, required } = FIELDS[route];
  for (const k of Object.keys(body)) if (!allowed.includes(k)) bad(`unknown field ${k}`);
  for (const k of required) if (!own(body, k)) bad(`missing ${k}`);
  return body;
}

function amountOf(body: Record<string, unknown>): Big {
  const amount = own(body, 'value') ? body.value : 1;
  if (!isNumber(amount) || !storableNumber(amount)) return bad('invalid amount');
  return decimal(amount);
}

function mutate(route: Exclude<Route, 'get'>, raw: unknown, content: JsonObject): JsonObject {
  const body = checkFields(route, raw);
  if (route === 'update') {
    if (!isObject(body.content)) return bad('content is not an object');
    checkStored(body.content, 0);
    return clone(body.content);
  }
  const segments = parsePath(body.path);
  switch (route) {
    case 'set': {
      checkStored(body.value, segments.length);
      const value = body.value as Json;
      return onCopy(content, segments, (p) => {
        if (p.found && Array.isArray(p.parent)) tag('array element replaced');
        put(p.parent, p.key, p.found ? clone(value) : nested(p.rest, clone(value)));
      });
    }
    case 'push': {
      checkStored([body.value as Json], segments.length);
      const value = body.value as Json;
      return onCopy(content, segments, (p) => {
        if (!p.found) return put(p.parent, p.key, nested(p.rest, [clone(value)]));
        if (!Array.isArray(p.node)) bad('push on a non-array');
        tag('pushed onto an array');
        (p.node as Json[]).push(clone(value));
      });
    }
    case 'insert': {
      const index = body.index;
      if (typeof index !== 'number' || !Number.isSafeInteger(index)) return bad('index not an integer');
      checkStored([body.value as Json], segments.length);
      const value = body.value as Json;
      return onCopy(content, segments, (p) => {
        if (!p.found) {
          if (index !== 0) bad('insert into a missing array at an index other than 0');
          return put(p.parent, p.key, nested(p.rest, [clone(value)]));
        }
        if (!Array.isArray(p.node)) return bad('insert into a non-array');
        const list = p.node;
        if (index < -list.length || index > list.length) bad('insert index out of range');
        tag(index < 0 ? 'inserted at a negative index' : index === list.length ? 'inserted at the end' : 'inserted');
        list.splice(index < 0 ? list.length + index : index, 0, clone(value));
      });
    }
    case 'increment':
    case 'decrement': {
      const amount = route === 'increment' ? amountOf(body) : amountOf(body).neg();
      return onCopy(content, segments, (p) => {
        if (!p.found) return put(p.parent, p.key, nested(p.rest, new LosslessNumber(amount.toString())));
        if (!isNumber(p.node)) return bad('arithmetic on a non-number');
        if (p.node instanceof LosslessNumber || decimal(p.node).c.length > 15) tag('exact decimal arithmetic');
        const sum = new LosslessNumber(decimal(p.node).plus(amount).toString());
        if (!storableNumber(sum)) bad('result out of range or over 38 digits');
        if (Array.isArray(p.parent)) tag('arithmetic on an array element');
        put(p.parent, p.key, sum);
      });
    }
    case 'delete': {
      const at = placeForRead(content, segments);
      if (at === undefined) return content;
      const copy = clone(content);
      const again = placeForRead(copy, segments)!;
      if (Array.isArray(again.parent)) tag('array element deleted');
      if (Array.isArray(again.parent)) again.parent.splice(again.key as number, 1);
      else delete again.parent[again.key as string];
      return copy;
    }
  }
}

/** What the service must answer to `route` with this body (for `get`: `{path?: string}`), and the content after. */
export function reference(route: Route, body: unknown, content: JsonObject): Outcome {
  tags = [];
  try {
    if (route === 'get') {
      const path = (body as { path?: unknown } | undefined)?.path;
      if (path === undefined) return { status: 200, content, value: content, tags };
      const segments = parsePath(path);
      if (segments.slice(1).some((s) => integerSegment(s) !== undefined && integerSegment(s)! < 0))
        tag('negative index');
      const at = placeForRead(content, segments);
      if (at === undefined) throw new ClientError(404, 'nothing at the path');
      return { status: 200, content, value: at.node, tags };
    }
    const after = mutate(route, body, content);
    if (after === content) tag('no change');
    return { status: 200, content: after, tags };
  } catch (error) {
    if (error instanceof ClientError) return { status: error.status, content, tags };
    throw error;
  }
}

/** Deep equality of JSON values, object key order ignored, numbers equal as exact decimals. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (isNumber(a) && isNumber(b)) return decimal(a).eq(decimal(b));
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameJson(a[k], b[k]));
  }
  return a === b;
}

export interface BatchOutcome {
  /** 200, or the status of the first operation that fails (409 for a test that does not hold). */
  status: number;
  /** The content after the batch: the one before it when any operation fails. */
  content: JsonObject;
  /** The position of the first operation that fails. */
  index?: number;
  tags: string[];
}

/**
 * A batch (issue 15): each operation applied by its own route's model, one by one, on the content the ones before it
 * left; a test holds when a GET of its path gives `value` (sameJson) or, for `exists`, when it finds something or
 * not. The first failure leaves the content as it was before the batch.
 */
export function referenceBatch(operations: ReadonlyArray<Record<string, unknown>>, content: JsonObject): BatchOutcome {
  let current = content;
  const seen: string[] = [];
  for (const [index, { op, ...body }] of operations.entries()) {
    let out: { status: number; content: JsonObject; tags: string[] };
    if (!['set', 'insert', 'push', 'increment', 'decrement', 'delete', 'test'].includes(op as string)) {
      out = { status: 400, content: current, tags: ['not a batch operation'] };
    } else if (op === 'test' && ('value' in body === 'exists' in body || typeof body.path !== 'string')) {
      out = { status: 400, content: current, tags: ['test without value or exists'] };
    } else if (op === 'test') {
      const read = reference('get', { path: body.path }, current);
      const found = read.status === 200;
      const holds = 'exists' in body ? found === body.exists : found && sameJson(read.value, body.value);
      out = { status: read.status === 400 ? 400 : holds ? 200 : 409, content: current, tags: ['test'] };
    } else {
      out = reference(op as Route, body, current);
    }
    for (const t of out.tags) if (!seen.includes(t)) seen.push(t);
    if (out.status !== 200) return { status: out.status, content, index, tags: [...seen, 'batch failed'] };
    current = out.content;
  }
  return { status: 200, content: current, tags: [...seen, 'batch applied'] };
}
