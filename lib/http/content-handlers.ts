// Content mutations: the request flow of every content write (credential, project, validation, store call).
import { LosslessNumber } from '../content/json';
import type { ContentOperation } from '../content/model';
import { projectName } from '../schema/items';
import { assertProjectAccess, writeContent } from '../store/content';
import { httpHandler } from './edge';
import { BadRequest } from '../config/errors';
import { type Validator, schemaError, validated } from './validation';
import { parseIdempotencyKey, runIdempotently } from './idempotency';
import { header, parseIfMatch, parseJsonObject } from './request';
import { beginRequest } from './route-context';
import { hashSecret } from '../auth/credentials';

export interface MutationSpec {
  validate: Validator;
  operation: (body: Record<string, unknown>) => ContentOperation;
  message: string;
}

/** ajv tells a number by typeof: to the schema, an exact decimal (a number no double holds) is a number too. */
function schemaView(body: Record<string, unknown>): Record<string, unknown> {
  if (!Object.values(body).some((v) => v instanceof LosslessNumber)) return body;
  return Object.fromEntries(
    Object.entries(body).map(([k, v]) => [k, v instanceof LosslessNumber ? Number(v.value) : v]),
  );
}

export function contentMutation(spec: MutationSpec) {
  return httpHandler(async (event, context) => {
    const { text, principal, project } = await beginRequest(event, 'write');
    const input = validated(() => {
      const body = parseJsonObject(text);
      if (!spec.validate(schemaView(body))) throw schemaError(spec.validate.errors);
      const ifMatch = parseIfMatch(event);
      const idempotencyKey = parseIdempotencyKey(header(event, 'idempotency-key'));
      return { body, op: spec.operation(body), ifMatch, idempotencyKey };
    });
    if (input instanceof BadRequest) {
      await assertProjectAccess(project, principal, 'write');
      throw input;
    }
    const run = async (requestToken?: string) => {
      const { etag } = await writeContent({ project, principal, op: input.op, ifMatch: input.ifMatch, requestToken });
      return { statusCode: 200, body: { message: spec.message }, headers: { ETag: etag } };
    };
    if (input.idempotencyKey === undefined) return run();
    // A replay is answered from its record without writing, so no write's condition proves access: decide it first,
    // exactly as for a new request (401/404/403), and name the request within this incarnation of the project.
    const incarnation = await assertProjectAccess(project, principal, 'write');
    const named = {
      project: projectName(project),
      incarnation,
      authorization: header(event, 'authorization') as string,
      idempotencyKey: input.idempotencyKey,
      fingerprint: [event.routeKey, input.body, input.ifMatch ?? null],
    };
    // A named request writes with a token derived from its name, so a retry after a lost answer is recognised.
    const requestToken = hashSecret(JSON.stringify(named)).slice(0, 32);
    return runIdempotently(named, context, () => run(requestToken));
  });
}
