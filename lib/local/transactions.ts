// Transactions for the embedded engine: TransactWriteItems and TransactGetItems with DynamoDB's semantics, which
// dynalite lacks. Every request to the engine passes a gate: plain requests share it, a transaction holds it alone,
// so no request ever sees half of one. Conditions are checked with dynalite's own parser and evaluator before
// anything is written; the writes are then sent to dynalite itself, and undone if one of them is refused.
// Where DynamoDB Local departs from DynamoDB's documented answers, this follows DynamoDB: two actions on one item
// are a ValidationException (DynamoDB Local evaluates both), and a write the engine refuses while applying (a bad
// document path, a number out of range) cancels the transaction with a `ValidationError` reason (DynamoDB Local
// answers a ValidationException). Holding the gate alone, a transaction never meets a concurrent one, so the
// embedded engine never answers TransactionConflict; callers' handling of it is tested by injecting it.
import db from 'dynalite/db';
import validations from 'dynalite/validations';
import deleteItemValidation from 'dynalite/validations/deleteItem';
import putItemValidation from 'dynalite/validations/putItem';
import updateItemValidation from 'dynalite/validations/updateItem';
import { createHash } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { holdRecords } from './stream';

type Attributes = Record<string, unknown>;
type Item = Record<string, Attributes>;
type Operation = 'Put' | 'Update' | 'Delete' | 'ConditionCheck';

interface Action {
  operation: Operation;
  data: Attributes & { TableName: string };
  key: Item;
}

interface EngineAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** DynamoDB's limits for one transaction. */
const MAX_ACTIONS = 100;
const MAX_BYTES = 4 * 1024 * 1024;
/** How long DynamoDB remembers a ClientRequestToken. */
const TOKEN_MS = 10 * 60 * 1000;
const TARGET_PREFIX = 'DynamoDB_20120810.';
/** Marks the engine requests a transaction makes itself: they pass the gate the transaction holds. */
const INNER = 'x-content-api-transaction';

/** Shared by plain requests, held alone by a transaction; waiters are admitted in arrival order. */
class Gate {
  private shared = 0;
  private exclusive = false;
  private readonly waiting: Array<{ alone: boolean; go: () => void }> = [];

  async enter(alone: boolean): Promise<() => void> {
    if (this.waiting.length === 0 && this.admits(alone)) this.take(alone);
    // wake() takes the gate on the waiter's behalf before it resumes.
    else await new Promise<void>((go) => this.waiting.push({ alone, go }));
    let left = false;
    return () => {
      if (left) return;
      left = true;
      if (alone) this.exclusive = false;
      else this.shared--;
      this.wake();
    };
  }

  private admits(alone: boolean): boolean {
    return !this.exclusive && (!alone || this.shared === 0);
  }

  private take(alone: boolean): void {
    if (alone) this.exclusive = true;
    else this.shared++;
  }

  private wake(): void {
    while (this.waiting.length > 0 && this.admits((this.waiting[0] as { alone: boolean }).alone)) {
      const next = this.waiting.shift() as { alone: boolean; go: () => void };
      this.take(next.alone);
      next.go();
    }
  }
}

