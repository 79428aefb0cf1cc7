// The 4xx answers the engine gives of its own (the layout's limits, the write's race), made in one place.
import { MAX_CONTENT_BYTES } from '../config/limits';
import { Conflict, PayloadTooLarge } from '../config/errors';

export const contentTooLarge = () =>
  new PayloadTooLarge(
    'CONTENT_TOO_LARGE',
    `a value that stays whole would exceed ${MAX_CONTENT_BYTES} bytes; nothing was changed`,
  );

export const tooManyWriters = () =>
  new Conflict('WRITE_CONFLICT', 'Too many concurrent writes to this project; retry shortly', { 'Retry-After': '1' });
