// Webhook records: a webhook item as the service reads it, and what the sender reads and writes on it (its secret,
// a dropped delivery). Apart from lib/store/webhooks.ts so that the sender bundles no Query or transaction.
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tableName } from '../config/env';
import { documents } from '../dynamo/client';
import { A } from '../schema/attributes';
import { WEBHOOK_PREFIX, itemKey, webhookSk } from '../schema/items';

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
export const W = { url: 'u', path: 'pa', secret: 's', createdAt: 'c', dropped: 'dn', lastDropped: 'dl' } as const;

/** A webhook as its item holds it, its secret included. */
export function readWebhook(item: Record<string, unknown>): StoredWebhook {
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

/** One webhook with its secret, or undefined when it was deleted (or belongs to another incarnation). */
export async function readWebhookRecord(project: string, id: string, inc: string): Promise<StoredWebhook | undefined> {
  const { Item } = await documents.send(
    new GetCommand({ TableName: tableName(), Key: itemKey(`P#${project}`, webhookSk(id)), ConsistentRead: true }),
  );
  return Item && Item[A.incarnation] === inc ? readWebhook(Item) : undefined;
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
