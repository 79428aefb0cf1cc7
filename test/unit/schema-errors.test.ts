import { statusOf } from '../../lib/config/error-codes';
import {
  validateDecrement,
  validateDelete,
  validateIncrement,
  validateInsert,
  validatePush,
  validateSet,
  validateUpdate,
} from '../../lib/http/validators.generated';
// schemaError is defined in validation.ts.
import { type Validator, schemaError } from '../../lib/http/validation';

const VALIDATORS: Record<string, Validator> = {
  set: validateSet,
  insert: validateInsert,
  push: validatePush,
  decrement: validateDecrement,
  increment: validateIncrement,
  delete: validateDelete,
  update: validateUpdate,
};

/** The 400 a body gets from the route's generated validator, or 'valid'. */
function verdict(route: string, body: unknown): { statusCode: number; code: string } | 'valid' {
  const validate = VALIDATORS[route] as Validator;
  if (validate(body)) return 'valid';
  const error = schemaError(validate.errors);
  return { statusCode: statusOf(error.code), code: error.code };
}

describe('generated validators accept the documented bodies', () => {
  it.each<[string, unknown]>([
    ['set', { path: 'a.b', value: 1 }],
    ['set', { path: 'a', value: null }],
    ['set', { path: 'a', value: { nested: [1, 'x'] } }],
    ['insert', { path: 'l', value: 'x', index: 0 }],
    ['insert', { path: 'l', value: null, index: -1 }],
    ['insert', { path: 'l', value: 1, index: 1.5 }], // the fraction is refused later, as INVALID_INDEX
    ['push', { path: 'l', value: [1] }],
    ['decrement', { path: 'n' }],
    ['decrement', { path: 'n', value: 2 }],
    ['increment', { path: 'n', value: -0.5 }],
    ['delete', { path: 'a' }],
    ['update', { content: {} }],
    ['update', { content: { a: [1] } }],
  ])('%s %j', (route, body) => {
    expect(verdict(route, body)).toBe('valid');
  });
});

describe('schemaError', () => {
  it.each<[string, string, unknown, string]>([
    // path
    ['a missing path', 'set', { value: 1 }, 'INVALID_PATH'],
    ['a missing path on delete', 'delete', {}, 'INVALID_PATH'],
    ['a missing path on increment', 'increment', { value: 1 }, 'INVALID_PATH'],
    ['a numeric path', 'push', { path: 1, value: 1 }, 'INVALID_PATH'],
    ['a null path', 'decrement', { path: null }, 'INVALID_PATH'],
    ['an array path', 'delete', { path: ['a'] }, 'INVALID_PATH'],
    ['an object path', 'insert', { path: { a: 1 }, value: 1, index: 0 }, 'INVALID_PATH'],
    // value
    ['a missing value on set', 'set', { path: 'a' }, 'MISSING_VALUE'],
    ['a missing value on push', 'push', { path: 'a' }, 'MISSING_VALUE'],
    ['a missing value on insert', 'insert', { path: 'a', index: 0 }, 'MISSING_VALUE'],
    ['a string amount', 'increment', { path: 'n', value: '1' }, 'INVALID_AMOUNT'],
    ['a null amount', 'decrement', { path: 'n', value: null }, 'INVALID_AMOUNT'],
    ['a boolean amount', 'increment', { path: 'n', value: true }, 'INVALID_AMOUNT'],
    ['an object amount', 'decrement', { path: 'n', value: { n: 1 } }, 'INVALID_AMOUNT'],
    // index
    ['a missing index', 'insert', { path: 'a', value: 1 }, 'INVALID_INDEX'],
    ['a string index', 'insert', { path: 'a', value: 1, index: '0' }, 'INVALID_INDEX'],
    ['a null index', 'insert', { path: 'a', value: 1, index: null }, 'INVALID_INDEX'],
    // content
    ['a missing content', 'update', {}, 'INVALID_CONTENT'],
    ['array content', 'update', { content: [] }, 'INVALID_CONTENT'],
    ['null content', 'update', { content: null }, 'INVALID_CONTENT'],
    ['string content', 'update', { content: '{}' }, 'INVALID_CONTENT'],
    // unknown fields
    ['an unknown field on set', 'set', { path: 'a', value: 1, extra: 1 }, 'UNKNOWN_FIELD'],
    ['an index on push', 'push', { path: 'a', value: 1, index: 0 }, 'UNKNOWN_FIELD'],
    ['a value on delete', 'delete', { path: 'a', value: 1 }, 'UNKNOWN_FIELD'],
    ['a path on update', 'update', { content: {}, path: 'a' }, 'UNKNOWN_FIELD'],
    ['a misspelt field', 'increment', { path: 'n', vaule: 1 }, 'UNKNOWN_FIELD'],
    ['a __proto__ field', 'set', JSON.parse('{"path":"a","value":1,"__proto__":{}}'), 'UNKNOWN_FIELD'],
    ['a constructor field', 'delete', { path: 'a', constructor: 1 }, 'UNKNOWN_FIELD'],
    // the body itself
    ['an array body', 'set', [], 'INVALID_BODY'],
    ['a null body', 'delete', null, 'INVALID_BODY'],
    ['a string body', 'update', 'x', 'INVALID_BODY'],
  ])('%s (%s) is a 400 %s', (_, route, body, code) => {
    expect(verdict(route, body)).toEqual({ statusCode: 400, code });
  });

  it.each<[string, Parameters<typeof schemaError>[0]]>([
    ['no errors', undefined],
    ['null', null],
    ['an empty list', []],
  ])('falls back to INVALID_BODY for %s', (_, errors) => {
    const error = schemaError(errors);
    expect({ statusCode: statusOf(error.code), code: error.code }).toEqual({ statusCode: 400, code: 'INVALID_BODY' });
  });
});
