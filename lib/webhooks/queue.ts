// Webhooks: the delivery queue, as the sender and the enqueuer use it: SQS FIFO in AWS (WEBHOOK_QUEUE_URL, set by
// serverless.yml), the local runtime's in-process queue with the same semantics under npm start and the tests
// (lib/local/webhook-queue.ts installs it).
import { ChangeMessageVisibilityCommand, SQSClient, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { requireEnv } from '../config/env';

export interface QueuedMessage {
  body: string;
  /** Messages of one group are delivered in order, one group never holding back another: the webhook's id. */
  groupId: string;
  /** A second message with the same id within 5 minutes is dropped: the webhook and the revision. */
  deduplicationId: string;
}

export interface DeliveryQueue {
  send(messages: readonly QueuedMessage[]): Promise<void>;
  /** Hides a received message for `seconds` more (its group waits behind it): the retry's backoff. */
  changeVisibility(receiptHandle: string, seconds: number): Promise<void>;
}

/** SQS takes at most 10 messages per SendMessageBatch. */
const BATCH = 10;
/** SQS's longest visibility timeout: 12 hours. */
const MAX_VISIBILITY_SECONDS = 12 * 3600;

/** The delivery queue in AWS: the SQS FIFO queue at WEBHOOK_QUEUE_URL. */
export class SqsDeliveryQueue implements DeliveryQueue {
  private readonly client = new SQSClient({});

  async send(messages: readonly QueuedMessage[]): Promise<void> {
    const url = requireEnv('WEBHOOK_QUEUE_URL');
    for (let start = 0; start < messages.length; start += BATCH) {
      const entries = messages.slice(start, start + BATCH).map((message, i) => ({
        Id: String(i),
        MessageBody: message.body,
        MessageGroupId: message.groupId,
        MessageDeduplicationId: message.deduplicationId,
      }));
      const { Failed } = await this.client.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
      // The caller (the Streams consumer) retries its whole batch; deduplication keeps the sent ones single.
      if (Failed && Failed.length > 0)
        throw new Error(`SQS refused ${Failed.length} webhook deliveries: ${Failed[0]?.Code ?? 'unknown'}`);
    }
  }

  async changeVisibility(receiptHandle: string, seconds: number): Promise<void> {
    await this.client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: requireEnv('WEBHOOK_QUEUE_URL'),
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.ceil(seconds))),
      }),
    );
  }
}

let installed: DeliveryQueue | undefined;

/** The queue the local runtime runs instead of SQS. */
export function setDeliveryQueue(queue: DeliveryQueue | undefined): void {
  installed = queue;
}

/** The delivery queue in use: the one installed, else SQS. */
export function deliveryQueue(): DeliveryQueue {
  installed ??= new SqsDeliveryQueue();
  return installed;
}
