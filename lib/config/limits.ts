// Limits: the numbers the service enforces itself, so every DynamoDB engine gives the same answer.

/**
 * Levels of nesting in total, counting the content root and the values at the bottom. DynamoDB nests maps and
 * lists at most 31 deep below an attribute, so objects and arrays (the root included) may nest 31 deep and a
 * path may have at most 31 segments.
 */
export const MAX_DEPTH = 32;
/** Objects and arrays nested in one another, counting the root: one less than MAX_DEPTH, as leaves take a level. */
export const MAX_CONTAINER_DEPTH = MAX_DEPTH - 1;
/** Longest object key accepted, in characters. */
export const MAX_KEY_LENGTH = 1024;
/** The one key JavaScript treats specially on assignment; rejected everywhere so it never reaches a prototype. */
export const RESERVED_KEY = '__proto__';
/** Longest accepted path string, in characters. */
export const MAX_PATH_LENGTH = 2048;
/** Largest accepted request body, in bytes (checked before parsing). */
export const MAX_BODY_BYTES = 512 * 1024;
/** DynamoDB stores magnitudes below 1E+126 (exclusive: the double nearest 9.99..9E+125 is 1E+126 itself). */
export const MAX_NUMBER_MAGNITUDE = 1e126;
/** Smallest non-zero magnitude DynamoDB stores in a Number. */
export const MIN_NUMBER_MAGNITUDE = 1e-130;
/** Attempts for read-then-write paths racing other writers before giving up with 409. */
export const MAX_WRITE_ATTEMPTS = 60;
/**
 * Largest value that stays whole in one segment (a string, an array element, an array directly in an array), in
 * DynamoDB's bytes; the rest of the 400 KB item is left for keys and bookkeeping. Content as a whole has no limit.
 */
export const MAX_CONTENT_BYTES = 350 * 1024;
/** Largest value one GET returns, in DynamoDB's bytes: a Lambda's response holds 6 MB, JSON text a little more. */
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
/**
 * How many commits a read at a point in the history may undo: it reaches back over every commit of the project since
 * that point, so this bounds its work (about 1.4 KB and a third of a read unit each, at writes of 1 KB).
 */
export const MAX_REWIND_ENTRIES = 5000;
/** API keys one project may hold (grant items, counted in the project's head). */
export const MAX_KEYS_PER_PROJECT = 100;
/** Members one project may have (grant items, counted in the project's head). */
export const MAX_MEMBERS_PER_PROJECT = 200;
/** Webhooks one project may have (counted in the head's `nw`). */
export const MAX_WEBHOOKS_PER_PROJECT = 10;
/** Longest webhook URL, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;
/** Longest lifetime of an API key or a session, in seconds (10 years of 365 days): a bound every date can show. */
export const MAX_EXPIRES_IN_SECONDS = 10 * 365 * 24 * 3600;
/** Elements an array slice of GET content (`start`/`limit`) returns when `limit` is left out. */
export const DEFAULT_SLICE_LIMIT = 100;
/** Most elements one array slice returns (`limit`), and most keys one page of an object's keys. */
export const MAX_SLICE_LIMIT = 1000;
/** How long a request named by an Idempotency-Key is remembered (its Powertools record and its own record), in seconds. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
/** Longest `after` (a page of keys' cursor) accepted: it holds a key (1,024 characters, up to 3 bytes each) and a bucket path. */
export const MAX_CURSOR_LENGTH = 8192;
/**
 * Reads of the content one export page makes at most (a member's walk from the root: a GetItem per segment on the
 * way and a Query below, a page of keys, a slice): a page of many small members ends there, shorter than its bytes
 * allow, well within a Lambda's 10 s (400 timed out on a loaded 2-core machine; see bench/results/export-*.md).
 */
export const EXPORT_PAGE_READS = 100;
