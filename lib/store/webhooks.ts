// Webhooks, stored: a project's webhook items (`P#<p>` / `W#<id>`), their count in the head (`nw`) kept under its
// cap in the same transaction, the one Query that finds them for a change, and the record of dropped deliveries.
import { randomBytes } from 'node:crypto';
import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { MAX_WEBHOOKS_PER_PROJECT } from '../config/limits';
import { tableName } from '../config/env';
import { documents } from '../dynamo/client';
import { A } from '../schema/attributes';
import { type ProjectRef, WEBHOOK_PREFIX, itemKey, projectName, projectPk, webhookSk } from '../schema/items';
import { AccountError, headUpdate, refusedItems } from './accounts';

/** A webhook as the routes show it (never its secret, but where it is created). */
export interface Webhook {
  id: string;
  url: string;
  path: string | null;
  createdAt: string;
  /** Deliveries given up after 24 h of retries, and the last of them. */
  dropped: number;
  lastDropped: DroppedDelivery | null;
}

export interface DroppedDelivery {
  revision: string;
  attempts: number;
  /** The last attempt's answer: an HTTP status, or why there was none. */
  lastResult: string;
  at: string;
}

/** A webhook with its secret: what creating it answers once, and what the sender signs with. */
export interface StoredWebhook extends Webhook {
  secret: string;
  inc: string;
}

/** On disk: short attribute names beside the incarnation. */
const W = { url: 'u', path: 'pa', secret: 's', createdAt: 'c', dropped: 'dn', lastDropped: 'dl' } as const;

/** Standard Webhooks secrets: `whsec_` and the base64 of 32 random bytes (the spec asks 24 to 64). */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

function readWebhook(item: Record<string, unknown>): StoredWebhook {
  const last = item[W.lastDropped] as Partial<DroppedDelivery> | undefined;
  return {
    id: String(item.sk).slice(WEBHOOK_PREFIX.length),
    url: String(item[W.url] ?? ''),
    path: typeof item[W.path] === 'string' ? (item[W.path] as string) : null,
    createdAt: String(item[W.createdAt] ?? ''),
    secret: String(item[W.secret] ?? ''),
    inc: String(item[A.incarnation] ?? ''),
    dropped: Number(item[W.dropped] ?? 0),
    lastDropped:
      last && typeof last === 'object'
        ? {
            revision: String(last.revision ?? ''),
            attempts: Number(last.attempts ?? 0),
            lastResult: String(last.lastResult ?? ''),
            at: String(last.at ?? ''),
          }
        : null,
  };
}

/**
 * One transaction: the webhook item, and the head's webhook count under its cap while the project is the
 * incarnation read (heads older than webhooks have no count: none yet). LIMIT past the cap, NOT_FOUND when the
 * project went meanwhile.
 */
export async function createWebhook(
  project: ProjectRef,
  inc: string,
  options: { url: string; path: string | null },
): Promise<StoredWebhook> {
  const id = randomBytes(8).toString('hex');
  const secret = newWebhookSecret();
  const createdAt = new Date().toISOString();
  try {
    await documents.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName(),
              Item: {
                ...itemKey(projectPk(project), webhookSk(id)),
                [W.url]: options.url,
                ...(options.path === null ? {} : { [W.path]: options.path }),
                [W.secret]: secret,
                [W.createdAt]: createdAt,
                [A.incarnation]: inc,
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          headUpdate(
            project,
            inc,
            'SET #nw = if_not_exists(#nw, :zero) + :one',
            ' AND (attribute_not_exists(#nw) OR #nw < :cap)',
            { ':zero': 0, ':one': 1, ':cap': MAX_WEBHOOKS_PER_PROJECT },
          ),
        ],
      }),
    );
  } catch (error) {
    const refused = refusedItems(error);
    if (refused.includes(1)) {
      const { Item } = await documents.send(
        new GetCommand({ TableName: tableName(), Key: itemKey(projectPk(project)), ConsistentRead: true }),
      );
      if (!Item || Item[A.incarnation] !== inc)
        throw new AccountError('NOT_FOUND', `project ${projectName(project)} does not exist`);
      throw new AccountError('LIMIT', `a project may have at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks`);
    }
    if (refused.length > 0) throw new AccountError('EXISTS', 'webhook already exists');
    throw error;
  }
  return { id, ...options, secret, createdAt, inc, dropped: 0, lastDropped: null };
}

/** Every webhook of the project's incarnation `inc` (one Query, paginated), in creation order. */
export async function listWebhooks(project: ProjectRef | string, inc: string): Promise<StoredWebhook[]> {
  const pk = typeof project === 'string' ? `P#${project}` : projectPk(project);
  const found: StoredWebhook[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': WEBHOOK_PREFIX },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) if (item[A.incarnation] === inc) found.push(readWebhook(item));
    start = page.LastEvaluatedKey;
  } while (start);
  return found.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

/** One webhook with its secret, or undefined when it was deleted (or belongs to another incarnation). */
export async function readWebhookRecord(project: string, id: string, inc: string): Promise<StoredWebhook | undefined> {
  const { Item } = await documents.send(
    new GetCommand({ TableName: tableName(), Key: itemKey(`P#${project}`, webhookSk(id)), ConsistentRead: true }),
  );
  return Item && Item[A.incarnation] === inc ? readWebhook(Item) : undefined;
}

/** One transaction: the webhook goes and the head's count goes down. NOT_FOUND when the project has no such one. */
export async function deleteWebhook(project: ProjectRef, inc: string, id: string): Promise<void> {
  try {
    await documents.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Delete: {
              TableName: tableName(),
              Key: itemKey(projectPk(project), webhookSk(id)),
              ConditionExpression: '#inc = :inc',
              ExpressionAttributeNames: { '#inc': A.incarnation },
              ExpressionAttributeValues: { ':inc': inc },
            },
          },
          headUpdate(project, inc, 'SET #nw = #nw - :one', ' AND #nw > :zero', { ':one': 1, ':zero': 0 }),
        ],
      }),
    );
  } catch (error) {
    if (refusedItems(error).length > 0)
      throw new AccountError('NOT_FOUND', `webhook ${id} does not exist in ${projectName(project)}`);
    throw error;
  }
}

/** A delivery given up: the webhook's drop count and its last drop (nothing when the webhook is gone). */
export async function recordDroppedDelivery(project: string, id: string, drop: DroppedDelivery): Promise<void> {
  try {
    await documents.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: itemKey(`P#${project}`, webhookSk(id)),
        UpdateExpression: 'SET #dl = :drop ADD #dn :one',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#dl': W.lastDropped, '#dn': W.dropped },
        ExpressionAttributeValues: { ':drop': drop, ':one': 1 },
      }),
    );
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ConditionalCheckFailedException')) throw error;
  }
}
