// The storage engine's face (docs/design/storage.md): the only module outside lib/storage may import (a
// dependency-cruiser rule). Content is read and written through these calls; how it is cut into segments, where
// they sit, and how the stream's records become changes stay inside.

export {
  type ReadView,
  type WriteResult,
  assertProjectAccess,
  readContent,
  writeBatch,
  writeContent,
} from './content';
export { createRoot, contentPk, deleteSegments, projectOfIncarnation, stampSegments } from './segments';
export { sweep } from './sweep';
export { readSnapshot } from './snapshot';
export {
  type Change,
  type WireChange,
  commitChanges,
  diffValues,
  stubPaths,
  toWire,
  trimTo,
} from './feed/changes';
export { forgetBelow, learnTree, pathOf } from './feed/segment-paths';
export { type CommitView, complete } from './feed/commit-reads';
export {
  ROOT_KEY,
  byChunkStart,
  chunkCount,
  chunkStart,
  chunkStubOf,
  fragmentsOf,
  isBucketKey,
  isChunkKey,
} from './fragments';
