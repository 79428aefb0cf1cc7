// Route table of the management routes (projects, API keys, members), for the API docs. Sessions only.
import { managementSchemas } from '../http/schemas';
import { ACCESS_ERRORS, BODY_ERRORS, type RouteDoc, messageSchema } from './route-doc';

const PROJECT = '/api/{username}/{projectSlug}';

const object = (properties: Record<string, object>) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});
const string = { type: 'string' };
const time = { type: 'string', format: 'date-time' };
const role = { enum: ['viewer', 'editor'] };
const permissions = { type: 'array', items: { enum: ['content:read', 'content:write'] } };
const keyFields = {
  id: string,
  name: string,
  permissions,
  createdAt: time,
  expiresAt: { ...time, type: ['string', 'null'], description: 'null: never expires.' },
};
/** A key as shown: its fields, and `paths` for a scoped key only. */
const keyObject = (extra: Record<string, object> = {}) => {
  const shown = object({ ...keyFields, ...extra });
  return {
    ...shown,
    properties: {
      ...shown.properties,
      paths: { type: 'array', items: string, description: 'A scoped key only: the paths it is limited to.' },
    },
  };
};

const dropped = {
  type: ['object', 'null'],
  description: 'The last delivery given up after 24 h of retries; null when none was.',
  properties: { revision: string, attempts: { type: 'integer' }, lastResult: string, at: time },
  required: ['revision', 'attempts', 'lastResult', 'at'],
  additionalProperties: false,
};
const webhookFields = {
  id: string,
  url: string,
  path: { type: ['string', 'null'], description: 'Changes at, under or above it are delivered; null: all.' },
  createdAt: time,
};

