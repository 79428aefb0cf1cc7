// content-api-client: the client as a command for CI pipelines. The credential comes from the environment only (CI logs
// arguments); the result is JSON on stdout, an error's code on stderr, and the exit code says which kind of failure.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type BatchOperation, ContentApiError, createClient, type WriteOptions } from './index';
import { exportToFile, importFromFile } from './cli-backup';
import { parseJson } from './json';

export { parseJson } from './json';

/** The command's name: the package's bin, named like the package so `npx` can only ever resolve to this package. */
export const COMMAND = 'content-api-client';

const USAGE = `Usage: ${COMMAND} <command> [arguments] [options]

Commands:
  get [path]                       the whole content, or the value at path (--shallow, or --start/--limit;
                                   --at <revision|time>: as it was then)
  history [path]                   who changed what at path, newest first, one JSON entry a line (--limit n:
                                   at most n entries)
  restore [path] --at <rev|time>   set path (or the whole content) back to what it was then, as one write
  export [--out f]                 the whole content as one JSON document, at one revision, streamed (any
                                   size): to f (written whole, then renamed), or to stdout once complete
  import <f>                       replace the whole content with the JSON document in f ("-": stdin),
                                   streamed, all at once or not at all (the owner, or a key with
                                   content:write and no path limit; --if-match applies to the switch)
  set <path> <value>               write a value
  push <path> <value>              append to an array
  insert <path> <value> --index n  insert into an array at n (negative counts from the end)
  increment <path> [--by n]        add n (default 1)
  decrement <path> [--by n]        subtract n (default 1)
  delete <path>                    remove a key or array element
  update [--file f]                replace the whole content with the object in f
  batch [--file f]                 apply {"operations":[...]} (or a bare array) all or none
  patch [--file f]                 a JSON Patch (array) or JSON Merge Patch (object); needs the PATCH route
  rules test [--file f]            run access-rule cases {"rules"?, "cases": [{auth, operation, path, value?,
                                   allowed}]} through the rules tester (the owner's session or JWT in
                                   CONTENT_API_KEY); exit code 4 when a case's verdict is not its "allowed"

Values are JSON; --string takes <value> verbatim; "-" reads it from stdin. --file defaults to stdin.

Options:
  -p, --project @user/slug   the project (default: CONTENT_API_PROJECT)
  --if-match <etag>          write only if the content is still at this version
  --idempotency-key <key>    the request's Idempotency-Key (default: a new UUID, kept across retries)
  --string                   take <value> as a string, verbatim
  --shallow                  get: an object's keys each with true, an array's length as {"length":n}
  --start <n> --limit <n>    get: a slice of an array from n (negative from the end: --start=-10), at most --limit elements
  --shallow --limit <n> [--after <next>]
                             get: a page of an object's keys; the output's next is the next page's --after
  --out <f>                  export: the file to write (default: stdout)
  --raw                      print the bare value (get) or the new ETag (writes) instead of JSON
  -h, --help                 this text
  -v, --version              the version of this command

Environment: CONTENT_API_URL (e.g. https://api.example.com), CONTENT_API_KEY (never pass it as an argument),
CONTENT_API_PROJECT.

Exit codes: 0 ok, 1 usage or invalid request, 2 not found, 3 unauthorised or forbidden,
4 conflict or failed precondition, 5 server or network error.
`;

class UsageError extends Error {}

/** Some rule case's verdict was not the one expected (exit code 4); the report is printed first. */
class CasesFailed extends Error {}

interface RuleCase {
  auth?: unknown;
  operation: 'read' | 'write';
  path: string;
  value?: unknown;
  allowed: boolean;
}

/** `rules test`: each case through the tester, on `rules` when the file gives them, else the stored ones. */
async function runRuleCases(
  site: ReturnType<ReturnType<typeof createClient>['project']>,
  verb: string | undefined,
  input: unknown,
): Promise<string> {
  if (verb !== 'test') throw new UsageError('rules takes test');
  const doc = (Array.isArray(input) ? { cases: input } : input) as { rules?: unknown[]; cases?: RuleCase[] };
  if (!doc || !Array.isArray(doc.cases)) throw new UsageError('rules test takes {"rules"?, "cases": [...]}');
  const failed: unknown[] = [];
  for (const [index, c] of doc.cases.entries()) {
    const body = { auth: c.auth ?? null, operation: c.operation, path: c.path, value: c.value, rules: doc.rules };
    const verdict = await site.rules.test(body as never);
    if (verdict.allowed !== c.allowed) failed.push({ index, ...c, got: verdict.allowed, reason: verdict.reason });
  }
  const report = JSON.stringify({ cases: doc.cases.length, failed });
  if (failed.length === 0) return report;
  process.stdout.write(`${report}\n`);
  throw new CasesFailed(`${failed.length} of ${doc.cases.length} rule cases got another verdict`);
}

