// Webhooks: the one entry point of the Streams consumer: each committed change becomes one queued delivery per
// webhook of the project that it concerns, its changes cut to the webhook's path.
import { createHash } from 'node:crypto';
import { jsonText } from '../content/json';
import { listWebhooks } from '../store/webhooks';
import { type CommittedChange, changesFor } from './changes';
import { type QueuedMessage, deliveryQueue } from './queue';

/** What travels in the queue: the body as it is POSTed, and what the sender needs to find the secret. */
export interface DeliveryMessage {
  project: string;
  inc: string;
  webhook: string;
  revision: string;
  /** The delivery's id (`webhook-id`), the same on every attempt. */
  id: string;
  /** Epoch ms of the change's enqueueing: retries stop 24 h after it. */
  queuedAt: number;
  body: string;
}

/**
 * SQS holds 1 MiB per message, and the body travels escaped inside it (at most twice as long): a larger change is
 * delivered as `truncated`, telling the receiver to read the content (GET) instead.
 */
export const MAX_DELIVERY_BODY_BYTES = 400 * 1024;

/** A delivery's id: a digest of its webhook and revision, so a change queued twice has one id. */
export const deliveryId = (webhook: string, revision: string) =>
  `msg_${createHash('sha256').update(`${webhook}\n${revision}`).digest('base64url').slice(0, 32)}`;

/**
 * Finds the project's webhooks (one Query), keeps for each the changes at, under or above its path, and queues one
 * delivery per webhook with any left, grouped by webhook (in order per webhook) and deduplicated by webhook and
 * revision (a change handed over twice is delivered once). Returns how many deliveries were queued.
 */
export async function enqueueWebhookDeliveries(change: CommittedChange): Promise<number> {
  const webhooks = await listWebhooks(change.project, change.inc);
  const messages: QueuedMessage[] = [];
  const queuedAt = Date.now();
  for (const webhook of webhooks) {
    const changes = change.unread ? [] : changesFor(webhook.path, change.changes);
    if (changes.length === 0 && !change.unread) continue;
    let body = jsonText({ project: change.project, revision: change.revision, changes });
    // Too large to send, or not read at all (the whole content replaced): the receiver reads the content.
    if (change.unread || Buffer.byteLength(body) > MAX_DELIVERY_BODY_BYTES)
      body = JSON.stringify({ project: change.project, revision: change.revision, truncated: true });
    const id = deliveryId(webhook.id, change.revision);
    const message: DeliveryMessage = {
      project: change.project,
      inc: change.inc,
      webhook: webhook.id,
      revision: change.revision,
      id,
      queuedAt,
      body,
    };
    messages.push({ body: JSON.stringify(message), groupId: webhook.id, deduplicationId: id });
  }
  if (messages.length > 0) await deliveryQueue().send(messages);
  return messages.length;
}
