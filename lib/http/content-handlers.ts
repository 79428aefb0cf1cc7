// Content mutations: the request flow of every content write (credential, project, validation, store call).
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

export function contentMutation(spec: MutationSpec) {
  return httpHandler(async (event, context) => {
    const { text, principal, project } = await beginRequest(event, 'write');
    const input = validated(() => {
      const body = parseJsonObject(text);
      if (!spec.validate(body)) throw schemaError(spec.validate.errors);
      const ifMatch = parseIfMatch(event);
      const idempotencyKey = parseIdempotencyKey(header(event, 'idempotency-key'));
      return { body, op: spec.operation(body), ifMatch, idempotencyKey };
    });
    if (input instanceof BadRequest) {
      await assertProjectAccess(project, principal, 'write');
      throw input;
    }
    const named = input.idempotencyKey === undefined ? undefined : {
      project: projectName(project),
      authorization: header(event, 'authorization') as string,
      idempotencyKey: input.idempotencyKey,
      fingerprint: [event.routeKey, input.body, input.ifMatch ?? null],
    };
    // A named request writes with a token derived from its name, so a retry after a lost answer is recognised.
    const requestToken = named && hashSecret(JSON.stringify(named)).slice(0, 32);
    const run = async () => {
      const { etag } = await writeContent({ project, principal, op: input.op, ifMatch: input.ifMatch, requestToken });
      return { statusCode: 200, body: { message: spec.message }, headers: { ETag: etag } };
    };
    if (named === undefined) return run();
    return runIdempotently(named, context, run);
  });
}