export const MANAGEMENT_ROUTES: readonly RouteDoc[] = [
  {
    method: 'POST',
    path: PROJECT,
    operationId: 'createProject',
    tag: 'projects',
    summary: 'Create a project',
    description:
      'Creates an empty project (content `{}`) owned by the caller, who must be `{username}`. The body may be empty.',
    body: { schema: managementSchemas.createProject, example: {}, optional: true },
    success: {
      status: 201,
      description: 'Created.',
      schema: object({ username: string, projectSlug: string, createdAt: time }),
      example: { username: '@demo', projectSlug: 'site', createdAt: '2025-01-31T12:00:00.000Z' },
    },
    errors: ['UNAUTHORIZED', 'FORBIDDEN', 'INVALID_PROJECT_NAME', 'PROJECT_EXISTS', ...BODY_ERRORS],
  },
  {
    method: 'GET',
    path: PROJECT,
    operationId: 'getProject',
    tag: 'projects',
    summary: 'Get a project',
    description: "The project, with the caller's role. Any member.",
    success: {
      status: 200,
      description: 'The project.',
      schema: object({
        username: string,
        projectSlug: string,
        owner: string,
        role: { enum: ['owner', 'editor', 'viewer'] },
        createdAt: time,
      }),
      example: {
        username: '@demo',
        projectSlug: 'site',
        owner: '@demo',
        role: 'owner',
        createdAt: '2025-01-31T12:00:00.000Z',
      },
    },
    errors: ACCESS_ERRORS,
  },
  {
    method: 'DELETE',
    path: PROJECT,
    operationId: 'deleteProject',
    tag: 'projects',
    summary: 'Delete a project',
    description: 'Deletes the project with its content, API keys and memberships. Owner only.',
    success: {
      status: 200,
      description: 'Deleted.',
      schema: messageSchema,
      example: { message: 'Project deleted successfully' },
    },
    errors: ACCESS_ERRORS,
  },
  {
    method: 'POST',
    path: `${PROJECT}/keys`,
    operationId: 'createKey',
    tag: 'keys',
    summary: 'Create an API key',
    description:
      'A new API key for this project. Its secret (`key`) is shown in this response only: store it now. Owner only.',
    body: {
      schema: managementSchemas.createKey,
      example: { name: 'ci', permissions: ['content:read', 'content:write'], expiresInSeconds: 2592000 },
    },
    success: {
      status: 201,
      description: 'Created; `key` is the secret to send as `Authorization: Bearer <key>`.',
      schema: keyObject({ key: { type: 'string', description: 'The secret (`capi_...`); never shown again.' } }),
      example: {
        id: '0123456789abcdef',
        // Deliberately not a well-formed key, so secret scanners looking for `capi_` never flag the published docs.
        key: 'capi_0123456789abcdef_EXAMPLE-SECRET',
        name: 'ci',
        permissions: ['content:read', 'content:write'],
        createdAt: '2025-01-31T12:00:00.000Z',
        expiresAt: '2025-03-02T12:00:00.000Z',
      },
    },
    errors: [
      ...ACCESS_ERRORS,
      ...BODY_ERRORS,
      'INVALID_NAME',
      'INVALID_PERMISSIONS',
      'INVALID_EXPIRY',
      'INVALID_PATH',
      'PATH_TOO_DEEP',
      'RESERVED_KEY',
      'LIMIT_REACHED',
    ],
  },
  {
    method: 'GET',
    path: `${PROJECT}/keys`,
    operationId: 'listKeys',
    tag: 'keys',
    summary: 'List API keys',
    description: "The project's API keys, oldest first, without their secrets. Owner only.",
    success: {
      status: 200,
      description: 'The keys.',
      schema: object({ keys: { type: 'array', items: keyObject() } }),
      example: {
        keys: [
          {
            id: '0123456789abcdef',
            name: 'ci',
            permissions: ['content:read'],
            createdAt: '2025-01-31T12:00:00.000Z',
            expiresAt: null,
          },
        ],
      },
    },
    errors: ACCESS_ERRORS,
  },
  {
    method: 'DELETE',
    path: `${PROJECT}/keys/{id}`,
    operationId: 'revokeKey',
    tag: 'keys',
    summary: 'Revoke an API key',
    description:
      'Revokes the key at once: from now on it is a 401 (a 202 when stamping a large content outlasted the request: see the 202). Owner only.',
    stamps: true,
    success: {
      status: 200,
      description: 'Revoked.',
      schema: messageSchema,
      example: { message: 'API key revoked successfully' },
    },
    errors: [...ACCESS_ERRORS, 'KEY_NOT_FOUND'],
  },
  {
    method: 'GET',
    path: `${PROJECT}/members`,
    operationId: 'listMembers',
    tag: 'members',
    summary: 'List members',
    description: 'The owner, and the members with their roles (`viewer` reads, `editor` reads and writes). Owner only.',
    success: {
      status: 200,
      description: 'The owner and the members.',
      schema: object({ owner: string, members: { type: 'array', items: object({ username: string, role }) } }),
      example: { owner: '@demo', members: [{ username: '@bob', role: 'editor' }] },
    },
    errors: ACCESS_ERRORS,
  },
  {
    method: 'PUT',
    path: `${PROJECT}/members/{member}`,
    operationId: 'putMember',
    tag: 'members',
    summary: 'Add a member or change their role',
    description:
      'Makes an existing user a member with `role`, or changes their role. The owner cannot also be a member. Owner only.',
    body: { schema: managementSchemas.putMember, example: { role: 'editor' } },
    stamps: true,
    success: {
      status: 200,
      description: 'The membership.',
      schema: object({ member: string, role }),
      example: { member: '@bob', role: 'editor' },
    },
    errors: [...ACCESS_ERRORS, ...BODY_ERRORS, 'INVALID_ROLE', 'INVALID_MEMBER', 'USER_NOT_FOUND', 'LIMIT_REACHED'],
  },
  {
    method: 'DELETE',
    path: `${PROJECT}/members/{member}`,
    operationId: 'removeMember',
    tag: 'members',
    summary: 'Remove a member',
    description: 'Removes the member; their sessions lose access at once. Owner only.',
    stamps: true,
    success: {
      status: 200,
      description: 'Removed.',
      schema: messageSchema,
      example: { message: 'Member removed successfully' },
    },
    errors: [...ACCESS_ERRORS, 'MEMBER_NOT_FOUND'],
  },
  {
    method: 'POST',
    path: `${PROJECT}/webhooks`,
    operationId: 'createWebhook',
    tag: 'webhooks',
    summary: 'Create a webhook',
    description:
      'Every committed change at, under or above `path` is POSTed to `url` as `{"project","revision","changes"}`, signed with `secret` the Standard Webhooks way (`webhook-id`, `webhook-timestamp`, `webhook-signature`), retried with backoff for 24 h, in order per webhook. The URL must be https and resolve to public addresses only. At most 10 per project. Owner only.',
    body: {
      schema: managementSchemas.createWebhook,
      example: { url: 'https://hooks.example.com/content', path: 'data' },
    },
    success: {
      status: 201,
      description: 'Created; `secret` verifies the signatures and is never shown again.',
      schema: object({
        ...webhookFields,
        secret: { type: 'string', description: 'The signing secret (`whsec_<base64>`); never shown again.' },
      }),
      example: {
        id: '0123456789abcdef',
        url: 'https://hooks.example.com/content',
        path: 'data',
        secret: 'whsec_EXAMPLE-SECRET',
        createdAt: '2025-01-31T12:00:00.000Z',
      },
    },
    errors: [
      ...ACCESS_ERRORS,
      ...BODY_ERRORS,
      'INVALID_WEBHOOK_URL',
      'FORBIDDEN_DESTINATION',
      'INVALID_PATH',
      'PATH_TOO_DEEP',
      'RESERVED_KEY',
      'LIMIT_REACHED',
    ],
  },
  {
    method: 'GET',
    path: `${PROJECT}/webhooks`,
    operationId: 'listWebhooks',
    tag: 'webhooks',
    summary: 'List webhooks',
    description:
      "The project's webhooks, oldest first, without their secrets, with the deliveries dropped after 24 h of failures. Owner only.",
    success: {
      status: 200,
      description: 'The webhooks.',
      schema: object({
        webhooks: {
          type: 'array',
          items: object({ ...webhookFields, dropped: { type: 'integer' }, lastDropped: dropped }),
        },
      }),
      example: {
        webhooks: [
          {
            id: '0123456789abcdef',
            url: 'https://hooks.example.com/content',
            path: 'data',
            createdAt: '2025-01-31T12:00:00.000Z',
            dropped: 0,
            lastDropped: null,
          },
        ],
      },
    },
    errors: ACCESS_ERRORS,
  },
  {
    method: 'DELETE',
    path: `${PROJECT}/webhooks/{id}`,
    operationId: 'deleteWebhook',
    tag: 'webhooks',
    summary: 'Delete a webhook',
    description: 'Removes the webhook; deliveries still queued for it are not sent. Owner only.',
    success: { status: 204, description: 'Deleted; no body.' },
    errors: [...ACCESS_ERRORS, 'WEBHOOK_NOT_FOUND'],
  },
  {
    method: 'GET',
    path: `${PROJECT}/rules`,
    operationId: 'getRules',
    tag: 'rules',
    summary: 'Get the access rules',
    description:
      'The rules document and its version (0: none stored; the ETag is the version). Any member. Rules grant content access to callers without a role: requests without a credential and signed-in non-members (README, "Rules").',
    success: {
      status: 200,
      description: 'The rules and their version.',
      schema: {
        type: 'object',
        properties: {
          rules: { type: 'array', items: { type: 'object' } },
          allowPublicWrite: { type: 'boolean' },
          version: { type: 'integer' },
        },
        required: ['rules', 'version'],
        additionalProperties: false,
      },
      example: { rules: [{ match: 'public.**', read: 'true' }], version: 3 },
    },
    errors: ACCESS_ERRORS,
  },
  {
    method: 'PUT',
    path: `${PROJECT}/rules`,
    operationId: 'putRules',
    tag: 'rules',
    summary: 'Replace the access rules',
    description:
      'Replaces the rules (a new version; `If-Match: "<version>"` is honoured, 412 when it is not the current one). Each rule is `{"match", "read"?, "write"?, "validate"?}`: `match` a path where `{name}` captures a segment and a last `**` matches the path and below; `read`/`write` CEL conditions over `auth`, the captures, `path`, `now`, `data`, `newData`; `validate` a JSON Schema every write must leave valid. Invalid rules are a 400 `INVALID_RULES` naming `rules[i]`; nothing is stored. Takes effect on the very next request everywhere (a 202 when stamping a large content outlasted the request: see the 202). Owner only.',
    body: {
      schema: managementSchemas.putRules,
      example: {
        rules: [
          { match: 'public.**', read: 'true' },
          {
            match: 'users.{uid}.**',
            read: 'auth != null && auth.sub == uid',
            write: 'auth != null && auth.sub == uid',
          },
        ],
      },
    },
    stamps: true,
    success: {
      status: 200,
      description: 'The new version, and the rules that can never change a decision.',
      schema: object({ version: { type: 'integer' }, warnings: { type: 'array', items: string } }),
      example: { version: 4, warnings: [] },
    },
    errors: [...ACCESS_ERRORS, ...BODY_ERRORS, 'INVALID_RULES', 'INVALID_IF_MATCH', 'PRECONDITION_FAILED'],
  },
  {
    method: 'POST',
    path: `${PROJECT}/rules/test`,
    operationId: 'testRules',
    tag: 'rules',
    summary: 'Test the access rules',
    description:
      'Whether a caller (`auth`: null, a user with `username`/`sub`/`claims`, or a key with `permissions`/`paths`) may `read` or `write` at `path`, by the decision content requests use: on the stored rules, or on `rules` given (nothing stored). A user named by `username` has the role it holds. Owner only.',
    body: {
      schema: managementSchemas.testRules,
      example: { auth: { kind: 'user', sub: 'u1' }, operation: 'write', path: 'users.u1.notes' },
    },
    success: {
      status: 200,
      description: 'The verdict: allowed or not, the granting rule (its index) and why.',
      schema: object({ allowed: { type: 'boolean' }, rule: { type: ['integer', 'null'] }, reason: string }),
      example: { allowed: true, rule: 1, reason: 'rules[1] (users.{uid}.**) grants write' },
    },
    errors: [...ACCESS_ERRORS, ...BODY_ERRORS, 'INVALID_RULES', 'INVALID_PATH', 'PATH_TOO_DEEP', 'RESERVED_KEY'],
  },
];
