// The generated validators count string lengths in characters (code points), as JSON Schema and the OpenAPI document
// say, for every length-limited field of every schema; and the generated module is plain ESM (no require()).
import { statusOf } from '../../lib/config/error-codes';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { managementSchemas, requestSchemas } from '../../lib/http/schemas';
import { schemaError, type Validator } from '../../lib/http/validation';
import * as generated from '../../lib/http/validators.generated';

type PropertySchema = {
  type?: string;
  enum?: unknown[];
  items?: PropertySchema;
  minItems?: number;
  minLength?: number;
  maxLength?: number;
};
type BodySchema = { properties: Record<string, PropertySchema>; required: readonly string[] };

const SCHEMAS = { ...requestSchemas, ...managementSchemas } as unknown as Record<string, BodySchema>;
const validatorOf = (name: string) =>
  (generated as unknown as Record<string, Validator>)[`validate${name[0]!.toUpperCase()}${name.slice(1)}`]!;

/** A value the property accepts, so that only the field under test decides. */
function sampleOf(property: PropertySchema): unknown {
  if (property.enum) return property.enum[0];
  if (property.type === 'array')
    return Array.from({ length: property.minItems ?? 0 }, () => sampleOf(property.items ?? {}));
  if (property.type === 'string') return 'x'.repeat(property.minLength ?? 1);
  if (property.type === 'number' || property.type === 'integer') return 1;
  if (property.type === 'object') return {};
  return null;
}

const CHARACTERS: Array<[string, string]> = [
  ['ASCII', 'a'],
  ['two UTF-16 units (astral)', '\u{1F600}'],
  ['non-ASCII in the BMP', '\u00e9'],
  ['a combining mark (a character of its own)', '\u0301'],
];

const limited = Object.entries(SCHEMAS).flatMap(([schema, body]) =>
  Object.entries(body.properties)
    .filter(
      ([, property]) =>
        property.type === 'string' && (property.maxLength !== undefined || property.minLength !== undefined),
    )
    .map(([field, property]) => ({ schema, field, property, body })),
);

function verdict(
  { schema, field, body }: (typeof limited)[number],
  value: string,
): 'valid' | { statusCode: number; code: string } {
  const request = Object.fromEntries(body.required.map((name) => [name, sampleOf(body.properties[name]!)]));
  request[field] = value;
  const validate = validatorOf(schema);
  if (validate(request)) return 'valid';
  const error = schemaError(validate.errors);
  return { statusCode: statusOf(error.code), code: error.code };
}

describe('string lengths are counted in characters', () => {
  it('there is at least one length-limited string field (createKey.name)', () => {
    expect(limited.map(({ schema, field }) => `${schema}.${field}`)).toContain('createKey.name');
  });

  describe.each(limited.map((entry) => [`${entry.schema}.${entry.field}`, entry] as const))('%s', (_, entry) => {
    const { minLength, maxLength } = entry.property;

    it.each(CHARACTERS)(
      "%s: the limits hold in characters, and one character over is the field's 400",
      (__, character) => {
        if (maxLength !== undefined) {
          expect(verdict(entry, character.repeat(maxLength))).toBe('valid');
          expect(verdict(entry, character.repeat(maxLength + 1))).toEqual({
            statusCode: 400,
            code: expect.stringMatching(/^INVALID_[A-Z_]+$/),
          });
        }
        if (minLength !== undefined && minLength > 0) {
          expect(verdict(entry, character.repeat(minLength))).toBe('valid');
          expect(verdict(entry, character.repeat(minLength - 1))).toEqual({
            statusCode: 400,
            code: expect.stringMatching(/^INVALID_[A-Z_]+$/),
          });
        }
      },
    );
  });
});

describe('the generated validators module', () => {
  const source = readFileSync(join(__dirname, '..', '..', 'lib', 'http', 'validators.generated.ts'), 'utf8');

  it('is ESM without require() (a bundle has none; ajv emits one for its runtime helpers)', () => {
    expect(source.match(/\brequire\(/g)).toBeNull();
  });

  it('imports the runtime helper that counts characters', () => {
    expect(source).toContain('from "ajv/dist/runtime/ucs2length.js"');
  });
});
