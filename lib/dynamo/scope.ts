// Per-request values for code far below the handler (the deadline, the DynamoDB usage), without
// threading them through every call.
import { AsyncLocalStorage } from 'node:async_hooks';

/** One value per request: set around a request's work, read by whatever runs inside it. */
export interface RequestScope<T> {
  /** Runs `fn` with `value` current. */
  run<R>(value: T, fn: () => Promise<R>): Promise<R>;
  /** The current request's value; undefined outside a request (CLI, tests of pure code). */
  current(): T | undefined;
  /** Requests overlap in this process (the local server): one value per async context from now on. */
  overlap(): void;
}

/**
 * A request scope. A Lambda sandbox handles one invocation at a time, so a variable is enough; AsyncLocalStorage is
 * used only where requests overlap in one process (AWS_LAMBDA_MAX_CONCURRENCY set, as AWS's own invoke store decides,
 * or `overlap()`), because once on it makes every promise in the process pay for context tracking (measured: 2.5-4 ms
 * of a cold start, and a share of every request). Decided at the first request, after the host has said which.
 */
export function requestScope<T>(): RequestScope<T> {
  let store: AsyncLocalStorage<T> | null | undefined;
  let single: T | undefined;
  return {
    async run(value, fn) {
      store ??= process.env.AWS_LAMBDA_MAX_CONCURRENCY === undefined ? null : new AsyncLocalStorage<T>();
      if (store) return store.run(value, fn);
      const outer = single;
      single = value;
      try {
        return await fn();
      } finally {
        single = outer;
      }
    },
    current: () => (store ? store.getStore() : single),
    overlap() {
      store ??= new AsyncLocalStorage<T>();
    },
  };
}
