// `validate` schemas: JSON Schema compiled with ajv once per rules version, after refusing what could make a
// client's schema cost unbounded time (regular expressions) or reach outside the document (remote references).
import type { default as Ajv, ValidateFunction } from 'ajv';
import type { Engines } from './load';

/** A schema may nest at most this deep. */
export const MAX_SCHEMA_DEPTH = 32;
/** Keywords refused in a rule's schema: regular expressions (no backtracking bound in JS) and outside references. */
const REFUSED_KEYWORDS = new Set(['pattern', 'patternProperties', '$dynamicRef', '$recursiveRef', 'format']);

/** Why a schema is refused, as a sentence; thrown by compileSchema. */
export class SchemaError extends Error {}

function inspect(schema: unknown, depth: number, at: string): void {
  if (depth > MAX_SCHEMA_DEPTH) throw new SchemaError(`schema nests deeper than ${MAX_SCHEMA_DEPTH} levels at ${at}`);
  if (Array.isArray(schema)) {
    for (const [i, item] of schema.entries()) inspect(item, depth + 1, `${at}/${i}`);
    return;
  }
  if (typeof schema !== 'object' || schema === null) return;
  for (const [key, value] of Object.entries(schema)) {
    if (REFUSED_KEYWORDS.has(key)) throw new SchemaError(`schema keyword '${key}' is not supported (at ${at})`);
    if (key === '$ref' && (typeof value !== 'string' || !value.startsWith('#'))) {
      throw new SchemaError(`schema $ref must point inside the schema ('#...') (at ${at})`);
    }
    inspect(value, depth + 1, `${at}/${key}`);
  }
}

/**
 * One ajv instance per rules version: an unknown keyword is refused (strictSchema), what is merely unusual in a
 * valid schema is not (required without properties), nothing is logged, no schema is kept beyond the version.
 */
export const schemaCompiler = (engines: Engines): Ajv =>
  new engines.Ajv({
    strictSchema: true,
    strictNumbers: true,
    strictRequired: false,
    strictTypes: false,
    strictTuples: false,
    allErrors: false,
    addUsedSchema: false,
    logger: false,
  });

/** Compiles a rule's schema; throws SchemaError saying what is wrong. */
export function compileSchema(ajv: Ajv, schema: unknown): ValidateFunction {
  if (typeof schema !== 'object' && typeof schema !== 'boolean')
    throw new SchemaError('validate must be a JSON Schema');
  if (schema === null || Array.isArray(schema)) throw new SchemaError('validate must be a JSON Schema object');
  inspect(schema, 0, '#');
  try {
    return ajv.compile(schema as object);
  } catch (error) {
    throw new SchemaError(`invalid schema: ${String((error as Error).message).slice(0, 200)}`);
  }
}

/** The first failure of a schema check, as the schema path and a sentence ("#/properties/name/type: must be string"). */
export function schemaFailure(validate: ValidateFunction): string {
  const error = validate.errors?.[0];
  if (!error) return 'is invalid';
  return `${error.schemaPath}${error.instancePath ? ` (at ${error.instancePath})` : ''}: ${error.message ?? 'is invalid'}`;
}
