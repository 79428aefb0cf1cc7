// Whole-content backups (content-api-client/backup): pieces (docs/design/backup.md §1) to one JSON text and back,
// streamed, so memory stays bounded by the piece budget and the depth whatever the size of the document; and
// exportJson/importJson, a project's export and import as that text. Not a JSON parser: a scanner that tracks
// strings, escapes and depth cuts the text, and each bounded value is parsed by the client's parseJson.
import type { ImportOptions, Piece, RequestOptions } from './index';
import { parseJson } from './json';

/** Default largest piece jsonToPieces makes, in UTF-8 bytes of its value's text: pages of two or three pieces. */
export const DEFAULT_PIECE_BYTES = 128 * 1024;
/** The longest scalar (a string, a number) or key read whole; a longer one is refused before it is held. */
const MAX_SCALAR_CHARS = 8 * 1024 * 1024;
/** Containers open at once: far above what the API stores (32 levels), low enough to bound the scanner's stack. */
const MAX_OPEN_DEPTH = 256;
/** How much consumed text the scanner keeps before dropping it. */
const RELEASE_CHARS = 64 * 1024;
const RESERVED_KEY = '__proto__';

export interface JsonToPiecesOptions {
  /** The largest value (UTF-8 bytes of its JSON text) a piece carries whole; a larger object or array is sent open. */
  pieceBytes?: number;
}

/** A JSON Pointer token for an object key (RFC 6901: `~` as `~0`, `/` as `~1`). */
export const pointerToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The object key a JSON Pointer token names. */
export const pointerKey = (token: string): string => token.replace(/~1/g, '/').replace(/~0/g, '~');

/** An empty object or array: in a piece, a container sent open (its members, if any, follow as pieces). */
const isOpening = (value: unknown): value is Record<string, never> | never[] =>
  typeof value === 'object' && value !== null && Object.keys(value).length === 0;

const outOfOrder = (path: string, why: string) => new TypeError(`piece ${JSON.stringify(path)} out of order: ${why}`);

/**
 * One JSON text from pieces in document order: each piece's value written at its path, an empty container kept open
 * until a piece not below it comes. Throws a TypeError on pieces that break the order rules (a member whose container
 * is not open, an array index skipped, a piece after the root closed, none at all).
 */
export async function* piecesToJson(pieces: AsyncIterable<Piece> | Iterable<Piece>): AsyncGenerator<string> {
  const open: Array<{ path: string; array: boolean; count: number }> = [];
  let started = false;
  for await (const { path, value } of pieces) {
    if (value === undefined) throw outOfOrder(path, 'it has no value');
    let text = '';
    while (open.length > 0 && !path.startsWith(`${open.at(-1)?.path}/`)) text += open.pop()?.array ? ']' : '}';
    const parent = open.at(-1);
    if (!parent) {
      if (started) throw outOfOrder(path, 'the document is already complete');
      if (path !== '') throw outOfOrder(path, 'the first piece is the root ("")');
    } else {
      const token = path.slice(parent.path.length + 1);
      if (token.includes('/')) throw outOfOrder(path, 'its container was not sent open');
      if (parent.array && token !== String(parent.count))
        throw outOfOrder(path, `element ${parent.count} comes next in ${JSON.stringify(parent.path)}`);
      if (parent.count++ > 0) text += ',';
      if (!parent.array) {
        const key = pointerKey(token);
        if (key === RESERVED_KEY) throw outOfOrder(path, '"__proto__" cannot be used as a key');
        text += `${JSON.stringify(key)}:`;
      }
    }
    started = true;
    if (isOpening(value)) {
      const array = Array.isArray(value);
      open.push({ path, array, count: 0 });
      text += array ? '[' : '{';
    } else {
      text += JSON.stringify(value);
    }
    yield text;
  }
  if (!started) throw outOfOrder('', 'there were no pieces');
  let tail = '';
  while (open.length > 0) tail += open.pop()?.array ? ']' : '}';
  if (tail) yield tail;
}

