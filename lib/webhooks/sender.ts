// Webhooks: the sender: POSTs each queued delivery, signed, to its webhook, in order per webhook; a failure hides the
// message for the next backoff (its group waits behind it) until 24 h have passed, then drops it with its attempts.
import http from 'node:http';
import https from 'node:https';
import { type LookupAddress, lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import ipaddr from 'ipaddr.js';
import { readWebhookRecord, recordDroppedDelivery } from '../store/webhook-records';
import type { DeliveryMessage } from './deliveries';
import { parseWebhookUrl, refusedAddress } from './destination';
import { deliveryQueue } from './queue';
import { signedHeaders } from './signature';
import { parseJsonText } from '../content/json';

/** A delivery attempt's whole time: connect, send, answer. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** First retry after 30 s, doubling to 1 h; retries stop 24 h after the change was queued. */
const FIRST_BACKOFF_SECONDS = 30;
const MAX_BACKOFF_SECONDS = 3600;
const RETRY_WINDOW_SECONDS = 24 * 3600;

/** Local runs scale the schedule down (tests: 0.001 turns 30 s into 30 ms); never set in AWS. */
const scale = () => Number(process.env.WEBHOOK_BACKOFF_SCALE ?? 1) || 1;

/** The backoff after the n-th failed attempt, in seconds: "equal jitter", half fixed, half random. */
export function backoffSeconds(attempt: number, random = Math.random): number {
  const step = Math.min(MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2 ** Math.max(0, attempt - 1));
  return (step / 2 + (random() * step) / 2) * scale();
}

/** How many seconds a message may keep failing after it was queued before it is dropped. */
export const retryWindowSeconds = () => RETRY_WINDOW_SECONDS * scale();

/**
 * Resolves like `dns.lookup`, then refuses the host unless every address may be reached, and hands the checked
 * addresses to the socket: the connection goes where the check looked, with no second resolution to rebind.
 */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const refused = addresses.find(({ address }) => refusedAddress(address) !== undefined);
    if (refused || addresses.length === 0) {
      const failure = Object.assign(new Error(`${hostname} resolves to ${refused?.address ?? 'nothing'}`), {
        code: 'FORBIDDEN_DESTINATION',
      });
      return callback(failure, '', 0);
    }
    if (options.all) return (callback as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
};

/** One POST: the status, or why there was none (never follows a redirect: a 3xx is a failure). */
export function post(url: string, headers: Record<string, string>, body: string): Promise<string> {
  let target: URL;
  try {
    target = parseWebhookUrl(url);
  } catch (error) {
    return Promise.resolve(`refused: ${(error as Error).message}`);
  }
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  if (ipaddr.isValid(host)) {
    const why = refusedAddress(host);
    if (why) return Promise.resolve(`refused: ${host} is ${why}`);
  }
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'content-api-webhooks', ...headers },
        lookup: guardedLookup,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      },
      // The status is the answer: the body is drained, never waited for (a receiver streaming forever is cut by the
      // timeout's abort).
      (response) => {
        resolve(String(response.statusCode));
        response.on('error', () => {});
        response.resume();
      },
    );
    request.on('error', (error: Error & { code?: string }) =>
      resolve(
        error.name === 'AbortError' || error.name === 'TimeoutError'
          ? 'timeout'
          : `error: ${error.code ?? error.message}`,
      ),
    );
    request.end(body);
  });
}

const delivered = (result: string) => /^2\d\d$/.test(result);

export interface DeliveryOutcome {
  messageId: string;
  webhook: string;
  revision: string;
  attempt: number;
  result: string;
  /** delivered; retry (hidden for the backoff); dropped (24 h of failures); gone (the webhook was deleted). */
  outcome: 'delivered' | 'retry' | 'dropped' | 'gone';
}

/** One record's attempt: the backoff before its retry, or undefined when it is done with (delivered, dropped, gone). */
async function deliverRecord(record: SQSRecord, outcomes: DeliveryOutcome[]): Promise<number | undefined> {
  const message = parseJsonText(record.body) as DeliveryMessage;
  const attempt = Number(record.attributes.ApproximateReceiveCount) || 1;
  const base = { messageId: record.messageId, webhook: message.webhook, revision: message.revision, attempt };
  const webhook = await readWebhookRecord(message.project, message.webhook, message.inc);
  if (!webhook) {
    outcomes.push({ ...base, result: 'webhook deleted', outcome: 'gone' });
    return undefined;
  }
  const result = await post(webhook.url, signedHeaders(webhook.secret, message.id, message.body), message.body);
  if (delivered(result)) {
    outcomes.push({ ...base, result, outcome: 'delivered' });
    return undefined;
  }
  if ((Date.now() - message.queuedAt) / 1000 >= retryWindowSeconds()) {
    await recordDroppedDelivery(message.project, message.webhook, {
      revision: message.revision,
      attempts: attempt,
      lastResult: result.slice(0, 200),
      at: new Date().toISOString(),
    });
    outcomes.push({ ...base, result, outcome: 'dropped' });
    return undefined;
  }
  outcomes.push({ ...base, result, outcome: 'retry' });
  return backoffSeconds(attempt);
}

/**
 * The sender Lambda's work on one batch (SQS FIFO, ReportBatchItemFailures): groups in parallel, each group's records
 * in order. The first record of a group that fails is hidden for its backoff and reported, with every later record
 * of its group (hidden as long, so they come back after it, in order); the rest are deleted by Lambda.
 */
export async function handleDeliveries(
  event: SQSEvent,
  log: (outcome: DeliveryOutcome) => void = () => {},
): Promise<SQSBatchResponse> {
  const groups = new Map<string, SQSRecord[]>();
  for (const record of event.Records) {
    const group = record.attributes.MessageGroupId ?? record.messageId;
    groups.set(group, [...(groups.get(group) ?? []), record]);
  }
  const failures: string[] = [];
  await Promise.all(
    [...groups.values()].map(async (records) => {
      for (let i = 0; i < records.length; i++) {
        const outcomes: DeliveryOutcome[] = [];
        let backoff: number | undefined;
        try {
          backoff = await deliverRecord(records[i]!, outcomes);
        } catch {
          // The table or the body failed us, not the receiver: try again after the first step.
          backoff = backoffSeconds(1);
        }
        for (const outcome of outcomes) log(outcome);
        if (backoff === undefined) continue;
        const queue = deliveryQueue();
        for (const held of records.slice(i)) {
          failures.push(held.messageId);
          await queue.changeVisibility(held.receiptHandle, backoff).catch(() => {});
        }
        return;
      }
    }),
  );
  return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
}
