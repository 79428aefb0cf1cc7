// Bucketed objects (docs/design/storage.md §13, step 4): which bucket holds a member. Deterministic: a hash of the
// stub and the member, so every writer and reader computes the same bucket with no directory. Pure: the hash is
// MurmurHash3 (x86, 32 bits) over UTF-16 code units, written here so the layout needs nothing of Node; a bucket cut
// into buckets of its own gets a fresh random id in its stub, which reseeds the hash below it.
import { bucketFanout, bucketKey, withoutCopyId } from './keys';

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** MurmurHash3's scrambling of one 32-bit block (the body's and the tail's alike). */
function scramble(block: number): number {
  const k = Math.imul(block, C1);
  return Math.imul((k << 15) | (k >>> 17), C2);
}

/** MurmurHash3's 32-bit hash of a string's UTF-16 code units, two to a block. */
export function hash32(text: string): number {
  let h = 0;
  const blocks = text.length >> 1;
  for (let i = 0; i < blocks; i++) {
    h ^= scramble(text.charCodeAt(2 * i) | (text.charCodeAt(2 * i + 1) << 16));
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  if (text.length & 1) h ^= scramble(text.charCodeAt(text.length - 1));
  h ^= text.length * 2;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The bucket of a bucketed object (bucket stub `stub`) that holds member `member`. An imported object's stub has a
 * copy id its members were not hashed with (they were put in the shadow content, before the copy): hashed without it.
 */
export function bucketOf(stub: string, member: string): string {
  return bucketKey(stub, hash32(`${withoutCopyId(stub)}\u0000${member}`) % bucketFanout(stub));
}