/** The exit code for an error status: distinct per kind of failure, so scripts can branch on it. */
export function exitCodeFor(status: number): number {
  if (status === 404) return 2;
  if (status === 401 || status === 403) return 3;
  if (status === 409 || status === 412 || status === 422) return 4;
  if (status >= 400 && status < 500) return 1;
  return 5;
}

/** What the command says about itself: its package's version (read by bin.ts from client/package.json). */
export interface CommandInfo {
  version: string;
}

/** Runs the command on `argv`, printing to stdout/stderr; resolves to the process's exit code. */
export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv,
  readStdin: () => string,
  info: CommandInfo,
): Promise<number> {
  let args: ReturnType<typeof parse>;
  try {
    if (argv.some((a) => /^--(key|api-key|token|credential)(=|$)/.test(a)))
      throw new UsageError('the credential is read from CONTENT_API_KEY only, never from arguments (CI logs them)');
    args = parse(argv);
    if (args.values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    if (args.values.version) {
      process.stdout.write(`${COMMAND} ${info.version}\n`);
      return 0;
    }
    const result = await run(args, env, readStdin);
    if (result !== undefined) process.stdout.write(`${result}\n`);
    return 0;
  } catch (error) {
    if (error instanceof ContentApiError) {
      process.stderr.write(`${COMMAND}: ${apiErrorLine(error)}\n`);
      return exitCodeFor(error.status);
    }
    if (error instanceof CasesFailed) {
      process.stderr.write(`${COMMAND}: ${error.message}\n`);
      return 4;
    }
    const message = usageMessage(error);
    process.stderr.write(`${COMMAND}: ${message}\nRun ${COMMAND} --help for the usage.\n`);
    return error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? 1 : 5;
  }
}

/**
 * What the service answered, for stderr: its code, the failing batch operation, the message and the HTTP status; no
 * status when nothing answered (a network error has none: `[HTTP 0]` would only puzzle).
 */
export function apiErrorLine(error: ContentApiError): string {
  const at = error.index === undefined ? '' : ` (operation ${error.index})`;
  const status = error.status > 0 ? ` [HTTP ${error.status}]` : '';
  return `${error.code}${at}: ${error.message}${status}`;
}

/**
 * A usage error's message. Node's own for an unknown option ends on an unbalanced quote (`as in '-- "--x"`), so
 * that one is said again in full.
 */
export function usageMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const unknown = /Unknown option '([^']*)'/.exec(message);
  if ((error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) {
    const option = unknown[1] as string;
    return `unknown option '${option}' (a value that starts with '-' goes after '--', as in: -- '${option}')`;
  }
  return message;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      project: { type: 'string', short: 'p' },
      'if-match': { type: 'string' },
      'idempotency-key': { type: 'string' },
      string: { type: 'boolean' },
      raw: { type: 'boolean' },
      file: { type: 'string', short: 'f' },
      out: { type: 'string', short: 'o' },
      index: { type: 'string' },
      by: { type: 'string' },
      shallow: { type: 'boolean' },
      start: { type: 'string' },
      limit: { type: 'string' },
      after: { type: 'string' },
      at: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
  });
}

