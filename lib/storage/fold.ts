// Folding a small segment back into its parent after a delete (docs/design/storage.md §13, step 3, merges).
import { PARENT_HOPS_MAX } from './retry';
import { logger } from '../config/logger';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { fragmentBytes } from '../config/env';
import { ROOT_KEY, isBucketKey, isChunkKey } from './layout/keys';
import { assemble } from './layout/stubs';
import { chunkStubOf } from './layout/chunked';
import { Stub, storedSize } from '../content/json';
import { type Segment, readSegment } from './segment';
import { forgetLocation, lookupLocation, foldRecentlyRefused, noteFoldRefused } from './memory';
import { getSegment } from './io/read';
import type { Path } from '../paths';

import { type Envelope, commitPieces, guardedBase } from './commit';
import type { Grant } from './grant';
import { step } from './walk';

/**
 * After a delete left segment `item` (the root of `path`) under a quarter of the budget: folds it back into the
 * segment that names it when the two fit in half a budget, or in no more than the parent holds now; one commit, the
 * parent in place on its version and the small segment deleted on its own (docs/design/storage.md, section 13, step 3,
 * merges). Housekeeping after a write that landed: a refusal or a fault here is logged, never the client's answer.
 */
export async function foldIfSmall(
  grant: Grant,
  envelope: Envelope,
  path: Path,
  item: Record<string, AttributeValue> | undefined,
): Promise<void> {
  if (!item) return;
  const small = readSegment(item);
  const { key, fragment } = small;
  if (key === ROOT_KEY || isChunkKey(key) || isBucketKey(key) || fragment instanceof Stub || chunkStubOf(fragment))
    return;
  const size = storedSize(fragment);
  if (size >= fragmentBytes() / 4) return;
  if (foldRecentlyRefused(grant.inc, key, size)) return;
  try {
    const parent = await parentOf(grant.inc, path, key);
    if (!parent) return;
    const merged = assemble(parent.fragment, (k) => (k === key ? fragment : undefined), 'keep');
    const bytes = storedSize(merged);
    const limit = Math.max(fragmentBytes() / 2, storedSize(parent.fragment));
    if (bytes > limit) {
      noteFoldRefused(grant.inc, key, size - (bytes - limit));
      return;
    }
    const pieces = [{ key: parent.key, fragment: merged }];
    // Housekeeping after the request applied: not the request's own change, so without its record.
    const housekeeping = { ...envelope, record: undefined };
    const sent = await commitPieces(grant, {
      base: guardedBase(housekeeping, grant),
      key: parent.key,
      version: parent.version,
      pieces,
      orphans: [{ key, version: small.version }],
    });
    // Where this Lambda knew the small segment to be, it is not: found again from the root.
    if (sent.ok) forgetLocation(grant.inc, key);
  } catch (error) {
    logger.warn('segment merge failed', { key, error: String(error) });
  }
}

/**
 * The segment that names segment `key` as the value at `path` (walked from the deepest segment this Lambda knows
 * above it, following stubs as a write does), or undefined when the path leads anywhere else.
 */
async function parentOf(inc: string, path: Path, key: string): Promise<Segment | undefined> {
  let at = lookupLocation(inc, path, path.length - 1);
  for (let hops = 0; hops < PARENT_HOPS_MAX; hops++) {
    const segment = await getSegment(inc, at.key);
    if (!segment) return undefined;
    const next = step(segment, path, at, { enterLast: true });
    if (!('to' in next)) return undefined;
    if (next.to.depth === path.length) return next.to.key === key && next.bucket === undefined ? segment : undefined;
    at = next.to;
  }
  return undefined;
}
