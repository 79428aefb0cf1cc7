// SQS FIFO -> the webhook sender: delivers each queued change to its webhook, signed, in order per webhook; failures
// are reported (ReportBatchItemFailures) after hiding them for their backoff. Not an HTTP route.
import type { SQSEvent } from 'aws-lambda';
import { logger } from '../lib/config/logger';
import { handleDeliveries } from '../lib/webhooks/sender';

export const handler = (event: SQSEvent) =>
  handleDeliveries(event, (outcome) =>
    outcome.outcome === 'dropped'
      ? logger.error('webhook delivery dropped after 24 h of retries', { ...outcome })
      : logger.info('webhook delivery', { ...outcome }),
  );
