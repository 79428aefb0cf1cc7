// Test helpers: what an HttpError says to a client (status and stable code), never its message.
import { HttpError } from '../../lib/http/errors';

/** The HttpError `fn` throws; fails the test when it throws something else or nothing. */
export function thrownBy(fn: () => unknown): HttpError {
  try {
    fn();
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error('expected an HttpError, but nothing was thrown');
}

/** `{ statusCode, code }` of the HttpError `fn` throws. */
export function failure(fn: () => unknown): { statusCode: number; code: string } {
  const error = thrownBy(fn);
  return { statusCode: error.statusCode, code: error.code };
}

export const badRequest = (code: string) => ({ statusCode: 400, code });
