// Write stamps: the content segments a request writes carry a small attribute saying who wrote them and how, which
// the table's stream shows to the consumer that keeps the history (docs/design/history.md, section 2). Added by
// client middleware, so the write path gets no extra request and no store code has to thread it through.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/** The attribute a stamped segment carries: JSON text (see `WriteStamp`). */
export const STAMP_ATTRIBUTE = 'wb';

/**
 * Where the current request's stamp lives: a variable where a sandbox runs one invocation at a time,
 * AsyncLocalStorage where invocations overlap in one process (as for the deadline, lib/dynamo/deadline.ts).
 */
let scopes: AsyncLocalStorage<string> | null | undefined;
let single: string | undefined;

/** Runs `fn` with every content segment it writes stamped with `stamp` (JSON text). */
export async function withWriteStamp<T>(stamp: string, fn: () => Promise<T>): Promise<T> {
  scopes ??= process.env.AWS_LAMBDA_MAX_CONCURRENCY === undefined ? null : new AsyncLocalStorage<string>();
  if (scopes) return scopes.run(stamp, fn);
  const outer = single;
  single = stamp;
  try {
    return await fn();
  } finally {
    single = outer;
  }
}

const currentStamp = (): string | undefined => (scopes ? scopes.getStore() : single);

type Key = Record<string, AttributeValue> | undefined;

/** A content segment's key: partition `C#<inc>`, sort key `/...` (not a subscription, marker or record). */
const isSegmentKey = (key: Key) => key?.pk?.S?.startsWith('C#') === true && key.sk?.S?.startsWith('/') === true;

interface Update {
  Key?: Key;
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, AttributeValue>;
}

/** Adds `SET #wb = :wb` to an update expression (into its SET clause: a clause may appear only once). */
function stampUpdate(update: Update, stamp: string): void {
  if (!isSegmentKey(update.Key) || update.UpdateExpression === undefined) return;
  const set = '#wbStamp = :wbStamp';
  update.UpdateExpression = /\bSET\b/.test(update.UpdateExpression)
    ? update.UpdateExpression.replace(/\bSET\b/, `SET ${set},`)
    : `${update.UpdateExpression} SET ${set}`;
  update.ExpressionAttributeNames = { ...update.ExpressionAttributeNames, '#wbStamp': STAMP_ATTRIBUTE };
  update.ExpressionAttributeValues = { ...update.ExpressionAttributeValues, ':wbStamp': { S: stamp } };
}

function stampItem(item: Record<string, AttributeValue> | undefined, stamp: string): void {
  if (item && isSegmentKey(item)) item[STAMP_ATTRIBUTE] = { S: stamp };
}

/** Stamps the segment writes of one command's input, in place. */
export function stampInput(operation: string, input: Record<string, unknown>, stamp: string): void {
  if (operation === 'UpdateItem') stampUpdate(input as Update, stamp);
  else if (operation === 'PutItem') stampItem(input.Item as Record<string, AttributeValue>, stamp);
  else if (operation === 'TransactWriteItems') {
    for (const item of (input.TransactItems ?? []) as Array<{ Update?: Update; Put?: { Item?: never } }>) {
      if (item.Update) stampUpdate(item.Update, stamp);
      if (item.Put) stampItem(item.Put.Item, stamp);
    }
  } else if (operation === 'BatchWriteItem') {
    for (const requests of Object.values((input.RequestItems ?? {}) as Record<string, unknown[]>)) {
      for (const request of requests as Array<{ PutRequest?: { Item?: never } }>)
        stampItem(request.PutRequest?.Item, stamp);
    }
  }
}

type Next = (args: { input: Record<string, unknown> }) => Promise<{ output: unknown }>;

/** SDK middleware: stamps the content segments a command writes while a stamp is current. */
export const stampWrites = (next: Next, context: { commandName?: string }) => {
  const operation = (context.commandName ?? '').replace(/Command$/, '');
  return async (args: { input: Record<string, unknown> }) => {
    const stamp = currentStamp();
    // A copy: the SDK may send the same input again (a retry), and callers may reuse their objects.
    if (stamp !== undefined) {
      args = { ...args, input: structuredClone(args.input) };
      stampInput(operation, args.input, stamp);
    }
    return next(args);
  };
};
