// Webhooks, stored: a project's webhook items (`P#<p>` / `W#<id>`), their count in the head (`nw`) kept under its
// cap in the same transaction, and the one Query that finds them for a change.
import { randomBytes } from 'node:crypto';
import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { MAX_WEBHOOKS_PER_PROJECT } from '../config/limits';
import { tableName } from '../config/env';
import { documents } from '../dynamo/client';
import { A } from '../schema/attributes';
import {
  type ProjectRef,
  RECORD_ID,
  WEBHOOK_PREFIX,
  itemKey,
  projectName,
  projectPk,
  webhookSk,
} from '../schema/items';
import { AccountError, headUpdate, incarnationDelete, refusedItems } from './accounts';
import { type StoredWebhook, W, readWebhook } from './webhook-records';

export type { DroppedDelivery, StoredWebhook, Webhook } from './webhook-records';

/** Standard Webhooks secrets: `whsec_` and the base64 of 32 random bytes (the spec asks 24 to 64). */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

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

/** One transaction: the webhook goes and the head's count goes down. NOT_FOUND when the project has no such one. */
export async function deleteWebhook(project: ProjectRef, inc: string, id: string): Promise<void> {
  if (!RECORD_ID.test(id))
    throw new AccountError('NOT_FOUND', `no webhook of this form exists in ${projectName(project)}`);
  try {
    await documents.send(
      new TransactWriteCommand({
        TransactItems: [
          incarnationDelete(project, webhookSk(id), inc),
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
