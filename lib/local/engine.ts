// Embedded DynamoDB: dynalite in-process on LevelDB under DATA_DIR, for `npm start` and the tests. Never bundled.
import Big from 'big.js';
import dynalite from 'dynalite';
import db from 'dynalite/db';
import putItemValidation from 'dynalite/validations/putItem';
import updateItemValidation from 'dynalite/validations/updateItem';
import deleteItemValidation from 'dynalite/validations/deleteItem';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { numberProblem as storableNumberProblem } from '../content/json';
import { trackRequests } from './drain';
import { recordWrite } from './stream';
import { addTransactions } from './transactions';

let patched = false;

/** DynamoDB's Number rules, which dynalite checks on input but not on the results of `+` and `-`. */
function numberProblem(value: unknown): string | undefined {
  if (Array.isArray(value)) {
    for (const v of value) {
      const problem = numberProblem(v);
      if (problem) return problem;
    }
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const attribute = value as { N?: string; L?: unknown[]; M?: Record<string, unknown> };
  if (attribute.N !== undefined) {
    // The service's own rule (lib/content/json.ts), answered in DynamoDB's words.
    const n = new Big(attribute.N);
    const problem = storableNumberProblem(n);
    if (problem === 'NUMBER_TOO_PRECISE') return 'Attempting to store more than 38 significant digits in a Number';
    if (problem === undefined) return undefined;
    return n.abs().gte(1)
      ? 'Number overflow. Attempting to store a number with magnitude larger than supported range'
      : 'Number underflow. Attempting to store a number with magnitude smaller than supported range';
  }
  return numberProblem(attribute.L ?? Object.values(attribute.M ?? {}));
}

type Attribute = { M?: Record<string, Attribute>; L?: Attribute[]; [type: string]: unknown };
type Condition = { type: string; name?: string; args: Array<Condition | Array<string | number> | Attribute> };

/**
 * dynalite resolves a document path with `map[key]`, so `constructor`, `toString` and the other `Object.prototype`
 * members "exist" in every map (and its projection writes through them into the global `Object`). DynamoDB knows
 * only the item's own keys: these resolve paths through own properties, as dynalite's mapPath would otherwise.
 */
function mapOwnPath(path: Array<string | number>, item: Record<string, Attribute>): Attribute | undefined {
  let resolved: Attribute | undefined = { M: item };
  for (const piece of path) {
    const container: Record<string, Attribute> | Attribute[] | undefined =
      typeof piece === 'number' && resolved.L ? resolved.L : resolved.M;
    resolved =
      container && Object.hasOwn(container, piece) ? (container as Record<string, Attribute>)[piece] : undefined;
    if (resolved == null) return undefined;
  }
  return resolved;
}

/** dynalite's mapPaths (projections, ReturnValues) over own keys, building maps without a prototype. */
function mapOwnPaths(
  paths: Array<string | Array<string | number>>,
  item: Record<string, Attribute>,
): Record<string, Attribute> {
  const projected: Record<string, Attribute> = Object.create(null);
  const toSquash = new Set<Attribute>();
  for (const entry of paths) {
    const path = Array.isArray(entry) ? entry : [entry];
    const resolved = mapOwnPath(path, item);
    if (resolved == null) continue;
    let current: Attribute = { M: projected };
    path.forEach((piece, i) => {
      const last = i === path.length - 1;
      if (typeof piece === 'number') {
        current.L ??= [];
        if (piece > current.L.length) toSquash.add(current);
        current = current.L[piece] = last ? resolved : (current.L[piece] ?? {});
      } else {
        current.M ??= Object.create(null) as Record<string, Attribute>;
        current = current.M[piece] = last ? resolved : (current.M[piece] ?? {});
      }
    });
  }
  for (const list of toSquash) list.L = list.L!.filter(Boolean);
  return projected;
}

/** dynalite's condition evaluation (matchesExprFilter, resolveArg) with paths resolved by mapOwnPath. */
function matchesOwnCondition(item: Record<string, Attribute>, expression: Condition): boolean {
  const [first, second] = expression.args as Condition[];
  if (expression.type === 'and') return matchesOwnCondition(item, first!) && matchesOwnCondition(item, second!);
  if (expression.type === 'or') return matchesOwnCondition(item, first!) || matchesOwnCondition(item, second!);
  if (expression.type === 'not') return !matchesOwnCondition(item, first!);
  const args = expression.args.map((arg) => resolveOwnArg(arg, item));
  return db.compare(expression.type === 'function' ? expression.name! : expression.type, args[0], args.slice(1));
}

function resolveOwnArg(arg: Condition['args'][number], item: Record<string, Attribute>): Attribute | undefined | null {
  if (Array.isArray(arg)) return mapOwnPath(arg, item);
  if (arg.type !== 'function' || arg.name !== 'size') return arg as Attribute;
  const value = resolveOwnArg((arg as Condition).args[0]!, item);
  if (!value) return null;
  const sized =
    value.S ??
    (value.B ? Buffer.from(value.B as string, 'base64') : undefined) ??
    value.SS ??
    value.BS ??
    value.NS ??
    value.L;
  const length =
    (sized as { length: number } | undefined)?.length ?? (value.M ? Object.keys(value.M).length : undefined);
  return length != null ? { N: String(length) } : null;
}

function conditionalCheckFailed(): Error & { body: Record<string, unknown> } {
  const message = 'The conditional request failed';
  const body = { __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException', message };
  return Object.assign(new Error(message), { statusCode: 400, body });
}

/**
 * Three differences from DynamoDB that matter here. dynalite finds `Object.prototype` members in every map (above).
 * dynalite ignores ReturnValuesOnConditionCheckFailure, while DynamoDB returns the old item with the failed condition: returning it here too makes the embedded engine cost
 * what DynamoDB costs (no follow-up read on that path). And dynalite stores arithmetic results DynamoDB refuses.
 */
function returnOldItemOnConditionFailure(): void {
  if (patched) return;
  patched = true;
  // dynalite drops request fields its validation does not list, so the option has to be listed first.
  for (const validation of [putItemValidation, updateItemValidation, deleteItemValidation]) {
    validation.types.ReturnValuesOnConditionCheckFailure = { type: 'String', enum: ['ALL_OLD', 'NONE'] };
  }
  db.mapPath = mapOwnPath;
  db.mapPaths = mapOwnPaths;
  const check = db.checkConditional;
  db.checkConditional = (data, existing) => {
    const condition = data._condition as { expression: Condition } | undefined;
    const error = condition
      ? matchesOwnCondition((existing ?? {}) as Record<string, Attribute>, condition.expression)
        ? null
        : conditionalCheckFailed()
      : check(data, existing);
    if (error?.body && existing && data.ReturnValuesOnConditionCheckFailure === 'ALL_OLD') error.body.Item = existing;
    return error;
  };
  // updateItem hands the updated item here just before storing it: refuse what DynamoDB refuses, as DynamoDB does.
  const updateIndexes = db.updateIndexes;
  db.updateIndexes = (store, table, existing, item, cb) => {
    const problem = item ? numberProblem(Object.values(item)) : undefined;
    if (problem) return cb(db.validationError(problem));
    return updateIndexes(store, table, existing, item, (error) => {
      // The write is accepted: this is where DynamoDB Streams would record it.
      if (!error) recordWrite(table as never, existing, item);
      cb(error);
    });
  };
}

/** How long a closing engine waits for its requests in flight (a transaction is a few LevelDB operations). */
const ENGINE_DRAIN_MS = 2_000;

export interface Engine {
  endpoint: string;
  close(): Promise<void>;
}

/** Starts dynalite on 127.0.0.1:port (0 picks a free one); `dataDir` persists it, undefined keeps it in memory. */
export async function startEngine(options: { port: number; dataDir?: string }): Promise<Engine> {
  returnOldItemOnConditionFailure();
  const server: Server = dynalite({ path: options.dataDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  addTransactions(server);
  const requests = trackRequests(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    // Its requests answered before dynalite closes LevelDB: one still running would meet a closed database.
    close: () => requests.close({ graceMs: ENGINE_DRAIN_MS, untilClosed: true }),
  };
}
