// Request schemas: the one source for the ajv validators (compiled at build time) and the OpenAPI document.
import { MAX_EXPIRES_IN_SECONDS } from '../config/limits';

const path = {
  type: 'string',
  description: 'Dot-separated path; `\\.` is a literal dot, `\\\\` a literal backslash.',
  examples: ['data.items'],
};
const anyValue = { description: 'Any JSON value (null included).' };
const amount = { type: 'number', description: 'Amount; a finite number, default 1.', default: 1 };

const body = (properties: Record<string, object>, required: string[]) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

export const requestSchemas = {
  set: body({ path, value: anyValue }, ['path', 'value']),
  insert: body(
    {
      path,
      value: anyValue,
      index: { type: 'number', description: 'Zero-based integer index; negative counts from the end.' },
    },
    ['path', 'value', 'index'],
  ),
  push: body({ path, value: anyValue }, ['path', 'value']),
  decrement: body({ path, value: amount }, ['path']),
  increment: body({ path, value: amount }, ['path']),
  delete: body({ path }, ['path']),
  update: body({ content: { type: 'object', description: 'The whole new content (an object).' } }, ['content']),
} as const;

/** Management bodies (projects, API keys, members). */
export const managementSchemas = {
  createProject: body({}, []),
  createKey: body(
    {
      name: { type: 'string', minLength: 1, maxLength: 100, description: 'A label for the key.', examples: ['ci'] },
      permissions: {
        type: 'array',
        minItems: 1,
        maxItems: 10,
        items: { enum: ['content:read', 'content:write'] },
        description: 'content:read allows GET; content:write allows every mutation.',
      },
      expiresInSeconds: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_EXPIRES_IN_SECONDS,
        description: `Lifetime in whole seconds, 1 to ${MAX_EXPIRES_IN_SECONDS} (10 years); omit for a key that does not expire.`,
      },
    },
    ['name', 'permissions'],
  ),
  putMember: body({ role: { enum: ['viewer', 'editor'], description: 'viewer reads; editor reads and writes.' } }, [
    'role',
  ]),
} as const;
