// Where a stream batch may have cut a commit (docs/design/realtime.md, section 2): the event source hands a shard's
// records over in batches of at most its batch size (and of at most 6 MB), cut anywhere, so a full batch may end
// inside a multi-item commit whose other records open the next. The consumer leaves such a trailing commit for the
// next batch (a partial batch response), which then starts with all of it. Pure.
import type { DynamoDBRecord } from 'aws-lambda';
import { A } from '../../schema/attributes';
import { isSegmentKey } from '../layout/keys';

/** Past this many bytes of records a batch may have been cut by the event's size rather than its count. */
const CUT_BY_SIZE_BYTES = 4 * 1024 * 1024;

/**
 * The position from which a batch's trailing records may be a commit the next batch continues: the run at its end
 * of one content partition's segment records that are one multi-item commit's (its token in their new images) or
 * removals (which carry no token). Undefined when the batch was not full (the event source had no more records), when
 * it ends in a one-item write or another item, or when the run is the whole batch (deferred, it would never move on:
 * a commit over a whole batch is completed across batches as before).
 */
export function openCommitStart(
  records: readonly DynamoDBRecord[],
  options: { batchSize: number },
): number | undefined {
  const bytes = records.reduce((sum, r) => sum + (r.dynamodb?.SizeBytes ?? 0), 0);
  if (records.length < options.batchSize && bytes < CUT_BY_SIZE_BYTES) return undefined;
  const pk = records.at(-1)?.dynamodb?.Keys?.pk?.S;
  let tx: string | undefined;
  let start = records.length;
  for (let i = records.length - 1; i >= 0; i--) {
    const change = records[i]?.dynamodb;
    if (change?.Keys?.pk?.S !== pk || !isSegmentKey(change?.Keys?.sk?.S)) break;
    if (records[i]?.eventName !== 'REMOVE') {
      const token = change?.NewImage?.[A.transaction]?.S;
      // A one-item write (no token of its own) or another commit's record ends the run.
      if (token === undefined || token === change?.OldImage?.[A.transaction]?.S || (tx !== undefined && token !== tx))
        break;
      tx = token;
    }
    start = i;
  }
  return start > 0 && start < records.length ? start : undefined;
}
