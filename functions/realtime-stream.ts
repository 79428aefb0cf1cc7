// The table's DynamoDB stream: every committed change to its subscribers (and the change log, and the hooks: each
// change's webhook deliveries are queued before its subscribers are sent it).
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { consume } from '../lib/realtime/consumer';
import { onCommittedChange } from '../lib/realtime/hooks';
import { enqueueWebhookDeliveries } from '../lib/webhooks/deliveries';

onCommittedChange.push(async (change) => {
  // A root made without its project's name (a creation cut short, re-made by a write) has no webhooks to find.
  if (change.project !== undefined) await enqueueWebhookDeliveries({ ...change, project: change.project });
});

/** A partial batch response (ReportBatchItemFailures) when a commit at the batch's end is left for the next one. */
export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const { deferred } = await consume(event.Records);
  return { batchItemFailures: deferred === undefined ? [] : [{ itemIdentifier: deferred }] };
};
