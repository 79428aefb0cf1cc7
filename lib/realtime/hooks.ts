// Hooks: other modules (webhooks) learn of every committed change the stream consumer derives.
import type { WireChange } from '../storage';

/** One committed write, as the consumer derived it: project-wide changes, paths absolute. */
export interface CommittedChange {
  inc: string;
  /** The project's name, when the consumer knows it (from a subscription of the project). */
  project?: string;
  revision: string;
  changes: WireChange[];
  /** The whole content changed and was not read (an import's switch): receivers read it again. */
  unread?: true;
}

export type CommittedChangeHook = (change: CommittedChange) => Promise<void> | void;

/**
 * Called by the consumer, in commit order and awaited, for every committed change (before subscribers are sent
 * it). A hook that throws fails the consumer's batch, which the stream delivers again: hooks must be idempotent
 * (the revision identifies a change).
 */
export const onCommittedChange: CommittedChangeHook[] = [];
