// The Idempotency-Key header's rules (the Powertools machinery in ./idempotency is loaded only when one is sent).
import { BadRequest } from './errors';

const KEY = /^[\x21-\x7e]{1,255}$/;

export function parseIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!KEY.test(value)) throw new BadRequest('INVALID_IDEMPOTENCY_KEY', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
  return value;
}
