// The realtime protocol's client side of the socket: connect, disconnect, and each frame a client sends (README,
// Realtime). Answers go back as the route's response; `subscribed`, snapshots and changes come from the consumer.
import { logger } from '../config/logger';
import { randomBytes } from 'node:crypto';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { AccessProof, type Principal, refuseMissingProject, resolvePrincipal } from '../auth/access';
import { parseAuthorization } from '../auth/credentials';
import { tableName } from '../config/env';
import { Refusal, unavailable } from '../config/errors';
import { dynamo } from '../dynamo/client';
import { parsePath } from '../paths';
import { type ProjectRef, canonicalName, isProjectRef, itemKeyAttributes, sessionPk } from '../schema/items';
import type { ServerMessage } from './messages';
import { addSubscription, putConnection, removeConnection, removeSubscription } from './records';
import { parseJsonText } from '../content/json';

/** A client's frame at most: a subscribe message is a few hundred bytes (a JWT, a path of up to 2048 characters). */
export const MAX_CLIENT_MESSAGE_BYTES = 16 * 1024;

const SUBSCRIBE_FIELDS = new Set(['action', 'project', 'path', 'token', 'since', 'ref']);
const REVISION = /^\d{1,40}$/;
/** A client's name for a subscribe, echoed in its `subscribed` or `error` (short, so it cannot grow a record). */
const REF = /^[A-Za-z0-9_-]{1,64}$/;

const invalid = (message: string) => new Refusal('INVALID_MESSAGE', message);

/** `$connect`: records the new connection. */
export const onConnect = (connectionId: string) => putConnection(connectionId);
/** `$disconnect`: removes the connection and its subscriptions. */
export const onDisconnect = (connectionId: string) => removeConnection(connectionId);

/** When a credential stops being valid: a key's expiry (from its grant), a session's, a JWT's `exp`. */
async function expiryOf(credential: ReturnType<typeof parseAuthorization>, keyExpiry?: number) {
  if (credential.kind === 'key') return keyExpiry;
  if (credential.kind === 'jwt') {
    const payload = JSON.parse(Buffer.from(credential.token.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return typeof payload.exp === 'number' ? payload.exp : undefined;
  }
  const { Item } = await dynamo.send(
    new GetItemCommand({
      TableName: tableName(),
      Key: itemKeyAttributes(sessionPk(credential.tokenHash)),
      ConsistentRead: true,
      ProjectionExpression: '#ttl',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
    }),
  );
  return Item?.ttl?.N === undefined ? undefined : Number(Item.ttl.N);
}

/**
 * `subscribe`, checked in the HTTP order: the credential (401), the project (404), access (403), then the message's
 * own fields (400); then counted on the connection (409 past the limit) and written where the consumer meets it in
 * commit order.
 */
async function subscribe(connectionId: string, message: Record<string, unknown>): Promise<undefined> {
  // No token: nobody's subscription, which only the project's rules can allow (else the same 401).
  if (message.token !== undefined && typeof message.token !== 'string') throw parseAuthorization(undefined);
  const credential = message.token === undefined ? undefined : parseAuthorization(`Bearer ${message.token}`);
  const caller: Principal = credential === undefined ? { kind: 'anonymous' } : await resolvePrincipal(credential);
  // Rules and scoped keys allow a subscription as they allow a GET of its path (its 400 still comes after access).
  const wanted = (() => {
    try {
      return message.path === undefined ? [] : parsePath(message.path);
    } catch {
      return undefined;
    }
  })();
  const principal: Principal = wanted
    ? { ...caller, scope: { touches: [{ operation: 'read', path: wanted }] } }
    : caller;
  const name = typeof message.project === 'string' ? message.project : '';
  const slash = name.indexOf('/');
  const [username, slug] = slash < 0 ? [name, ''] : [name.slice(0, slash), name.slice(slash + 1)];
  if (!isProjectRef(username, slug)) await refuseMissingProject({ username, slug }, principal, 'read');
  const project: ProjectRef = { username: canonicalName(username), slug: canonicalName(slug) };
  const proof = await AccessProof.of(project, principal, 'read');
  // A subscription lives for hours: verified now, not from a warm cache.
  if (!proof.grant.fresh) await proof.renew();
  for (const field of Object.keys(message)) {
    if (!SUBSCRIBE_FIELDS.has(field)) throw new Refusal('UNKNOWN_FIELD', `unknown field '${field}'`);
  }
  const path = message.path === undefined ? [] : parsePath(message.path);
  if (message.ref !== undefined && (typeof message.ref !== 'string' || !REF.test(message.ref))) {
    throw invalid('ref must be 1 to 64 letters, digits, - or _');
  }
  const since = message.since;
  if (since !== undefined && (typeof since !== 'string' || !REVISION.test(since))) {
    throw invalid('since must be a revision the service sent');
  }
  const id = randomBytes(9).toString('base64url');
  await addSubscription({
    inc: proof.grant.inc,
    connectionId,
    id,
    path,
    project: `${project.username}/${project.slug}`,
    principal,
    expiresAt: credential === undefined ? undefined : await expiryOf(credential, proof.grant.expiresAt),
    since,
    ref: message.ref as string | undefined,
  });
  return undefined;
}

/** The error frame for a failed message; a subscribe's carries the `ref` it sent (when well formed). */
function errorFrame(error: unknown, ref: string | undefined): ServerMessage {
  const known = error instanceof Refusal ? error : unavailable(error);
  const named = ref === undefined ? {} : { ref };
  if (known) return { type: 'error', code: known.code, message: known.message, ...named };
  logger.error('realtime message failed', { error: String(error) });
  return { type: 'error', code: 'INTERNAL_ERROR', message: 'Internal server error', ...named };
}

/** One frame from a client: the answer to send back on the socket, if any. */
export async function onMessage(
  connectionId: string,
  body: string | undefined,
  isBase64Encoded = false,
): Promise<ServerMessage | undefined> {
  let ref: string | undefined;
  try {
    if (body === undefined || isBase64Encoded) throw invalid('a message is a JSON object in a text frame');
    if (Buffer.byteLength(body) > MAX_CLIENT_MESSAGE_BYTES) {
      throw new Refusal('MESSAGE_TOO_LARGE', `a realtime message must be at most ${MAX_CLIENT_MESSAGE_BYTES} bytes`);
    }
    let message: unknown;
    try {
      message = parseJsonText(body);
    } catch {
      throw invalid('the message is not valid JSON');
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      throw invalid('a message is a JSON object with an action');
    }
    const fields = message as Record<string, unknown>;
    if (fields.action === 'subscribe' && typeof fields.ref === 'string' && REF.test(fields.ref)) ref = fields.ref;
    switch (fields.action) {
      case 'ping':
        return { type: 'pong' };
      case 'subscribe':
        return await subscribe(connectionId, fields);
      case 'unsubscribe': {
        if (typeof fields.id !== 'string') throw invalid('unsubscribe needs the id of a subscription');
        await removeSubscription(connectionId, fields.id);
        return { type: 'unsubscribed', id: fields.id };
      }
      default:
        throw invalid(
          `unknown action ${JSON.stringify(String(fields.action)).slice(0, 80)}; use subscribe, unsubscribe or ping`,
        );
    }
  } catch (error) {
    return errorFrame(error, ref);
  }
}
