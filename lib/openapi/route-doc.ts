// Route descriptions for the API docs: what a route table entry holds, the tags, and the shared path parameters.
import { SLUG, USERNAME } from '../schema/items';
import type { ErrorCode } from '../config/error-codes';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The reference's sections, in order; a route names one. */
export const TAGS = {
  content: "Read and change a project's content through dot-separated paths.",
  projects: 'Create, read and delete projects. Sessions only: an API key gets 403.',
  keys: "A project's API keys (owner only). Sessions only: an API key gets 403.",
  members: "A project's members and their roles (owner only). Sessions only: an API key gets 403.",
  webhooks:
    "A project's webhooks (owner only): each committed change under a path is POSTed, signed the Standard Webhooks way. Sessions only: an API key gets 403.",
  rules:
    "A project's access rules on paths (the owner edits them, members read them): public reads, end users' own data, validated writes, and a tester. Sessions and JWTs only: an API key gets 403.",
} as const;

export interface QueryParameter {
  name: string;
  required: boolean;
  description: string;
  schema: object;
  example?: unknown;
}

export interface RouteDoc {
  method: Method;
  /** Exactly as in serverless.yml (`{name}` parameters); every name must be in PATH_PARAMETERS. */
  path: string;
  operationId: string;
  tag: keyof typeof TAGS;
  summary: string;
  description: string;
  /** The request body: `schema` is an object from lib/http/schemas.ts, the one the route's validator is built from. */
  body?: { schema: object; example: unknown; optional?: boolean };
  /** A body of other media types than JSON (PATCH), each with its schema (from lib/http/schemas.ts) and example. */
  bodies?: Record<string, { schema: object; example: unknown }>;
  query?: QueryParameter[];
  /** `write`: takes If-Match and Idempotency-Key and answers with the new ETag; `read`: answers with the ETag. */
  versioned?: 'read' | 'write';
  success: { status: number; description: string; schema?: object; example?: unknown };
  /**
   * A change that advances the grant epoch (a rules change, a revocation): answers 202, the success body with
   * `stamping`, when its request ran out of time stamping the content (docs/design/rules.md).
   */
  stamps?: boolean;
  /** The error codes this route can answer with (INTERNAL_ERROR is added to every route). */
  errors: readonly ErrorCode[];
  /** Routes without a credential (none yet) set this; everything else needs the bearer credential. */
  public?: boolean;
}

/** Path parameters by name: a new route's `{name}` needs an entry here once. */
export const PATH_PARAMETERS: Record<string, { description: string; schema: object; example: string }> = {
  username: {
    description: 'Username of the project owner; starts with `@`. Case-insensitive: kept and shown in lower case.',
    schema: { type: 'string', pattern: USERNAME.source },
    example: '@demo',
  },
  projectSlug: {
    description:
      'The project ID (slug) of the project. Case-insensitive: `Site` and `site` name one project, shown as `site`.',
    schema: { type: 'string', pattern: SLUG.source },
    example: 'site',
  },
  id: {
    description: 'The ID of the API key (as listed by GET keys), or of the webhook (as listed by GET webhooks).',
    schema: { type: 'string' },
    example: '0123456789abcdef',
  },
  session: {
    description: 'The id of an import session, as POST import answered it.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{16}$' },
    example: 'Zx3k9QpLmN0aBcDe',
  },
  member: {
    description: 'Username of the member; starts with `@`. Case-insensitive: kept and shown in lower case.',
    schema: { type: 'string', pattern: USERNAME.source },
    example: '@bob',
  },
};

/** The `{message}` success body. */
export const messageSchema = {
  type: 'object',
  properties: { message: { type: 'string' } },
  required: ['message'],
  additionalProperties: false,
};

/** Codes every project route shares: the credential (401), then the project (404), then the caller's access (403). */
export const ACCESS_ERRORS: ErrorCode[] = ['UNAUTHORIZED', 'PROJECT_NOT_FOUND', 'FORBIDDEN'];
/** Codes of every route that reads a JSON body: its size, type and shape. */
export const BODY_ERRORS: ErrorCode[] = [
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'INVALID_JSON',
  'INVALID_BODY',
  'UNKNOWN_FIELD',
];

/** Codes every content mutation shares: access, the body, If-Match, Idempotency-Key, concurrency, the content's size. */
export const MUTATION_ERRORS: ErrorCode[] = [
  ...ACCESS_ERRORS,
  ...BODY_ERRORS,
  'INVALID_IF_MATCH',
  'INVALID_IDEMPOTENCY_KEY',
  'PRECONDITION_FAILED',
  'WRITE_CONFLICT',
  'VALIDATION_FAILED',
  'IDEMPOTENCY_IN_PROGRESS',
  'IDEMPOTENCY_KEY_REUSED',
  'CONTENT_TOO_LARGE',
  'CHANGE_TOO_LARGE',
  'SERVICE_UNAVAILABLE',
];

/** Codes of a route that takes a content path. */
export const PATH_ERRORS: ErrorCode[] = ['INVALID_PATH', 'PATH_TOO_DEEP', 'RESERVED_KEY'];
