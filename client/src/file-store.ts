// content-api-client/file-store: the offline queue kept in a file, for Node (and Electron, React Native with a Node
// file system). Its own entry: it imports node:fs, which a browser bundle must not.
/// <reference types="node" />
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { PendingWrite, QueueStore } from './offline';

/** A queue kept in `file` (JSON), replaced whole on each save through a temporary file and a rename. */
export function fileStore(file: string): QueueStore {
  return {
    async load() {
      try {
        return JSON.parse(await readFile(file, 'utf8')) as PendingWrite[];
      } catch (error) {
        if ((error as { code?: string }).code === 'ENOENT') return [];
        throw error;
      }
    },
    async save(writes) {
      // A crash mid-write leaves the old file whole: the rename replaces it at once.
      const temporary = `${file}.tmp`;
      await writeFile(temporary, JSON.stringify(writes));
      await rename(temporary, file);
    },
  };
}
