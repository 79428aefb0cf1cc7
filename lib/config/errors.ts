// Refusals: one small hierarchy of what the service will not do, each with a stable code and a sentence; the HTTP
// status and headers of each are decided at the edge (lib/http/edge.ts), from the catalogue (./error-codes.ts).
import type { ErrorCode } from './error-codes';

/** A code a client's request can be refused with (the service's own faults have theirs: INTERNAL_ERROR, Unavailable). */
export type RefusalCode = Exclude<ErrorCode, 'INTERNAL_ERROR' | 'SERVICE_UNAVAILABLE'>;

/** What a refusal carries beyond its sentence, for the client: the current ETag, when to try again. */
export interface RefusalData {
  /** The content's current ETag (a failed If-Match). */
  etag?: string;
  /** Seconds after which the same request may succeed (a conflict with other writers). */
  retryAfter?: number;
}

/**
 * A request the service will not carry out as asked: a stable code (its HTTP status is the catalogue's, mapped at the
 * edge), a sentence the client may read, and its data. The engine decides with these as values of the domain.
 */
export class Refusal extends Error {
  readonly code: RefusalCode;
  readonly data: RefusalData;
  /** In a batch: the position of the operation that failed (the error is the one it gets alone). */
  index?: number;

  constructor(code: RefusalCode, message: string, options: RefusalData & { cause?: unknown } = {}) {
    const { cause, ...data } = options;
    super(message, { cause });
    this.name = new.target.name;
    this.code = code;
    this.data = data;
  }

  toJSON(): { message: string; code: RefusalCode; index?: number } {
    return this.index === undefined
      ? { message: this.message, code: this.code }
      : { message: this.message, code: this.code, index: this.index };
  }
}

/** Whether an error is a refusal, with one of `codes` when any are named. */
export function isRefusal(error: unknown, ...codes: RefusalCode[]): boolean {
  return error instanceof Refusal && (codes.length === 0 || codes.includes(error.code));
}

/** Every unusable credential gets this exact refusal, so unknown, expired and revoked look the same. */
export class Unauthorized extends Refusal {
  constructor() {
    super('UNAUTHORIZED', 'A valid session token or API key is required');
  }
}

/** The caller has no access to the project, or the credential lacks the right. */
export class Forbidden extends Refusal {
  constructor(message = 'You do not have access to this project') {
    super('FORBIDDEN', message);
  }
}

/** If-Match names no version the content is at: the current one travels with it. */
export class PreconditionFailed extends Refusal {
  constructor(etag: string | undefined) {
    super('PRECONDITION_FAILED', 'The content has changed since the version named in If-Match', etag ? { etag } : {});
  }
}

/**
 * The service cannot carry out the request now (DynamoDB busy or slow, the history behind): a fault of the service, not
 * a refusal, so its sentence stays in the log; the client is told to retry.
 */
export class Unavailable extends Error {
  readonly code = 'SERVICE_UNAVAILABLE' satisfies ErrorCode;
  /** Seconds after which to retry. */
  readonly retryAfter = 1;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'Unavailable';
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
export function unavailable(error: unknown): Unavailable | undefined {
  // Libraries wrap what DynamoDB said (Powertools: IdempotencyPersistenceLayerError), so follow the causes.
  for (
    let e: unknown = error, depth = 0;
    e instanceof Error && !(e instanceof Refusal) && depth < 5;
    e = e.cause, depth++
  ) {
    if (e instanceof Unavailable) return e;
    if (e.name === 'TimeoutError' || e.name === 'AbortError' || (e as { code?: string }).code === 'ETIMEDOUT') {
      return new Unavailable('The request took too long; retry shortly', { cause: error });
    }
    if (BUSY.test(e.name)) return new Unavailable('The service is busy; retry shortly', { cause: error });
    if (NETWORK.test((e as { code?: string }).code ?? '')) {
      return new Unavailable('The database could not be reached; retry shortly', { cause: error });
    }
  }
  return undefined;
}
