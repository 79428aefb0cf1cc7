// The storage engine's face (docs/design/storage.md): the only module outside lib/storage may import (a
// dependency-cruiser rule). Content is read and written through these calls; how it is cut into segments, where
// they sit, and how the stream's records become changes stay inside.

export type { ReadView, WriteResult } from './requests';
export { assertProjectAccess } from './grant';
export { readContent, viewOf } from './read';
export { writeBatch } from './batch';
export { writeContent } from './write';
export { createRoot, deleteSegments } from './io/commit';
export {
  NOTHING_TO_STAMP,
  type Stamping,
  STAMPING_PARTITION,
  finishPendingStampings,
  stampContent,
  stampingRecord,
} from './stamping';
export { projectOfIncarnation } from './io/read';
export { contentPk } from './layout/keys';
export { sweep } from './sweep';
export {
  type ImportCaller,
  type ImportCommit,
  abandonImport,
  applyImportPage,
  commitImport,
  startImport,
} from './import';
export { readSnapshot } from './snapshot';
export { type Change, type WireChange, toWire, trimTo, valueBelow } from './feed/changes';
export { type DecodedCommit, decodeCommit, feedRecordOf, readStreamBatch } from './feed/decode';
export { type AwaitedOld, completeAwaited } from './feed/old-values';
export { openCommitStart } from './feed/batch-cut';
