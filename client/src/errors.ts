// The one error the client throws: the server's `{message, code, index?}` with its status, or a network failure.
import type { ServerErrorCode } from './generated/error-codes';

/**
 * The server's codes (lib/config/error-codes.ts), and the client's own: `NETWORK_ERROR` (no answer: the connection
 * failed or dropped; status 0) and `UNEXPECTED_RESPONSE` (an answer without a code, from a proxy or gateway, say).
 */
export type ErrorCode = ServerErrorCode | 'NETWORK_ERROR' | 'UNEXPECTED_RESPONSE';

export class ContentApiError extends Error {
  override readonly name = 'ContentApiError';
  /** The HTTP status; 0 when no answer arrived. */
  readonly status: number;
  readonly code: ErrorCode;
  /** content/batch: the position of the operation that failed. */
  readonly index: number | undefined;
  /** The content's current version when the server sent one (a 412 carries it). */
  readonly etag: string | null;

  constructor(
    message: string,
    init: { status: number; code: ErrorCode; index?: number; etag?: string | null; cause?: unknown },
  ) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.index = init.index;
    this.etag = init.etag ?? null;
  }
}
