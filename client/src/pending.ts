// The writes the offline queue holds, shared with `onValue` so that it shows them before the server has them. The
// two are separate entries (each bundles its own copy of this file), so the list hangs off the client's connection
// object under a registered symbol, which every copy finds.
import type { Write } from './apply';

/** A queued write: what it does, the Idempotency-Key made with it, and its If-Match. */
export type PendingWrite = Write & {
  /** The Idempotency-Key every attempt of this write carries, made when the write was. */
  key: string;
  ifMatch?: string;
};

/** A write as `onValue` shows it: acknowledged ones carry when (on the shelf's clock, and in ms). */
export type ShownWrite = PendingWrite & { ackedAt?: number; ackedTime?: number };

/** One project's queued writes in order, acknowledged ones kept until their change has had time to arrive. */
export interface Shelf {
  writes: Map<string, ShownWrite[]>;
  /** Ticks at each acknowledgement and each frame an `onValue` gets: which came first, even within a millisecond. */
  clock: number;
  /** Called with the project's name when its list changes. */
  listeners: Set<(project: string) => void>;
}

const SHELF = Symbol.for('content-api-client.pending');

/** The shelf of a client's connection (`site.connection`), made on first use. */
export function shelfOf(connection: object): Shelf {
  const holder = connection as { [SHELF]?: Shelf };
  holder[SHELF] ??= { writes: new Map(), clock: 0, listeners: new Set() };
  return holder[SHELF];
}
