// One write to one segment: an UpdateItem (or, for a named request, a transaction with its record), and what
// DynamoDB's refusals mean (docs/design/storage.md §8a).
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  TransactWriteItemsCommand,
  TransactionCanceledException,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { tableName } from '../../config/env';
import { dynamo } from '../../dynamo/client';
import { type UpdateRequest, isAssumptionRefused } from '../../expressions';
import { getSegment } from './read';
import { segmentItemKey } from '../segment';
import { type RequestRecord, recordPut, recordedBefore } from '../request-records';
import { Refusal } from '../../config/errors';

import { contentTooLarge } from '../refusals';

/** DynamoDB refused a write for the item's size (past 400 KB). */
const isItemTooLarge = (error: unknown) =>
  error instanceof Error && error.name === 'ValidationException' && /item size/i.test(error.message);

/**
 * Maps what DynamoDB refuses about a write to a refusal (the service checks first; this is the backstop).
 * Busy or slow is left to the edge (503).
 */
function mapWriteError(error: unknown): never {
  if (error instanceof Refusal) throw error;
  const message = error instanceof Error ? error.message : '';
  const name = error instanceof Error ? error.name : '';
  if (isItemTooLarge(error)) throw contentTooLarge();
  // DynamoDB: "Number overflow/underflow ...", "... precision up to 38 digits"; dynalite: "... 38 significant digits".
  if (name === 'ValidationException' && /number (?:overflow|underflow)/i.test(message)) {
    throw new Refusal('NUMBER_OUT_OF_RANGE', 'the result is outside the range of numbers that can be stored', {
      cause: error,
    });
  }
  if (name === 'ValidationException' && /significant digits|precision/i.test(message)) {
    throw new Refusal('NUMBER_TOO_PRECISE', 'the result would have more than 38 significant digits', {
      cause: error,
    });
  }
  throw error;
}

/**
 * A write's outcome; landed with `returnNew`, the item it left (DynamoDB bills nothing for returning it). `earlier`:
 * not applied now, because the named request it belongs to applied before (its record was there).
 */
export type Sent =
  | { ok: true; item?: Record<string, AttributeValue>; earlier?: true }
  | { ok: false; item?: Record<string, AttributeValue> };

/**
 * How a write to one segment is sent. `fast`: a one-request form, whose refused assumptions (a stub or a non-list on
 * its path, an item past 400 KB) mean "read and plan"; `returnNew`: return the item it leaves; `record`: a named
 * request's record, written in the same transaction.
 */
interface SendOptions {
  fast?: boolean;
  returnNew?: boolean;
  record?: RequestRecord;
}

/** What DynamoDB refused about a write that a planned write handles (with `fast`), as a refusal to plan on; else the client's refusal. */
function refusedWrite(error: unknown, fast: boolean | undefined): Sent {
  if (fast && isAssumptionRefused(error)) return { ok: false };
  // An engine may check an item's size before the condition (DynamoDB Local does): a fast write that would take its
  // segment past one item is then refused, not conditioned away. The planned write cuts it.
  if (fast && isItemTooLarge(error)) return { ok: false };
  return mapWriteError(error);
}

/** One segment's UpdateItem (with `record`, in one transaction with it): landed, or refused with the item found. */
export async function sendUpdate(
  inc: string,
  key: string,
  request: UpdateRequest,
  { fast, returnNew, record }: SendOptions = {},
): Promise<Sent> {
  if (record) return sendRecorded(inc, key, request, { fast, returnNew, record });
  try {
    const { Attributes } = await dynamo.send(
      new UpdateItemCommand({
        TableName: tableName(),
        Key: segmentItemKey(inc, key),
        ...request,
        ...(returnNew ? { ReturnValues: 'ALL_NEW' as const } : {}),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { ok: true, item: Attributes };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return { ok: false, item: error.Item };
    return refusedWrite(error, fast);
  }
}

/**
 * A named request's write to one segment (docs/design/storage.md §8a): the same update and the request's record in
 * one transaction. The record there already: the request applied before, and nothing is applied again. The update
 * refused: as the UpdateItem's refusal (a conflict with a write in flight, too, which reads again).
 */
async function sendRecorded(
  inc: string,
  key: string,
  request: UpdateRequest,
  { fast, returnNew, record }: SendOptions & { record: RequestRecord },
): Promise<Sent> {
  try {
    await dynamo.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: segmentItemKey(inc, key),
              ...request,
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          recordPut(record),
        ],
      }),
    );
  } catch (error) {
    if (!(error instanceof TransactionCanceledException)) return refusedWrite(error, fast);
    if (recordedBefore(error, 1)) return { ok: true, earlier: true };
    const reason = error.CancellationReasons?.[0];
    if (reason?.Code === 'ConditionalCheckFailed') return { ok: false, item: reason.Item };
    // What an UpdateItem would have thrown: the same answer (DynamoDB cancels; some engines throw it as it is).
    if (reason?.Code === 'ValidationError')
      return refusedWrite(Object.assign(new Error(reason.Message ?? ''), { name: 'ValidationException' }), fast);
    return { ok: false };
  }
  // A transaction returns no item: one that is asked for (a delete's fold check) is read.
  return { ok: true, item: returnNew ? (await getSegment(inc, key))?.raw : undefined };
}