const error = (status: number, type: string, message: string, extra: Record<string, unknown> = {}): EngineAnswer => ({
  status,
  body: { __type: `com.amazonaws.dynamodb.v20120810#${type}`, message, ...extra },
});
const validationError = (message: string) => ({
  status: 400,
  body: { __type: 'com.amazon.coral.validate#ValidationException', message },
});

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, answer: EngineAnswer): void {
  const body = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    'Content-Type': 'application/x-amz-json-1.0',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** The item's key attributes in a stable text, to find two actions on one item. */
const keyText = (table: string, key: Item) =>
  JSON.stringify([
    table,
    Object.keys(key)
      .sort()
      .map((name) => [name, key[name]]),
  ]);

const VALIDATION_OF: Record<
  Operation,
  { types: Record<string, unknown>; custom?: (data: Attributes, store: unknown) => unknown }
> = {
  Put: putItemValidation,
  Update: updateItemValidation,
  Delete: deleteItemValidation,
  // A ConditionCheck takes what a DeleteItem takes: a key and a condition.
  ConditionCheck: deleteItemValidation,
};

/** Parses one action's expressions with dynalite's own validation; a refusal is DynamoDB's ValidationException. */
function parseAction(entry: Record<string, Attributes>): Action | EngineAnswer {
  const operations = (Object.keys(entry) as Operation[]).filter((name) => name in VALIDATION_OF);
  if (operations.length !== 1) {
    return validationError('TransactItems can only contain one of Check, Put, Update or Delete');
  }
  const operation = operations[0] as Operation;
  const data = { ...(entry[operation] as Attributes) } as Attributes & { TableName: string };
  const validation = VALIDATION_OF[operation];
  try {
    const typed = validations.checkTypes(data, validation.types) as Attributes & { TableName: string };
    validations.checkValidations(typed, validation.types, validation.custom, { options: { maxItemSize: 400 * 1024 } });
    return { operation, data: typed, key: (operation === 'Put' ? typed.Item : typed.Key) as Item };
  } catch (thrown) {
    const failure = thrown as { statusCode?: number; body?: Record<string, unknown> };
    if (failure.statusCode && failure.body) return { status: failure.statusCode, body: failure.body };
    throw thrown;
  }
}

/**
 * Puts the gate in front of dynalite's request handler and answers TransactWriteItems and TransactGetItems itself.
 */
export function addTransactions(server: Server): void {
  const [engineHandler] = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  if (!engineHandler) throw new Error('the engine has no request handler');
  server.removeAllListeners('request');
  const gate = new Gate();
  const tokens = new Map<string, { digest: string; until: number; answer: EngineAnswer }>();
  const innerMark = createHash('sha256')
    .update(String(Math.random()) + Date.now())
    .digest('hex');

  /** One request to dynalite itself, past the gate (the transaction holds it). */
  const inner = (target: string, headers: IncomingMessage['headers'], body: unknown): Promise<EngineAnswer> =>
    new Promise((resolve, reject) => {
      const { port } = server.address() as AddressInfo;
      const text = JSON.stringify(body);
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/',
          headers: {
            authorization: headers.authorization ?? '',
            'x-amz-date': headers['x-amz-date'] ?? '',
            'content-type': 'application/x-amz-json-1.0',
            'x-amz-target': `${TARGET_PREFIX}${target}`,
            'content-length': Buffer.byteLength(text),
            [INNER]: innerMark,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const raw = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 500, body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {} });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(text);
    });

  const keyNames = new Map<string, string[]>();
  /** The key attributes of an item (a Put names the whole item), from the table's key schema. */
  const keyOf = async (
    headers: IncomingMessage['headers'],
    table: string,
    item: Item,
  ): Promise<Item | EngineAnswer> => {
    let names = keyNames.get(table);
    if (!names) {
      const answer = await inner('DescribeTable', headers, { TableName: table });
      if (answer.status !== 200) return answer;
      const schema = (answer.body.Table as { KeySchema: Array<{ AttributeName: string }> }).KeySchema;
      names = schema.map((k) => k.AttributeName);
      keyNames.set(table, names);
    }
    const key: Item = {};
    for (const name of names) if (item[name] !== undefined) key[name] = item[name] as Attributes;
    return key;
  };

  const read = async (headers: IncomingMessage['headers'], table: string, key: Item): Promise<Item | undefined> => {
    const answer = await inner('GetItem', headers, { TableName: table, Key: key, ConsistentRead: true });
    if (answer.status !== 200) throw Object.assign(new Error('read failed'), { answer });
    return answer.body.Item as Item | undefined;
  };

  async function transactWrite(
    headers: IncomingMessage['headers'],
    body: Record<string, unknown>,
  ): Promise<EngineAnswer> {
    const entries = body.TransactItems;
    if (!Array.isArray(entries) || entries.length === 0) {
      return validationError(
        "1 validation error detected: Value null at 'transactItems' failed to satisfy constraint: Member must not be null",
      );
    }
    if (entries.length > MAX_ACTIONS) {
      return validationError(
        `1 validation error detected: Value '[...]' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to ${MAX_ACTIONS}`,
      );
    }
    if (Buffer.byteLength(JSON.stringify(entries)) > MAX_BYTES) {
      return validationError('Transaction request size exceeds the maximum allowed size of 4 MB');
    }
    const actions: Action[] = [];
    const seen = new Set<string>();
    for (const entry of entries as Array<Record<string, Attributes>>) {
      const action = parseAction(entry);
      if ('status' in action) return action;
      const key = await keyOf(headers, action.data.TableName, action.key);
      if ('status' in key) return key as EngineAnswer;
      action.key = key;
      const text = keyText(action.data.TableName, action.key);
      if (seen.has(text)) return validationError('Transaction request cannot include multiple operations on one item');
      seen.add(text);
      actions.push(action);
    }

    const token = typeof body.ClientRequestToken === 'string' ? body.ClientRequestToken : undefined;
    const digest = createHash('sha256')
      .update(JSON.stringify({ ...body, ClientRequestToken: undefined }))
      .digest('hex');
    const now = Date.now();
    for (const [name, remembered] of tokens) if (remembered.until <= now) tokens.delete(name);
    if (token !== undefined) {
      const remembered = tokens.get(token);
      if (remembered && remembered.digest !== digest) {
        return error(
          400,
          'IdempotentParameterMismatchException',
          'The request uses the same client token as a previous, but non-identical request.',
        );
      }
      if (remembered) return remembered.answer;
    }

    // Every condition is evaluated on the items as they are, before anything is written.
    const before: Array<Item | undefined> = [];
    for (const action of actions) before.push(await read(headers, action.data.TableName, action.key));
    const reasons = actions.map((action, i) => {
      const failed = db.checkConditional(action.data, before[i]);
      if (!failed) return { Code: 'None' };
      const old = before[i];
      const withItem = action.data.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && old !== undefined;
      return {
        Code: 'ConditionalCheckFailed',
        Message: 'The conditional request failed',
        ...(withItem ? { Item: old } : {}),
      };
    });
    if (reasons.some((reason) => reason.Code !== 'None')) return cancelled(reasons);

    // Apply in order; a refusal (a bad document path, a number out of range, an item too large) undoes the rest.
    // The stream shows the writes only if all of them land.
    const records = holdRecords();
    const applied: number[] = [];
    for (const [i, action] of actions.entries()) {
      if (action.operation === 'ConditionCheck') continue;
      const { ReturnValuesOnConditionCheckFailure: _ignored, ...request } = action.data;
      const target =
        action.operation === 'Put' ? 'PutItem' : action.operation === 'Update' ? 'UpdateItem' : 'DeleteItem';
      const answer = await inner(target, headers, request);
      if (answer.status === 200) {
        applied.push(i);
        continue;
      }
      for (const j of applied.reverse()) {
        const undo = actions[j] as Action;
        const old = before[j];
        await inner(
          old ? 'PutItem' : 'DeleteItem',
          headers,
          old ? { TableName: undo.data.TableName, Item: old } : { TableName: undo.data.TableName, Key: undo.key },
        );
      }
      records.discard();
      const type = String(answer.body.__type ?? '');
      if (!/ValidationException$/.test(type)) return answer;
      return cancelled(
        actions.map((_, j) =>
          j === i ? { Code: 'ValidationError', Message: String(answer.body.message ?? '') } : { Code: 'None' },
        ),
      );
    }

    records.commit();
    const after: Array<Item | undefined> = [];
    for (const action of actions)
      after.push(
        action.operation === 'ConditionCheck' ? undefined : await read(headers, action.data.TableName, action.key),
      );
    const answer: EngineAnswer = { status: 200, body: capacity(body, actions, before, after) };
    if (token !== undefined) tokens.set(token, { digest, until: now + TOKEN_MS, answer });
    return answer;
  }

  async function transactGet(
    headers: IncomingMessage['headers'],
    body: Record<string, unknown>,
  ): Promise<EngineAnswer> {
    const entries = body.TransactItems;
    if (!Array.isArray(entries) || entries.length === 0 || entries.length > MAX_ACTIONS) {
      return validationError(`TransactItems must hold 1 to ${MAX_ACTIONS} actions`);
    }
    const responses: Array<Record<string, unknown>> = [];
    for (const entry of entries as Array<{ Get?: Attributes & { TableName: string; Key: Item } }>) {
      if (!entry.Get) return validationError('TransactGetItems can only contain Get actions');
      const { TableName, Key, ProjectionExpression, ExpressionAttributeNames } = entry.Get;
      const answer = await inner('GetItem', headers, {
        TableName,
        Key,
        ConsistentRead: true,
        ProjectionExpression,
        ExpressionAttributeNames,
      });
      if (answer.status !== 200) return answer;
      responses.push(answer.body.Item ? { Item: answer.body.Item } : {});
    }
    return { status: 200, body: { Responses: responses } };
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const target = String(req.headers['x-amz-target'] ?? '');
    const operation = target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : '';
    if (req.headers[INNER] === innerMark) return engineHandler(req, res);
    if (operation !== 'TransactWriteItems' && operation !== 'TransactGetItems') {
      void gate.enter(false).then((leave) => {
        res.once('close', leave);
        res.once('finish', leave);
        engineHandler(req, res);
      });
      return;
    }
    void (async () => {
      const text = await readBody(req);
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return send(res, { status: 400, body: { __type: 'com.amazon.coral.service#SerializationException' } });
      }
      const leave = await gate.enter(true);
      try {
        send(
          res,
          operation === 'TransactWriteItems'
            ? await transactWrite(req.headers, body)
            : await transactGet(req.headers, body),
        );
      } catch (thrown) {
        const answer = (thrown as { answer?: EngineAnswer }).answer;
        send(res, answer ?? error(500, 'InternalServerError', 'Internal server error'));
      } finally {
        leave();
      }
    })();
  });
}

function cancelled(reasons: Array<Record<string, unknown>>): EngineAnswer {
  return error(
    400,
    'TransactionCanceledException',
    `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
    { CancellationReasons: reasons },
  );
}

/** What DynamoDB bills a transaction: two units per KB of every item it writes or checks. */
function capacity(
  body: Record<string, unknown>,
  actions: Action[],
  before: Array<Item | undefined>,
  after: Array<Item | undefined>,
): Record<string, unknown> {
  if (body.ReturnConsumedCapacity !== 'TOTAL' && body.ReturnConsumedCapacity !== 'INDEXES') return {};
  const perTable = new Map<string, number>();
  for (const [i, action] of actions.entries()) {
    const sizes = [db.itemSize(before[i] ?? {}), db.itemSize(after[i] ?? {})];
    const units = 2 * Math.max(1, Math.ceil(Math.max(...sizes) / 1024));
    perTable.set(action.data.TableName, (perTable.get(action.data.TableName) ?? 0) + units);
  }
  return {
    ConsumedCapacity: [...perTable].map(([TableName, units]) => ({
      TableName,
      CapacityUnits: units,
      WriteCapacityUnits: units,
    })),
  };
}
