// Revisions: a change's place in its project's order (docs/design/realtime.md, section 3). A revision is the
// stream record's sequence number, raised when needed so that a project's revisions only grow, whatever the
// stream's numbers do across a restart of the local engine or a shard's successors in AWS.
import type { DynamoDBRecord } from 'aws-lambda';
import { setBounded } from '../config/bounded';
import { isLogged, lastRevision } from './change-log';

/** Revisions are text of this many digits (sequence numbers left-padded with zeros) so they sort as text. */
const REVISION_DIGITS = 40;
const LAST_MAX = 10_000;
/** The last revision this consumer gave each incarnation's changes (read from the change log when cold). */
const lastGiven = new Map<string, bigint>();

/** A revision as text: left-padded with zeros to 40 digits, so revisions sort as text. */
export const formatRevision = (n: bigint) => n.toString().padStart(REVISION_DIGITS, '0');

/** The stream's own number for a record. */
const sequenceOf = (record: DynamoDBRecord) => BigInt(record.dynamodb?.SequenceNumber ?? '0');

/**
 * The revision of a commit: its sequence number when above every revision the project has had; a record delivered
 * again (a failed batch retried) keeps the revision it was logged under, so clients drop it as one they have; else
 * (numbers that went backwards) the last revision plus one.
 */
export async function revisionFor(inc: string, record: DynamoDBRecord): Promise<string> {
  const sequence = sequenceOf(record);
  const last = lastGiven.get(inc) ?? BigInt(await lastRevision(inc));
  let revision = sequence;
  if (sequence <= last && !(await isLogged(inc, formatRevision(sequence)))) revision = last + 1n;
  setBounded(lastGiven, inc, revision > last ? revision : last, LAST_MAX);
  return formatRevision(revision);
}
