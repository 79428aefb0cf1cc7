// Bucketed objects (docs/design/storage.md §13, step 4): which bucket holds a member. Deterministic: a hash of the
// stub and the member, so every writer and reader computes the same bucket with no directory (no randomness here).
import { createHash } from 'node:crypto';
import { bucketFanout, bucketKey, withoutCopyId } from './keys';

/**
 * The bucket of a bucketed object (bucket stub `stub`) that holds member `member`. An imported object's stub has a
 * copy id its members were not hashed with (they were put in the shadow content, before the copy): hashed without it.
 */
export function bucketOf(stub: string, member: string): string {
  const hashed = withoutCopyId(stub);
  const r = createHash('sha256').update(`${hashed}\u0000${member}`).digest().readUInt32BE(0) % bucketFanout(stub);
  return bucketKey(stub, r);
}
