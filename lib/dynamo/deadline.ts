// Deadlines: every DynamoDB call made while handling a request stops waiting when the request's time is up.
import { requestScope } from './scope';

/** The current request's deadline (epoch ms), one per request (lib/dynamo/scope.ts). */
const deadlines = requestScope<number>();

/** For hosts that run several requests at once in one process (lib/local/server.ts): per-request deadlines. */
export function allowConcurrentRequests(): void {
  deadlines.overlap();
}

/** Runs `fn` with a deadline (epoch ms) that every DynamoDB call inside it honours. */
export const withDeadline = <T>(deadline: number, fn: () => Promise<T>): Promise<T> => deadlines.run(deadline, fn);

/** The current request's deadline, or Infinity outside a request (CLI, tests of pure code). */
export const currentDeadline = (): number => deadlines.current() ?? Number.POSITIVE_INFINITY;

/** The TimeoutError a DynamoDB call fails with when the request's deadline passes first. */
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
