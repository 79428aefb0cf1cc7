// Local runtime: an in-process queue with what the webhook sender relies on from SQS FIFO: messages of a group in
// order, none received while one of its group is in flight, a visibility timeout, ChangeMessageVisibility, redelivery
// with a receive count, deduplication by id for 5 minutes. It drives the sender Lambda's own code.
import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { type DeliveryQueue, type QueuedMessage, setDeliveryQueue } from '../webhooks/queue';
import { handleDeliveries } from '../webhooks/sender';

interface Held {
  messageId: string;
  message: QueuedMessage;
  receiveCount: number;
  /** Set while received: the handle a visibility change names, and until when the message stays hidden. */
  receiptHandle?: string;
  hiddenUntil: number;
  sentAt: number;
}

const DEDUPLICATION_MS = 5 * 60_000;

/** An in-process queue with SQS FIFO's semantics, handing each group's batches to a handler as Lambda would. */
export class LocalFifoQueue implements DeliveryQueue {
  private readonly groups = new Map<string, Held[]>();
  private readonly seen = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private running = 0;
  private closed = false;
  private waiters: Array<() => void> = [];

  constructor(
    private readonly handler: (event: SQSEvent) => Promise<SQSBatchResponse>,
    private readonly options = { batchSize: 10, visibilityMs: 720_000 },
  ) {}

  async send(messages: readonly QueuedMessage[]): Promise<void> {
    const now = Date.now();
    for (const [id, until] of this.seen) if (until <= now) this.seen.delete(id);
    for (const message of messages) {
      if (this.seen.has(message.deduplicationId)) continue;
      this.seen.set(message.deduplicationId, now + DEDUPLICATION_MS);
      const group = this.groups.get(message.groupId) ?? [];
      group.push({ messageId: randomUUID(), message, receiveCount: 0, hiddenUntil: 0, sentAt: now });
      this.groups.set(message.groupId, group);
    }
    this.schedule(0);
  }

  async changeVisibility(receiptHandle: string, seconds: number): Promise<void> {
    for (const group of this.groups.values())
      for (const held of group)
        if (held.receiptHandle === receiptHandle) held.hiddenUntil = Date.now() + seconds * 1000;
  }

  /** Messages not yet deleted. */
  get size(): number {
    let n = 0;
    for (const group of this.groups.values()) n += group.length;
    return n;
  }

  /** Resolves once every message was deleted (delivered, dropped or gone). */
  idle(): Promise<void> {
    return this.size === 0 && this.running === 0 ? Promise.resolve() : new Promise((done) => this.waiters.push(done));
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.pump(), Math.max(0, delayMs));
    this.timer.unref();
  }

  /** Receives every group whose head is visible (one batch per group, as parallel Lambdas would), then waits. */
  private pump(): void {
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const group of this.groups.values()) {
      const head = group[0];
      if (!head) continue;
      // A group with a message in flight (received, still hidden) gives nothing.
      if (group.some((held) => held.receiptHandle !== undefined && held.hiddenUntil > now)) {
        next = Math.min(next, ...group.filter((h) => h.receiptHandle !== undefined).map((h) => h.hiddenUntil));
        continue;
      }
      void this.receive(group.slice(0, this.options.batchSize), now);
    }
    if (next !== Number.POSITIVE_INFINITY) this.schedule(next - now);
  }

  private async receive(batch: Held[], now: number): Promise<void> {
    this.running++;
    const records = batch.map((held): SQSRecord => {
      held.receiveCount++;
      held.receiptHandle = randomUUID();
      held.hiddenUntil = now + this.options.visibilityMs;
      return {
        messageId: held.messageId,
        receiptHandle: held.receiptHandle,
        body: held.message.body,
        attributes: {
          ApproximateReceiveCount: String(held.receiveCount),
          SentTimestamp: String(held.sentAt),
          SenderId: 'local',
          ApproximateFirstReceiveTimestamp: String(now),
          MessageGroupId: held.message.groupId,
          MessageDeduplicationId: held.message.deduplicationId,
        },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:local:000000000000:webhooks.fifo',
        awsRegion: 'local',
      };
    });
    let failed = new Set(records.map((r) => r.messageId));
    try {
      const { batchItemFailures } = await this.handler({ Records: records });
      failed = new Set(batchItemFailures.map((f) => f.itemIdentifier));
    } catch {
      // A crashed invocation: the whole batch comes back after its visibility timeout, as with Lambda.
    }
    for (const held of batch) {
      const group = this.groups.get(held.message.groupId) ?? [];
      if (!failed.has(held.messageId)) {
        group.splice(group.indexOf(held), 1);
        if (group.length === 0) this.groups.delete(held.message.groupId);
      }
    }
    this.running--;
    if (this.size === 0 && this.running === 0) for (const done of this.waiters.splice(0)) done();
    this.schedule(0);
  }
}

/** The local runtime's queue, driving the sender's code, in place of SQS for enqueueWebhookDeliveries. */
export function installLocalWebhookQueue(
  log?: Parameters<typeof handleDeliveries>[1],
  options?: { batchSize: number; visibilityMs: number },
): LocalFifoQueue {
  process.env.WEBHOOKS_ALLOW_LOOPBACK ??= 'true';
  const queue = new LocalFifoQueue((event) => handleDeliveries(event, log), options);
  setDeliveryQueue(queue);
  return queue;
}
