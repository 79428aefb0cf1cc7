// Route table of the backup routes (GET export), for the API docs.
import type { RouteDoc } from './route-doc';
import { ACCESS_ERRORS } from './route-doc';

const PROJECT = '/api/{username}/{projectSlug}';

const pieceSchema = {
  type: 'object',
  properties: {
    path: {
      type: 'string',
      description:
        'Where the value goes: a JSON Pointer (RFC 6901), `""` the whole content, `~1` a `/` in a key, `~0` a `~`.',
    },
    value: {
      description:
        "The value there, whole; `{}` or `[]` with pieces below this path following it when the container is too large for one piece (an array's elements in index order from 0).",
    },
  },
  required: ['path', 'value'],
};

export const EXPORT_ROUTES: readonly RouteDoc[] = [
  {
    method: 'GET',
    path: `${PROJECT}/export`,
    operationId: 'exportContent',
    tag: 'content',
    summary: 'Export the whole content, page by page, at one revision',
    description:
      'The whole content as pieces, depth-first: a value that fits a piece (at most 256 KiB) whole, a larger object or array open (`{}`/`[]`) with its members as pieces after it. Pass `cursor` back until it is null; every page reads the same `revision` (the newest the history held when the first page was asked for), so a change made during the export is not half in it. A page holds at most 1 MiB of pieces and a bounded number of reads (a page of many small members may hold less). Needs read access to the whole content (the owner, a member, a key with `content:read` and no path limit; rules that grant a read at the root). 409 `EXPORT_STALE` when the content changed since the revision in a way a page cannot undo (a member of an object or array being paged was deleted, a container being paged was rewritten, a change too large to keep, or more than 5000 changes): start a new export. An object paged comes in its key-page order; values are exact (numbers to every digit).',
    query: [
      {
        name: 'cursor',
        required: false,
        description: 'The `cursor` of the previous page; left out: the first page, which fixes the revision.',
        schema: { type: 'string', minLength: 1 },
        example: 'eyJwIjoi...',
      },
    ],
    success: {
      status: 200,
      description: 'A page of pieces, its revision, and the cursor of the next page (null after the last).',
      schema: {
        type: 'object',
        properties: {
          revision: { type: 'string', description: 'The revision every page of this export reads.' },
          pieces: { type: 'array', items: pieceSchema },
          cursor: {
            type: ['string', 'null'],
            description: 'Pass as `cursor` for the next page; null: the export is done.',
          },
        },
        required: ['revision', 'pieces', 'cursor'],
      },
      example: {
        revision: '0000000000000000000000000000000001234567',
        pieces: [
          { path: '', value: {} },
          { path: '/settings', value: { theme: 'dark' } },
          { path: '/items', value: [] },
          { path: '/items/0', value: { id: 1 } },
        ],
        cursor: null,
      },
    },
    errors: [...ACCESS_ERRORS, 'INVALID_CURSOR', 'EXPORT_STALE', 'SERVICE_UNAVAILABLE'],
  },
];
