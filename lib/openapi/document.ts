// OpenAPI document: a pure function of the route table and the request schemas the ajv validators are built from.
import { MAX_BODY_BYTES, MAX_CONTENT_BYTES, MAX_DEPTH, MAX_PATH_LENGTH, MAX_RESPONSE_BYTES } from '../config/limits';
import { ERROR_CODES, type ErrorCode, STATUS_DESCRIPTIONS } from '../config/error-codes';
import { PATH_PARAMETERS, ROUTES, type RouteDoc, TAGS } from './routes';

type Json = Record<string, unknown>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: Json;
  servers: Json[];
  security: Json[];
  tags: Json[];
  paths: Record<string, Record<string, Json>>;
  components: Json;
}

/** The contract's own version: bump it when a route, body or response changes. */
export const API_VERSION = '0.1.0';

const DESCRIPTION = `A JSON content tree per project, read and changed through dot-separated paths.

**Credentials.** Every route takes \`Authorization: Bearer <credential>\`: a session token (\`csess_...\`, or a JWT from
the configured identity provider) or an API key (\`capi_...\`, permissions \`content:read\` and/or \`content:write\`).
Content routes take either; managing projects, keys and members needs a session. Locally, \`npm start\` prints a demo
project and its API key (\`npm run -s admin -- session create @demo\` makes a session): press **Authorize**, paste it,
fill in an operation's fields and press **Execute** (every operation is editable at once).

**Paths.** Segments are separated by \`.\`; \`\\.\` is a literal dot and \`\\\\\` a literal backslash. An integer segment
(\`0\`, \`-1\`) addresses an array element (negative counts from the end) and is an ordinary key on an object.

**Errors.** Every error is JSON \`{"message", "code"}\`: \`message\` is a sentence for people, \`code\` is stable for
programs. Checks run in this order: credential (401), project (404), access (403), request (400), operation.

**API Gateway's own answers.** Deployed, a few answers come from API Gateway itself, before or instead of the
service, and carry only \`{"message"}\` (no \`code\`; HTTP APIs cannot reshape them): 429 \`{"message":"Too Many
Requests"}\` when the stage's throttling (rate and burst per stage) refuses a request, with no \`Retry-After\` (retry
with exponential backoff and jitter); 404 \`{"message":"Not Found"}\` for a path or method no route serves; 500
\`{"message":"Internal Server Error"}\` when Lambda refuses the invocation (its concurrency throttled, say) and 502
with the same body when the function fails without answering (crash, timeout); 503 \`{"message":"Service
Unavailable"}\` when the integration times out; 413 \`{"message":"Request Entity Too Large"}\` for a body over API
Gateway's 10 MB. Clients should treat a 429, 500, 502 or 503 without \`code\` as retryable.

**Concurrency.** Every write gives the value it changed a new version, sent back as \`ETag\`; a \`GET\` answers the
version of the value it returns. A mutation with \`If-Match\` that no longer matches is a 412 and changes nothing. Retrying a mutation with the same \`Idempotency-Key\` returns the first
answer and applies it once.

**Limits.** Request body ${MAX_BODY_BYTES} bytes. Content has no size limit of its own (it is stored in segments); a
value that stays whole (a string, an array element, an array directly in an array) holds at most ${MAX_CONTENT_BYTES}
bytes as DynamoDB counts them; one \`GET\` answers at most ${MAX_RESPONSE_BYTES} bytes. ${MAX_DEPTH} levels of nesting
counting the root; paths of ${MAX_PATH_LENGTH} characters.`;

/** The fields that are set: the document must read the same in memory as after a JSON round trip. */
const defined = (fields: Json): Json => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
const json = (schema: unknown, extra: Json = {}) => ({ 'application/json': defined({ schema, ...extra }) });
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** Headers an error carries, by code, as the edge sets them (lib/http/edge.ts, refusalHeaders). */
const ERROR_HEADERS: Partial<Record<ErrorCode, string[]>> = {
  UNAUTHORIZED: ['WWW-Authenticate'],
  PRECONDITION_FAILED: ['ETag'],
  WRITE_CONFLICT: ['Retry-After'],
  IDEMPOTENCY_IN_PROGRESS: ['Retry-After'],
  SERVICE_UNAVAILABLE: ['Retry-After'],
};

