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

/** One project's queued writes in order, acknowledged ones kept until their change has had time to arrive. */
export interface Shelf {
  writes: Map<string, Array<PendingWrite & { ackedAt?: number }>>;
  /** Called with the project's name when its list changes. */
  listeners: Set<(project: string) => void>;
}

const SHELF = Symbol.for('content-api-client.pending');

/** The shelf of a client's connection (`site.connection`), made on first use. */
export function shelfOf(connection: object): Shelf {
  const holder = connection as { [SHELF]?: Shelf };
  holder[SHELF] ??= { writes: new Map(), listeners: new Set() };
  return holder[SHELF];
}