/** JSON's whitespace. */
const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
/** Where a bare scalar (a number, true, false, null) ends. */
const endsBare = (code: number) => isSpace(code) || code === 0x2c || code === 0x5d || code === 0x7d;
/** UTF-8 bytes of one UTF-16 code unit (a surrogate pair counts 2 + 2). */
const utf8Bytes = (code: number) => (code < 0x80 ? 1 : code < 0x800 || (code >= 0xd800 && code < 0xe000) ? 2 : 3);

/** A window on the text: what is not consumed yet, pulled from the source as the scanner needs it. */
class Window {
  text = '';
  at = 0;
  /** Characters dropped from the front of `text`: `offset + at` is the position in the whole document. */
  offset = 0;
  private ended = false;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private readonly source: AsyncIterator<string | Uint8Array>;

  constructor(source: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>) {
    const iterable = source as AsyncIterable<string | Uint8Array> & Iterable<string | Uint8Array>;
    this.source = Symbol.asyncIterator in iterable ? iterable[Symbol.asyncIterator]() : toAsync(iterable);
  }

  /** Appends the next chunk; false at the end of the text. */
  async more(): Promise<boolean> {
    while (!this.ended) {
      const next = await this.source.next();
      let chunk: string;
      if (next.done) {
        this.ended = true;
        chunk = this.decode();
      } else {
        chunk = typeof next.value === 'string' ? next.value : this.decode(next.value);
      }
      if (this.offset === 0 && this.text === '' && chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
      if (chunk) {
        this.text += chunk;
        return true;
      }
    }
    return false;
  }

  /** UTF-8 bytes as text (a character cut between two chunks is held until the next); undefined: the end. */
  private decode(bytes?: Uint8Array): string {
    try {
      return bytes ? this.decoder.decode(bytes, { stream: true }) : this.decoder.decode();
    } catch {
      throw this.error('bytes that are not UTF-8', this.text.length);
    }
  }

  /** Drops what was consumed, so the window holds about one piece whatever the document's size. */
  release(): void {
    if (this.at < RELEASE_CHARS) return;
    this.offset += this.at;
    this.text = this.text.slice(this.at);
    this.at = 0;
  }

  /** The next character that is not whitespace (consuming the whitespace), or undefined at the end. */
  async peek(): Promise<string | undefined> {
    for (;;) {
      while (this.at < this.text.length && isSpace(this.text.charCodeAt(this.at))) this.at++;
      if (this.at < this.text.length) return this.text[this.at];
      if (!(await this.more())) return undefined;
    }
  }

  error(message: string, at = this.at): SyntaxError {
    return new SyntaxError(`${message} at position ${this.offset + at} of the JSON text`);
  }

  /**
   * Finds the end of the value starting at `at`: its index in `text`, or undefined for an object or array longer
   * than `budget` UTF-8 bytes (a scalar is read whole, up to MAX_SCALAR_CHARS).
   */
  async end(budget: number): Promise<number | undefined> {
    const first = this.text.charCodeAt(this.at);
    const container = first === 0x7b || first === 0x5b;
    const string = first === 0x22;
    if (first === 0x2c || first === 0x3a || first === 0x5d || first === 0x7d)
      throw this.error(`unexpected ${JSON.stringify(this.text[this.at])}`);
    let depth = 0;
    let quoted = string;
    let escaped = false;
    let bytes = 0;
    for (let i = string ? this.at + 1 : this.at; ; i++) {
      if (i === this.text.length && !(await this.more())) {
        if (string || container) throw this.error('unexpected end', i);
        return i;
      }
      const code = this.text.charCodeAt(i);
      if (!quoted && !container && endsBare(code)) return i;
      bytes += utf8Bytes(code);
      if (container && bytes > budget) return undefined;
      if (!container && i - this.at > MAX_SCALAR_CHARS) throw this.error('a value longer than 8 MiB', this.at);
      if (escaped) escaped = false;
      else if (quoted) {
        if (code === 0x5c) escaped = true;
        else if (code === 0x22) {
          if (string) return i + 1;
          quoted = false;
        }
      } else if (code === 0x22) quoted = true;
      else if (code === 0x7b || code === 0x5b) depth++;
      else if ((code === 0x7d || code === 0x5d) && --depth === 0) return i + 1;
    }
  }

  /** Parses text[at, end) (lossless numbers, exact keys, `__proto__` refused) and consumes it. */
  take(end: number): unknown {
    const source = this.text.slice(this.at, end);
    let value: unknown;
    try {
      value = parseJson(source, { refuseReservedKey: true });
    } catch (error) {
      throw this.error(`${(error as Error).message}: in the value starting`);
    }
    this.at = end;
    return value;
  }
}

async function* toAsync<T>(iterable: Iterable<T>): AsyncGenerator<T> {
  yield* iterable;
}

/**
 * Pieces from one JSON text, read as it comes (strings or UTF-8 bytes, cut anywhere): a value whose text fits
 * `pieceBytes` is one piece, a larger object or array is sent open and its members follow. Numbers keep their exact
 * text; a `__proto__` key or text that is not JSON throws a SyntaxError with its position.
 */
export async function* jsonToPieces(
  source: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
  options: JsonToPiecesOptions = {},
): AsyncGenerator<Piece> {
  const budget = options.pieceBytes ?? DEFAULT_PIECE_BYTES;
  const window = new Window(source);
  const open: Array<{ path: string; array: boolean; count: number }> = [];
  let path = '';
  for (;;) {
    const first = await window.peek();
    if (first === undefined) throw window.error('unexpected end');
    const end = await window.end(budget);
    if (end !== undefined) {
      yield { path, value: window.take(end) };
    } else {
      if (open.length >= MAX_OPEN_DEPTH) throw window.error(`more than ${MAX_OPEN_DEPTH} levels of nesting`);
      const array = first === '[';
      yield { path, value: array ? [] : {} };
      window.at++;
      open.push({ path, array, count: 0 });
    }
    window.release();
    // The next value's path: past the closing brackets and the separator, and its key.
    for (;;) {
      const parent = open.at(-1);
      let next = await window.peek();
      if (!parent) {
        if (next !== undefined) throw window.error('text after the JSON value');
        return;
      }
      if (next === (parent.array ? ']' : '}')) {
        window.at++;
        open.pop();
        continue;
      }
      if (parent.count > 0) {
        if (next !== ',')
          throw window.error(
            next === undefined
              ? 'unexpected end'
              : `expected "," or the end of ${parent.array ? 'the array' : 'the object'}`,
          );
        window.at++;
        next = await window.peek();
      }
      if (parent.array) {
        path = `${parent.path}/${parent.count}`;
      } else {
        if (next !== '"') throw window.error(next === undefined ? 'unexpected end' : 'expected a key');
        const key = window.take((await window.end(budget)) as number) as string;
        if (key === RESERVED_KEY) throw window.error('"__proto__" cannot be used as a key');
        if ((await window.peek()) !== ':') throw window.error('expected ":"');
        window.at++;
        path = `${parent.path}/${pointerToken(key)}`;
      }
      parent.count++;
      break;
    }
  }
}

/** What `exportPieces` needs of a project (`createClient(...).project(name)`). */
export interface Exportable {
  exportPieces(opts?: RequestOptions): AsyncIterable<Piece>;
}

/** What `importPieces` needs of a project. */
export interface Importable {
  importPieces(pieces: AsyncIterable<Piece>, opts?: ImportOptions): Promise<{ message: string; etag: string | null }>;
}

/**
 * The whole content as one JSON text, chunk after chunk as the export's pages come (constant memory at any size):
 * write the chunks to a file or a stream. An `EXPORT_STALE` error means the content changed in a way the export
 * could not undo: discard what was written and start again.
 */
export async function* exportJson(site: Exportable, opts: RequestOptions = {}): AsyncGenerator<string> {
  yield* piecesToJson(site.exportPieces(opts));
}

/**
 * Replaces the whole content with one JSON text (an object), read as it comes from `source` (a Node stream, a web
 * ReadableStream, any iterable of strings or bytes) and sent in pages: nothing changes unless all of it lands. A text
 * that is not JSON throws a SyntaxError, and the import is abandoned.
 */
export function importJson(
  site: Importable,
  source: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
  opts: ImportOptions & JsonToPiecesOptions = {},
): Promise<{ message: string; etag: string | null }> {
  return site.importPieces(jsonToPieces(source, opts), opts);
}
