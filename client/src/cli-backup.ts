// The CLI's export and import: a whole content as one JSON file, streamed both ways (constant memory at any size).
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { type Exportable, exportJson, type Importable, importJson } from './backup';
import { ContentApiError } from './errors';

/** Times an export starts again after `EXPORT_STALE` (the content changed under it in a way it could not undo). */
export const EXPORT_RESTARTS = 3;

export interface ExportTarget {
  /** The file to write; absent: stdout, once the whole export is in a temporary file. */
  out?: string;
  /** Where the text goes without `out` (process.stdout). */
  stdout: NodeJS.WritableStream;
  /** Says that the export starts again. */
  note: (line: string) => void;
}

/**
 * Exports into a file beside the target (`FILE.partial-<pid>`, or a temporary directory for stdout), pages written as
 * they come; an `EXPORT_STALE` starts it again from the beginning, up to EXPORT_RESTARTS times. Only a whole export
 * reaches the target: renamed onto `out`, or copied to stdout. Resolves to the summary line for `out`.
 */
export async function exportToFile(site: Exportable, target: ExportTarget): Promise<string | undefined> {
  const folder = target.out ? undefined : await mkdtemp(join(tmpdir(), 'content-api-export-'));
  const partial = target.out ? `${target.out}.partial-${process.pid}` : join(folder as string, 'export.json');
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await pipeline(withNewline(exportJson(site)), createWriteStream(partial));
        break;
      } catch (error) {
        if (!(error instanceof ContentApiError && error.code === 'EXPORT_STALE') || attempt >= EXPORT_RESTARTS)
          throw error;
        target.note(
          `the content changed under the export (EXPORT_STALE): starting again (${attempt + 1} of ${EXPORT_RESTARTS})`,
        );
      }
    }
    if (!target.out) {
      await pipeline(createReadStream(partial), target.stdout, { end: false });
      return undefined;
    }
    await rename(partial, target.out);
    return JSON.stringify({ file: target.out, bytes: (await stat(target.out)).size });
  } finally {
    await rm(folder ?? partial, { recursive: true, force: true });
  }
}

async function* withNewline(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  yield* chunks;
  yield '\n';
}

/**
 * Replaces the whole content with the JSON document in `file` (`-`: stdin), read as it is sent. The file is opened
 * before the import starts, so a missing one changes nothing and leaves no session behind.
 */
export async function importFromFile(
  site: Importable,
  file: string,
  opts: { ifMatch?: string; stdin: NodeJS.ReadableStream },
): Promise<{ message: string; etag: string | null }> {
  const handle = file === '-' ? undefined : await open(file, 'r');
  const source = handle ? handle.createReadStream() : opts.stdin;
  try {
    return await importJson(site, source as AsyncIterable<Uint8Array>, { ifMatch: opts.ifMatch });
  } finally {
    await handle?.close();
  }
}
