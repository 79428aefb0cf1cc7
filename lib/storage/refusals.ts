// The 4xx answers the engine gives of its own (the layout's limits, the write's race), made in one place.
import { MAX_CONTENT_BYTES } from '../config/limits';
import { Refusal } from '../config/errors';

/** A value that cannot be cut would not fit one segment (an array or an object of scalars past the limit). */
export const contentTooLarge = () =>
  new Refusal(
    'CONTENT_TOO_LARGE',
    `a value that stays whole would exceed ${MAX_CONTENT_BYTES} bytes; nothing was changed`,
  );

/** Past the attempts or the request's deadline, racing other writers: a 409, nothing of the request applied. */
export const tooManyWriters = () =>
  new Refusal('WRITE_CONFLICT', 'Too many concurrent writes to this project; retry shortly', { retryAfter: 1 });

/** A change that would have to rewrite, atomically, more segments than one transaction holds. */
export const changeTooLarge = () =>
  new Refusal(
    'CHANGE_TOO_LARGE',
    `the change reads and rewrites more than ${MAX_TRANSACTION_ITEMS - 1} segments at once; change smaller parts, one request each`,
  );

/** DynamoDB's limits on one transaction. */
export const MAX_TRANSACTION_ITEMS = 100;
const MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;
/**
 * The most a batch or patch may write (the new segments' fragments): what one transaction carries with room for its
 * other items. Planning stops past it, so no request grows a value in memory beyond it (a chain of self-copies).
 */
export const MAX_CHANGE_BYTES = MAX_TRANSACTION_BYTES / 2;
