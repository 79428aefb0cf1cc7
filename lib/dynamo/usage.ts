// DynamoDB usage per request: requests, SDK retries, condition failures and the capacity each response reports, by
// operation, for the request's metrics (lib/http/metrics.ts). Recorded by client middleware (lib/dynamo/client.ts).
import { requestScope } from './scope';

export interface OperationUsage {
  requests: number;
  /** The SDK's own retries (attempts beyond the first). */
  retries: number;
  /** Writes refused by their condition (ConditionalCheckFailed, a cancelled transaction's condition). */
  conditionFailures: number;
  readUnits: number;
  writeUnits: number;
}

/** Operation name (`UpdateItem`, `TransactWriteItems`, ...) -> its usage within one request. */
export type DynamoUsage = Map<string, OperationUsage>;

/** The current request's usage, one per request (lib/dynamo/scope.ts). */
const usages = requestScope<DynamoUsage>();

/** Runs `fn` with `usage` collecting every DynamoDB call made inside it. */
export const withUsage = <T>(usage: DynamoUsage, fn: () => Promise<T>): Promise<T> => usages.run(usage, fn);

/** The current request's usage (none outside a request: CLI, tests), taken when a call starts. */
export const currentUsage = (): DynamoUsage | undefined => usages.current();

/** Reads use read capacity; everything else DynamoDB bills as writes. */
const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);

interface Capacity {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

/** Adds one response's ConsumedCapacity (one object, or one per table for batches and transactions). */
function addCapacity(usage: OperationUsage, operation: string, consumed: Capacity | Capacity[] | undefined): void {
  for (const capacity of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
    // TOTAL reports CapacityUnits only; the split is there when an engine gives it.
    const read = capacity.ReadCapacityUnits ?? (READS.has(operation) ? (capacity.CapacityUnits ?? 0) : 0);
    const write = capacity.WriteCapacityUnits ?? (READS.has(operation) ? 0 : (capacity.CapacityUnits ?? 0));
    usage.readUnits += read;
    usage.writeUnits += write;
  }
}

const CONDITION_FAILED = /ConditionalCheckFailed/;

/**
 * Records one call's outcome in the usage of the request that made it (taken when the call started: a call that
 * outlives its request's deadline must not count towards the next request in the sandbox).
 */
export function recordCall(usage: DynamoUsage | undefined, operation: string, output: unknown, error: unknown): void {
  if (!usage) return;
  let entry = usage.get(operation);
  if (!entry) {
    entry = { requests: 0, retries: 0, conditionFailures: 0, readUnits: 0, writeUnits: 0 };
    usage.set(operation, entry);
  }
  const answered = (error ?? output) as
    | { $metadata?: { attempts?: number }; ConsumedCapacity?: Capacity | Capacity[]; name?: string; message?: string }
    | undefined;
  entry.requests += 1;
  entry.retries += Math.max(0, (answered?.$metadata?.attempts ?? 1) - 1);
  if (error) {
    const { name = '', message = '' } = (error as { name?: string; message?: string }) ?? {};
    if (CONDITION_FAILED.test(name) || (name === 'TransactionCanceledException' && CONDITION_FAILED.test(message)))
      entry.conditionFailures += 1;
  }
  addCapacity(entry, operation, answered?.ConsumedCapacity);
}
