// Deadlines: every DynamoDB call made while handling a request stops waiting when the request's time is up.
import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Where the current request's deadline lives. A Lambda sandbox handles one invocation at a time, so a variable is
 * enough; AsyncLocalStorage is needed only where requests overlap in one process (the local server, or Lambda with
 * AWS_LAMBDA_MAX_CONCURRENCY set, as AWS's own invoke store decides). It is not used otherwise because, once on, it
 * makes every promise in the process pay for context tracking (measured: 2.5-4 ms of a cold start, and a share of
 * every request).
 */
let deadlines: AsyncLocalStorage<number> | undefined =
  process.env.AWS_LAMBDA_MAX_CONCURRENCY === undefined ? undefined : new AsyncLocalStorage<number>();
let single: number | undefined;

/** For hosts that run several requests at once in one process (lib/local/server.ts): per-request deadlines. */
export function allowConcurrentRequests(): void {
  deadlines ??= new AsyncLocalStorage<number>();
}

/** Runs `fn` with a deadline (epoch ms) that every DynamoDB call inside it honours. */
export async function withDeadline<T>(deadline: number, fn: () => Promise<T>): Promise<T> {
  if (deadlines) return deadlines.run(deadline, fn);
  const outer = single;
  single = deadline;
  try {
    return await fn();
  } finally {
    single = outer;
  }
}

/** The current request's deadline, or Infinity outside a request (CLI, tests of pure code). */
export const currentDeadline = (): number => (deadlines ? deadlines.getStore() : single) ?? Number.POSITIVE_INFINITY;

export function deadlineExceeded(): Error {
  return Object.assign(new Error('the request deadline passed before DynamoDB answered'), { name: 'TimeoutError' });
}

type Next<T> = (args: T) => Promise<unknown>;

/** SDK middleware: races each call (its retries included) against the current deadline. */
export const honourDeadline =
  <T>(next: Next<T>) =>
  async (args: T): Promise<unknown> => {
    const remaining = currentDeadline() - Date.now();
    if (remaining === Number.POSITIVE_INFINITY) return next(args);
    if (remaining <= 0) throw deadlineExceeded();
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        next(args),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(deadlineExceeded()), remaining);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  };
