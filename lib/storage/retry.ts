// The retry policy of a write: attempts and the request's deadline, backoff with jitter, the segment to decide
// on again, and a named request's retry recognised from its record.
import { MAX_WRITE_ATTEMPTS } from '../config/limits';
import { currentDeadline } from '../dynamo/deadline';
import { type Segment, readSegment } from './segment';
import { getSegment } from './io/read';
import { isRecorded, requestRecordOf } from './request-records';
import { isRefusal } from '../config/errors';

import type { Grant } from './grant';
import type { Sent } from './io/write';
import { tooManyWriters } from './refusals';
import { type WriteRequest, type WriteResult, formatEtag } from './requests';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Full jitter, capped: racing writers spread out instead of colliding again in lockstep. */
export const backoff = (attempt: number) => sleep(Math.random() * Math.min(100, 5 * 2 ** attempt));

/** After a refused write: the segment the refusal returned, or read afresh. */
export const segmentAfter = async (grant: Grant, key: string, sent: Sent) =>
  !sent.ok && sent.item ? readSegment(sent.item) : getSegment(grant.inc, key);

/**
 * The segment to decide on again after a refused write: the one the refusal returned, at once (it is the newest there
 * is); after that, read afresh after a backoff (a segment from before the sleep is already stale when other writers
 * keep going). Past the attempts or the deadline, the 409.
 */
export async function retrySegment(
  grant: Grant,
  key: string,
  sent: Sent,
  attempt: number,
): Promise<Segment | undefined> {
  if (attempt !== 2) return rereadAfter(grant, key, attempt);
  assertAttemptsLeft(attempt);
  return segmentAfter(grant, key, sent);
}

/** Past the attempts or the request's deadline: a 409 (nothing of this request applied). */
export function assertAttemptsLeft(attempt: number): void {
  if (attempt > MAX_WRITE_ATTEMPTS || Date.now() >= currentDeadline()) throw tooManyWriters();
}

/**
 * Whether a named request's own earlier write can have caused this refusal on its retry: any but access, which is
 * decided afresh (a 404 too, as when a JSON Patch's `remove` meets the path its own first attempt removed). Asking
 * more is safe: the record answers success only when the request did land.
 */
const ownEarlierWrite = (error: unknown): boolean => isRefusal(error) && !isRefusal(error, 'UNAUTHORIZED', 'FORBIDDEN');

/**
 * A named request about to be refused (a 412 because its own write moved the version, an index its own insert put out
 * of range, a 409 after as many attempts) reads its record first: there, the request applied before and its answer
 * was lost, so it answers success (docs/design/storage.md §8a). Only named requests on that path pay the read.
 */
export async function recognisingRetry(
  request: Omit<WriteRequest, 'op'>,
  write: () => Promise<WriteResult>,
): Promise<WriteResult> {
  try {
    return await write();
  } catch (error) {
    const token = request.requestToken;
    if (token === undefined || !ownEarlierWrite(error)) throw error;
    if (await isRecorded(requestRecordOf(token))) return { etag: formatEtag(token) };
    throw error;
  }
}

/** A segment read again after a refused or mixed attempt (within the attempts and the deadline), after a backoff. */
export async function rereadAfter(grant: Grant, key: string, attempt: number): Promise<Segment | undefined> {
  assertAttemptsLeft(attempt);
  await backoff(attempt);
  return getSegment(grant.inc, key);
}

/** Reads of one value that met a mixed state (a commit between two of its reads): read again, this many times in all. */
export const READ_ATTEMPTS = 3;
/** The same for a subscription's snapshot, which reads from the root and may meet more commits on its way. */
export const SNAPSHOT_ATTEMPTS = 5;
/** Stubs followed from a remembered location to the segment that names another (fold): deeper paths are left alone. */
export const PARENT_HOPS_MAX = 8;