/** One response per status, ascending, with one named example per code; INTERNAL_ERROR applies everywhere. */
function errorResponses(codes: readonly ErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set<ErrorCode>([...codes, 'INTERNAL_ERROR'])) {
    const { status } = ERROR_CODES[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, Json> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const examples: Record<string, Json> = {};
    const headers: Json = {};
    for (const code of byStatus.get(status) ?? []) {
      const { when, message } = ERROR_CODES[code];
      examples[code] = { summary: when, value: { message, code } };
      for (const name of ERROR_HEADERS[code] ?? []) headers[name] = ref('headers', name);
    }
    responses[String(status)] = {
      description: STATUS_DESCRIPTIONS[status] ?? 'Error',
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: json(ref('schemas', 'Error'), { examples }),
    };
  }
  return responses;
}

const pathParameterNames = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);

/**
 * An optional parameter shows its example in the description, never as `example`: swagger-ui pre-fills the value with
 * it and sends it, so an Execute would send `If-Match: "3f2a9c"` (a 412) or one fixed Idempotency-Key (a 422).
 */
function optionalParameterDoc(description: string, example: unknown): { description: string; example?: undefined } {
  return { description: example === undefined ? description : `${description} Example: \`${String(example)}\`.` };
}

function operation(route: RouteDoc): Json {
  const parameters: Json[] = pathParameterNames(route.path).map((name) => ref('parameters', name));
  for (const q of route.query ?? []) {
    const { description, example } = q.required ? q : optionalParameterDoc(q.description, q.example);
    parameters.push(
      defined({
        name: q.name,
        in: 'query',
        required: q.required,
        description,
        schema: structuredClone(q.schema),
        example,
      }),
    );
  }
  if (route.versioned === 'write') parameters.push(ref('parameters', 'If-Match'), ref('parameters', 'Idempotency-Key'));
  if (route.versioned === 'read') parameters.push(ref('parameters', 'If-None-Match'));
  const { success } = route;
  return {
    tags: [route.tag],
    summary: route.summary,
    description: route.description,
    operationId: route.operationId,
    ...(route.public ? { security: [] } : {}),
    parameters,
    ...(route.body
      ? {
          requestBody: {
            required: !route.body.optional,
            content: json(structuredClone(route.body.schema), { example: route.body.example }),
          },
        }
      : {}),
    ...(route.bodies
      ? {
          requestBody: {
            required: true,
            content: Object.fromEntries(
              Object.entries(route.bodies).map(([type, b]) => [
                type,
                { schema: structuredClone(b.schema), example: b.example },
              ]),
            ),
          },
        }
      : {}),
    responses: {
      [String(success.status)]: {
        description: success.description,
        ...(route.versioned ? { headers: { ETag: ref('headers', 'ETag') } } : {}),
        ...(success.schema ? { content: json(structuredClone(success.schema), { example: success.example }) } : {}),
      },
      ...(route.stamps ? { '202': stampingResponse(success) } : {}),
      ...(route.versioned === 'read'
        ? {
            '304': {
              description:
                'Not Modified: `If-None-Match` names the ETag this request would answer with. No body; `ETag` carries it. The value was read as for a 200 (same DynamoDB requests and capacity); only the transfer is saved.',
              headers: { ETag: ref('headers', 'ETag') },
            },
          }
        : {}),
      ...errorResponses(route.errors),
      // API Gateway's stage throttling, before any function runs: its own body, no code (HTTP APIs cannot change it).
      '429': {
        description:
          "Too Many Requests: API Gateway's stage throttling refused the request. API Gateway's own body, without `code` or `Retry-After`: retry with exponential backoff and jitter.",
        content: json(ref('schemas', 'GatewayError'), { example: { message: 'Too Many Requests' } }),
      },
    },
  };
}

/** The 202 of a change whose stamping its request could not finish: the success body with what is left. */
function stampingResponse(success: RouteDoc['success']): Json {
  const stamping = {
    type: 'object',
    required: ['pending', 'segmentsLeft', 'effectiveBy'],
    properties: {
      pending: { type: 'boolean', enum: [true] },
      segmentsLeft: {
        type: ['integer', 'null'],
        minimum: 1,
        description: 'Parts of the content known to remain; null when the request had not listed them all.',
      },
      effectiveBy: { type: 'string', format: 'date-time' },
    },
  };
  return {
    description:
      'Accepted: the change is stored and binds every caller verified from now on and every part of the content already stamped with it, but the request ran out of time stamping a large content (`segmentsLeft` parts remain; the sweeper finishes them). A credential verified before the change may still succeed on a part not yet stamped until `effectiveBy` (the change plus 60 s) at the latest.',
    content: json(
      {
        allOf: [
          structuredClone(success.schema ?? { type: 'object' }),
          { type: 'object', required: ['stamping'], properties: { stamping } },
        ],
      },
      {
        example: {
          ...(success.example as object),
          stamping: { pending: true, segmentsLeft: 36380, effectiveBy: '2026-11-27T09:01:00.000Z' },
        },
      },
    ),
  };
}