async function run(
  args: ReturnType<typeof parse>,
  env: NodeJS.ProcessEnv,
  readStdin: () => string,
): Promise<string | undefined> {
  const { values, positionals } = args;
  const [command, ...rest] = positionals;
  const need = (count: number, names: string) => {
    if (rest.length !== count) throw new UsageError(`${command} takes ${names || 'no arguments'}`);
    return rest as string[];
  };
  /** JSON text, or a usage error; `--string` is suggested only where it applies (a value, never a body or file). */
  const json = (text: string, what: string, hint = '') => {
    try {
      return parseJson(text);
    } catch (error) {
      throw new UsageError(`${what} is not valid JSON${hint || ` (${(error as Error).message})`}`);
    }
  };
  const value = (arg: string) => {
    const text = arg === '-' ? readStdin() : arg;
    return values.string ? text : json(text, 'the value', ' (use --string for a string)');
  };
  const file = (): unknown => {
    const name = values.file ?? '-';
    let text: string;
    try {
      text = name === '-' ? readStdin() : readFileSync(name, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read ${name}: ${(error as Error).message}`);
    }
    return json(text, name === '-' ? 'stdin' : name);
  };
  const number = (text: string | undefined, option: string) => {
    if (text === undefined) return undefined;
    const parsed = json(text, option);
    const kind = typeof parsed === 'number' || (JSON as { isRawJSON?: (v: unknown) => boolean }).isRawJSON?.(parsed);
    if (!kind) throw new UsageError(`${option} must be a number`);
    return parsed as number;
  };

  const url = env.CONTENT_API_URL;
  const key = env.CONTENT_API_KEY;
  const name = values.project ?? env.CONTENT_API_PROJECT;
  if (!command) throw new UsageError('no command');
  if (!url) throw new UsageError('CONTENT_API_URL is not set');
  if (!key) throw new UsageError('CONTENT_API_KEY is not set');
  if (!name) throw new UsageError('no project: pass --project @user/slug or set CONTENT_API_PROJECT');
  let site: ReturnType<ReturnType<typeof createClient>['project']>;
  try {
    site = createClient({ baseUrl: url, credential: key, parse: parseJson }).project(name);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const opts: WriteOptions = { ifMatch: values['if-match'], idempotencyKey: values['idempotency-key'] };

  let result: { etag: string | null; value?: unknown };
  switch (command) {
    case 'get': {
      if (rest.length > 1) throw new UsageError('get takes at most a path');
      result = await site.get(rest[0], {
        shallow: values.shallow,
        start: number(values.start, '--start'),
        limit: number(values.limit, '--limit'),
        after: values.after,
        at: values.at,
      });
      break;
    }
    case 'history': {
      if (rest.length > 1) throw new UsageError('history takes at most a path');
      const most = number(values.limit, '--limit');
      const lines: string[] = [];
      for await (const entry of site.historyEntries(rest[0], { limit: Math.min(100, most ?? 100) })) {
        lines.push(JSON.stringify(entry));
        if (most !== undefined && lines.length >= most) break;
      }
      return lines.join('\n');
    }
    case 'restore': {
      if (rest.length > 1) throw new UsageError('restore takes at most a path, and --at');
      if (values.at === undefined) throw new UsageError('restore needs --at <revision|time>');
      result = await site.restore(rest[0], values.at, opts);
      break;
    }
    case 'set':
    case 'push': {
      const [path, arg] = need(2, '<path> <value>');
      result = await site[command](path!, value(arg!), opts);
      break;
    }
    case 'insert': {
      const [path, arg] = need(2, '<path> <value> --index n');
      const index = number(values.index, '--index');
      if (index === undefined) throw new UsageError('insert needs --index');
      result = await site.insert(path!, value(arg!), index, opts);
      break;
    }
    case 'increment':
    case 'decrement': {
      const [path] = need(1, '<path> [--by n]');
      result = await site[command](path!, number(values.by, '--by'), opts);
      break;
    }
    case 'delete': {
      const [path] = need(1, '<path>');
      result = await site.delete(path!, opts);
      break;
    }
    case 'update': {
      need(0, '');
      const content = file();
      if (!content || typeof content !== 'object' || Array.isArray(content))
        throw new UsageError('update takes a JSON object (the whole new content)');
      result = await site.update(content as Record<string, unknown>, opts);
      break;
    }
    case 'batch': {
      need(0, '');
      const body = file() as { operations?: BatchOperation[] } | BatchOperation[];
      result = await site.batch(Array.isArray(body) ? body : (body?.operations as BatchOperation[]), opts);
      break;
    }
    case 'patch': {
      need(0, '');
      const body = file();
      if (!body || typeof body !== 'object')
        throw new UsageError('patch takes a JSON Patch array or a merge patch object');
      result = Array.isArray(body) ? await site.patch(body, opts) : await site.mergePatch(body as never, opts);
      break;
    }
    case 'rules':
      return runRuleCases(site, need(1, 'test [--file f]')[0], file());
    case 'export': {
      need(0, '');
      const note = (line: string) => process.stderr.write(`${COMMAND}: ${line}\n`);
      return exportToFile(site, { out: values.out, stdout: process.stdout, note });
    }
    case 'import': {
      const [name] = need(1, '<file> (or - for stdin)');
      try {
        result = await importFromFile(site, name!, { ifMatch: opts.ifMatch, stdin: process.stdin });
      } catch (error) {
        if (error instanceof SyntaxError) throw new UsageError(`${name} is not valid JSON (${error.message})`);
        if ((error as { code?: string }).code === 'ENOENT' || (error as { code?: string }).code === 'EISDIR')
          throw new UsageError(`cannot read ${name}: ${(error as Error).message}`);
        throw error;
      }
      break;
    }
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
  if (!values.raw) return JSON.stringify(result);
  const bare = command === 'get' ? result.value : result.etag;
  return typeof bare === 'string' ? bare : JSON.stringify(bare);
}
