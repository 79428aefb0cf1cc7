// Content handlers: the shared request flow of every content route (credential, project, validation, store call).
import { type Need, type Principal, assertAccess, resolvePrincipal } from '../auth/access';
import { parseAuthorization } from '../auth/credentials';
import type { Context } from 'aws-lambda';
import type { ContentOperation } from '../content/model';
import { parsePath, type Segments } from '../paths';
import { type ProjectRef, epochSeconds, isProjectRef, projectName } from '../store/items';
import { assertProjectAccess, readContent, writeContent } from '../store/content';
import { type Event, httpHandler } from './edge';
import { BadRequest } from './errors';
import { type Validator, schemaError, validated } from './validation';
import { bodyText, header, parseIfMatch, parseJsonObject } from './request';
import { parseIdempotencyKey, runIdempotently } from './idempotency';

/** The project named by the route; a name that cannot exist is a 404 once the credential is known to be good. */
export async function projectOf(event: Event, principal: Principal, need: Need): Promise<ProjectRef> {
  const username = event.pathParameters?.username;
  const slug = event.pathParameters?.projectSlug;
  const ref = { username: String(username), slug: String(slug) };
  if (!isProjectRef(username, slug)) await assertAccess(ref, undefined, principal, need, epochSeconds());
  return ref;
}

/** Resolves the caller and the project; 401 (no I/O for a missing credential) and the body envelope checks first. */
async function begin(event: Event, need: Need) {
  const credential = parseAuthorization(header(event, 'authorization'));
  const text = need === 'write' ? bodyText(event) : '';
  const principal = await resolvePrincipal(credential);
  const project = await projectOf(event, principal, need);
  return { text, principal, project };
}

/** Answer before Lambda's timeout: stop DynamoDB work with half a second to spare for the response. */
const deadlineOf = (context: Context) => Date.now() + Math.max(1000, context.getRemainingTimeInMillis() - 500);

export interface MutationSpec {
  validate: Validator;
  operation: (body: Record<string, unknown>) => ContentOperation;
  message: string;
}

export function contentMutation(spec: MutationSpec) {
  return httpHandler(async (event, context) => {
    const { text, principal, project } = await begin(event, 'write');
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
    const run = async () => {
      const { etag } = await writeContent({ deadline: deadlineOf(context), project, principal, op: input.op, ifMatch: input.ifMatch });
      return { statusCode: 200, body: { message: spec.message }, headers: { ETag: etag } };
    };
    if (input.idempotencyKey === undefined) return run();
    return runIdempotently(
      {
        project: projectName(project),
        authorization: header(event, 'authorization') as string,
        idempotencyKey: input.idempotencyKey,
        fingerprint: [event.routeKey, input.body, input.ifMatch ?? null],
      },
      context,
      run,
    );
  });
}

export function contentRead() {
  return httpHandler(async (event, context) => {
    const { principal, project } = await begin(event, 'read');
    const path = event.queryStringParameters?.path;
    const segments = validated<Segments | undefined>(() => (path === undefined ? undefined : parsePath(path)));
    if (segments instanceof BadRequest) {
      await assertProjectAccess(project, principal, 'read');
      throw segments;
    }
    const { value, etag } = await readContent({ deadline: deadlineOf(context), project, principal, segments });
    return { statusCode: 200, body: { value }, headers: { ETag: etag } };
  });
}

// schemaError moved to ./validation; re-exported for existing importers.
export { schemaError } from './validation';
