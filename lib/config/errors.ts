// HTTP errors: one small hierarchy; every client-facing error has a status, a stable code and a sentence.
import type { CodeWithStatus, ErrorCode } from './error-codes';

export class HttpError extends Error {
  readonly statusCode: number;
  readonly code: ErrorCode;
  /** Whether the message may reach the client; anything else becomes a plain 500. */
  readonly expose: boolean;
  readonly headers: Record<string, string>;
  /** In a batch: the position of the operation that failed (the error is the one it gets alone). */
  index?: number;

  constructor(
    statusCode: number,
    code: ErrorCode,
    message: string,
    options: { cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.statusCode = statusCode;
    this.code = code;
    this.expose = statusCode < 500;
    this.headers = options.headers ?? {};
  }

  toJSON(): { message: string; code: ErrorCode; index?: number } {
    return this.index === undefined
      ? { message: this.message, code: this.code }
      : { message: this.message, code: this.code, index: this.index };
  }
}

export class BadRequest extends HttpError {
  constructor(code: CodeWithStatus<400>, message: string, options?: { cause?: unknown }) {
    super(400, code, message, options);
  }
}

/** Every unusable credential gets this exact error, so unknown, expired and revoked look the same. */
export class Unauthorized extends HttpError {
  constructor() {
    super(401, 'UNAUTHORIZED', 'A valid session token or API key is required', {
      headers: { 'WWW-Authenticate': 'Bearer' },
    });
  }
}

export class Forbidden extends HttpError {
  constructor(message = 'You do not have access to this project') {
    super(403, 'FORBIDDEN', message);
  }
}

export class NotFound extends HttpError {
  constructor(code: CodeWithStatus<404>, message: string) {
    super(404, code, message);
  }
}

export class Conflict extends HttpError {
  constructor(code: CodeWithStatus<409>, message: string, headers?: Record<string, string>) {
    super(409, code, message, { headers });
  }
}

/** What was there is no longer kept (a revision or time before the history's retention). */
export class Gone extends HttpError {
  constructor(code: CodeWithStatus<410>, message: string) {
    super(410, code, message);
  }
}

export class PreconditionFailed extends HttpError {
  constructor(etag: string | undefined) {
    super(412, 'PRECONDITION_FAILED', 'The content has changed since the version named in If-Match', {
      headers: etag ? { ETag: etag } : {},
    });
  }
}

export class PayloadTooLarge extends HttpError {
  constructor(code: CodeWithStatus<413>, message: string) {
    super(413, code, message);
  }
}

export class UnsupportedMediaType extends HttpError {
  constructor(message = 'The request body must be JSON (Content-Type: application/json)') {
    super(415, 'UNSUPPORTED_MEDIA_TYPE', message);
  }
}

export class ServiceUnavailable extends HttpError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(503, 'SERVICE_UNAVAILABLE', message, { ...options, headers: { 'Retry-After': '1' } });
  }
}

const BUSY = /Throttl|ProvisionedThroughputExceeded|RequestLimitExceeded|InternalServerError|ServiceUnavailable/;
/**
 * The connection to DynamoDB failing rather than DynamoDB answering: refused, reset, or an answer Node's HTTP parser
 * rejects (`HPE_*`, e.g. Content-Length beside chunked Transfer-Encoding from a broken engine or middlebox).
 */
const NETWORK = /^(HPE_|ECONNRESET$|ECONNREFUSED$|EPIPE$|EHOSTUNREACH$|ENETUNREACH$|EAI_AGAIN$)/;

/**
 * DynamoDB being busy or slow, after the SDK's own retries and whatever the call was: the client's 503 with
 * Retry-After, never a 500. Undefined for anything else.
 */
export function unavailable(error: unknown): ServiceUnavailable | undefined {
  // Libraries wrap what DynamoDB said (Powertools: IdempotencyPersistenceLayerError), so follow the causes.
  for (
    let e: unknown = error, depth = 0;
    e instanceof Error && !(e instanceof HttpError) && depth < 5;
    e = e.cause, depth++
  ) {
    if (e.name === 'TimeoutError' || e.name === 'AbortError' || (e as { code?: string }).code === 'ETIMEDOUT') {
      return new ServiceUnavailable('The request took too long; retry shortly', { cause: error });
    }
    if (BUSY.test(e.name)) return new ServiceUnavailable('The service is busy; retry shortly', { cause: error });
    if (NETWORK.test((e as { code?: string }).code ?? '')) {
      return new ServiceUnavailable('The database could not be reached; retry shortly', { cause: error });
    }
  }
  return undefined;
}
