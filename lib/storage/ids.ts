// Fresh ids for new keys (layout/keys.ts): random, so a subtree written again at the same path never reuses a key of
// an old one that a reader or the stream may still meet. The one source of randomness the layout's cuts are handed.
import { randomBytes, randomUUID } from 'node:crypto';

/** A new segment, chunk directory or bucket stub id: 8 base64url characters (48 random bits). */
export const newSegmentId = () => randomBytes(6).toString('base64url');

/** A new commit's token (`tx`), stamped in every item a commit over several items writes. */
export const newCommitToken = () => randomUUID();