function components(routes: readonly RouteDoc[]): Json {
  const parameters: Record<string, Json> = {};
  for (const name of new Set(routes.flatMap((r) => pathParameterNames(r.path)))) {
    const doc = PATH_PARAMETERS[name];
    if (!doc) throw new Error(`path parameter {${name}} has no entry in PATH_PARAMETERS (lib/openapi/routes.ts)`);
    parameters[name] = { name, in: 'path', required: true, ...structuredClone(doc) };
  }
  parameters['If-Match'] = {
    name: 'If-Match',
    in: 'header',
    required: false,
    ...optionalParameterDoc(
      'Apply only if the value at the path is still at this version (an `ETag` from a GET of that path, or of the whole content for `update`); else 412. `*` or absent: always.',
      '"3f2a9c"',
    ),
    schema: { type: 'string' },
  };
  parameters['If-None-Match'] = {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    ...optionalParameterDoc(
      'Polling: answer 304 without a body when the ETag this GET would return is one of these (a comma-separated list of ETags, compared weakly so `W/` is ignored; `*`: whenever the value exists). The read costs what the 200 costs.',
      '"3f2a9c"',
    ),
    schema: { type: 'string' },
  };
  parameters['Idempotency-Key'] = {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    ...optionalParameterDoc(
      'A unique key per logical request (a UUID, say): for 24 hours, a retry with the same key, credential and project gets the first answer back (ETag included) and the mutation is applied once. The same key with a different request is a 422; errors are not remembered. A retry is checked like a new request first (a credential that lost access gets its 401/403, a deleted project its 404), and a project deleted and re-created under the same name never matches a key used before.',
      '5b0c3f2e-8d1a-4c55-9a7e-2f4e1d6c9b10',
    ),
    schema: { type: 'string', pattern: '^[!-~]{1,255}$' },
  };
  return {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description:
          'A session token (`csess_...`, or a JWT from the configured identity provider), for users of web and mobile apps; or an API key (`capi_...`), for pipelines. Sent as `Authorization: Bearer <credential>`. Managing projects, keys and members needs a session.',
      },
    },
    parameters,
    headers: {
      ETag: {
        description:
          "The version of the value read or written (strong entity tag): a GET answers the value's own, a mutation the new version of what it wrote.",
        schema: { type: 'string' },
        example: '"3f2a9c"',
      },
      'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' }, example: 1 },
      'WWW-Authenticate': {
        description: 'The scheme to authenticate with.',
        schema: { type: 'string' },
        example: 'Bearer',
      },
    },
    schemas: {
      Error: {
        type: 'object',
        description: 'Every error response.',
        properties: {
          message: { type: 'string', description: 'A sentence for people; may change.' },
          code: { type: 'string', description: "A stable code for programs (see each response's examples)." },
          index: {
            type: 'integer',
            minimum: 0,
            description:
              'content/batch and JSON Patch only: the position of the operation that failed (its error is the one it gets alone).',
          },
        },
        required: ['message', 'code'],
        additionalProperties: false,
      },
      GatewayError: {
        type: 'object',
        description:
          "API Gateway's own answers (429 throttling; 404 for an unserved route; 500/502/503 when the function cannot answer), deployed only: a message, no code.",
        properties: { message: { type: 'string', examples: ['Too Many Requests'] } },
        required: ['message'],
        additionalProperties: false,
      },
    },
  };
}

/** The OpenAPI 3.1 document of the routes: a fresh object every call, so callers may change it freely. */
export function buildOpenApiDocument(routes: readonly RouteDoc[] = ROUTES): OpenApiDocument {
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of routes) {
    const item = (paths[route.path] ??= {});
    const method = route.method.toLowerCase();
    if (item[method]) throw new Error(`${route.method} ${route.path} is in the route table twice`);
    item[method] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Content API',
      version: API_VERSION,
      description: DESCRIPTION,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      {
        url: '/',
        description:
          "The origin this document is served from: http://localhost:3000 under `npm start`; deployed, the HTTP API's URL (https://{api-id}.execute-api.{region}.amazonaws.com).",
      },
    ],
    security: [{ bearerAuth: [] }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name, description: TAGS[name] })),
    paths,
    components: components(routes),
  };
}
