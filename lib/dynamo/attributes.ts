// Attribute values: converts JSON content to DynamoDB AttributeValues and back without touching prototypes.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type Json, type JsonObject, LosslessNumber, Stub, isObject, jsonNumber, setOwn } from '../content/json';

// util-dynamodb builds maps with `acc[key] = ...`, which drops or rewires a `__proto__` key; content needs exact keys.
/** The DynamoDB attribute a JSON value is stored as (a stub as a binary). */
export function toAttribute(value: Json): AttributeValue {
  if (value === null) return { NULL: true };
  if (typeof value === 'boolean') return { BOOL: value };
  if (typeof value === 'number') return { N: String(value) };
  if (value instanceof LosslessNumber) return { N: value.value };
  if (typeof value === 'string') return { S: value };
  if (value instanceof Stub) return { B: Buffer.from(value.key, 'utf8') };
  if (Array.isArray(value)) return { L: value.map(toAttribute) };
  const map: Record<string, AttributeValue> = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(map, key, {
      value: toAttribute(value[key] as Json),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { M: map };
}

/** The JSON value a DynamoDB attribute holds (a binary as a stub); throws on a set. */
export function fromAttribute(attribute: AttributeValue): Json {
  if (attribute.S !== undefined) return attribute.S;
  // Exactly: a stored number a double cannot hold (DynamoDB keeps 38 digits) stays an exact decimal.
  if (attribute.N !== undefined) return jsonNumber(attribute.N);
  if (attribute.BOOL !== undefined) return attribute.BOOL;
  if (attribute.NULL !== undefined) return null;
  if (attribute.L !== undefined) return attribute.L.map(fromAttribute);
  if (attribute.M !== undefined) {
    const object: JsonObject = {};
    for (const key of Object.keys(attribute.M)) setOwn(object, key, fromAttribute(attribute.M[key] as AttributeValue));
    return object;
  }
  // A binary is a stub: where the content continues in another segment.
  if (attribute.B !== undefined) return new Stub(Buffer.from(attribute.B).toString('utf8'));
  // Sets are never written by this service.
  throw new Error('unsupported attribute type in content');
}

/** A whole DynamoDB item as a JSON object. */
export function fromItem(item: Record<string, AttributeValue>): JsonObject {
  return fromAttribute({ M: item }) as JsonObject;
}

export { isObject };
