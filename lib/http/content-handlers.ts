// Content mutations: the request flow of every content write (credential, project, validation, store call).
import type { BatchOperation } from '../content/batch';
import type { ContentOperation } from '../content/model';
import { projectName } from '../schema/items';
import { assertProjectAccess } from '../storage';
import { schemaView } from './batch';
import { type Event, httpHandler } from './edge';
import { type PatchMediaType, assertPatchType, patchMediaType, patchOperations } from './patch';
import { Refusal } from '../config/errors';
import { type Validator, schemaError, validated } from './validation';
import { parseIdempotencyKey, runIdempotently } from './idempotency';
import { header, parseIfMatch, parseJsonObject } from './request';
import { beginRequest } from './route-context';
import { hashSecret } from '../auth/credentials';
import { requestTouches } from '../rules/touches';
import { writeChecked } from './schema-guard';
import { newStamp } from '../realtime/history';

export interface MutationSpec {
  validate: Validator;
  /** One operation, or a batch of them (applied in order, all or none). */
  operation: (body: Record<string, unknown>) => ContentOperation | BatchOperation[];
  message: string;
}
/** The handler of a content write: a JSON body the route's schema validates, read into its operations. */
export function contentMutation(spec: MutationSpec) {
  return mutationHandler(spec.message, (text) => {
    const body = parseJsonObject(text);
    if (!spec.validate(schemaView(body))) throw schemaError(spec.validate.errors);
    return { body, op: spec.operation(body) };
  });
}

/** PATCH content: an RFC 6902 or RFC 7396 document (by Content-Type; 415 for any other), planned as a batch. */
export function contentPatch(message: string) {
  return mutationHandler(
    message,
    (text, event) => {
      const type = patchMediaType(header(event, 'content-type')) as PatchMediaType;
      const { body, ops } = patchOperations(text, type);
      // The media type is part of the request an Idempotency-Key names.
      return { body: [type, body], op: ops };
    },
    assertPatchType,
  );
}

/** The route a write came by, as the history names it: its path's last step (`PATCH content`: `patch`). */
export function operationOf(routeKey: string): string {
  const last = routeKey.slice(routeKey.lastIndexOf('/') + 1);
  return last === 'content' ? 'patch' : last;
}

/** What a write's body asks for: its operations, or (a restore) how to make them once access is verified. */
interface MutationInput {
  body: unknown;
  op: ContentOperation | BatchOperation[];
  /** Makes the operation to apply, from the project's incarnation (what `op` stands for: the paths it touches). */
  prepare?: (inc: string) => Promise<ContentOperation>;
}

/** POST content/restore: the path set to its value at a point in the history (or deleted), as one ordinary write. */
export function contentRestore(spec: {
  validate: Validator;
  read: (body: Record<string, unknown>) => MutationInput;
  message: string;
}) {
  return mutationHandler(spec.message, (text) => {
    const body = parseJsonObject(text);
    if (!spec.validate(schemaView(body))) throw schemaError(spec.validate.errors);
    return spec.read(body);
  });
}

/** The flow of every content write: credential and envelope, the body read into operations, If-Match, idempotency. */
function mutationHandler(
  message: string,
  read: (text: string, event: Event) => MutationInput,
  checkType?: (type: string | undefined) => void,
) {
  return httpHandler(async (event, context) => {
    const { text, principal: caller, project } = await beginRequest(event, 'write', checkType);
    const input = validated(() => {
      const { body, op, prepare } = read(text, event);
      const ifMatch = parseIfMatch(event);
      const idempotencyKey = parseIdempotencyKey(header(event, 'idempotency-key'));
      return { body, op, prepare, ifMatch, idempotencyKey };
    });
    if (input instanceof Refusal) {
      await assertProjectAccess(project, caller, 'write');
      throw input;
    }
    // Rules and scoped keys judge the request by every path it touches (all or none).
    const principal = { ...caller, scope: { touches: requestTouches(input.op) } };
    // Who and how, carried by the write's own segments into the history (docs/design/history.md, section 2).
    const stamp = newStamp(caller, operationOf(event.routeKey), input.idempotencyKey);
    const run = async (requestToken?: string) => {
      const write = { project, principal, ifMatch: input.ifMatch, requestToken, stamp };
      const op = input.prepare ? await input.prepare(await assertProjectAccess(project, principal, 'write')) : input.op;
      const { etag } = await writeChecked(write, op);
      return { statusCode: 200, body: { message }, headers: { ETag: etag } };
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
