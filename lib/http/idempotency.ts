// Idempotent retries: a mutation with Idempotency-Key applies at most once per project (incarnation), credential and
// key for 24 h.
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import { tableName } from '../config/env';
import { IDEMPOTENCY_TTL_SECONDS } from '../config/limits';
import { hashSecret } from '../auth/credentials';
import { dynamo } from '../dynamo/client';
import { countIdempotentReplay } from './metrics';
import { itemKeyAttributes } from '../schema/items';
import type { Reply } from './edge';
import { Refusal } from '../config/errors';

const KEY = /^[\x21-\x7e]{1,255}$/;

/** The Idempotency-Key header's value: undefined when absent, a 400 unless 1 to 255 visible ASCII characters. */
export function parseIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!KEY.test(value))
    throw new Refusal('INVALID_IDEMPOTENCY_KEY', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
  return value;
}

/** What identifies a retry (`key`) and what must be the same in it (`fingerprint`); `run` does the mutation. */
interface IdempotentCall {
  key: string[];
  fingerprint: unknown;
  run: () => Promise<Reply>;
}

type Powertools = typeof import('./idempotency-powertools');

interface Runner {
  powertools: Powertools;
  config: InstanceType<Powertools['IdempotencyConfig']>;
  applyOnce: (call: IdempotentCall) => Promise<Reply>;
}

let runner: Promise<Runner> | undefined;

/**
 * Powertools (with its JMESPath engine) is loaded with the first request that names a key: in the Lambda bundles it
 * is a lazy module (scripts/bundle.mjs), so a cold start without Idempotency-Key never compiles it. It takes the
 * DynamoDB client classes from this bundle (shared first) rather than carrying a second copy of the SDK.
 * Records live in the content table (keys `IDEM#<hash>`, TTL attribute `ttl`).
 */
async function loadRunner(): Promise<Runner> {
  // The key is LAZY_SHARED_KEY of scripts/bundle.mjs; outside the bundles (tsx, jest) nothing reads it.
  const shared = ((globalThis as Record<symbol, Record<string, unknown> | undefined>)[
    Symbol.for('content-api.lazy-shared')
  ] ??= {});
  shared['@aws-sdk/client-dynamodb'] ??= {
    ConditionalCheckFailedException,
    DeleteItemCommand,
    DynamoDBClient,
    GetItemCommand,
    PutItemCommand,
    UpdateItemCommand,
  };
  const powertools = await import('./idempotency-powertools');
  /**
   * Each record its own partition (`pk` the record's key, `sk` '#', as every single item): Powertools' sort-key form
   * would put every record of the service under one static partition key.
   */
  class IdempotencyStore extends powertools.DynamoDBPersistenceLayer {
    protected override getKey(idempotencyKey: string): Record<string, AttributeValue> {
      return itemKeyAttributes(idempotencyKey);
    }
  }
  const config = new powertools.IdempotencyConfig({
    eventKeyJmesPath: 'key',
    payloadValidationJmesPath: 'fingerprint',
    expiresAfterSeconds: IDEMPOTENCY_TTL_SECONDS,
  });
  const applyOnce = powertools.makeIdempotent(async (call: IdempotentCall) => call.run(), {
    persistenceStore: new IdempotencyStore({
      tableName: tableName(),
      keyAttr: 'pk',
      expiryAttr: 'ttl',
      awsSdkV3Client: dynamo,
    }),
    config,
    keyPrefix: 'IDEM',
  });
  return { powertools, config, applyOnce };
}

/**
 * Runs the mutation once per (project incarnation, credential, Idempotency-Key): a retry with the same request gets the
 * first success back (status, body, ETag); the same key with another request is a 422; a concurrent duplicate is a
 * 409. Errors are not remembered: nothing was applied, so a retry runs again. The caller has decided access first.
 */
export async function runIdempotently(
  request: {
    project: string;
    incarnation: string;
    authorization: string;
    idempotencyKey: string;
    fingerprint: unknown;
  },
  context: Context,
  run: () => Promise<Reply>,
): Promise<Reply> {
  runner ??= loadRunner().catch((error: unknown) => {
    runner = undefined;
    throw error;
  });
  const { powertools, config, applyOnce } = await runner;
  config.registerLambdaContext(context);
  try {
    let ran = false;
    const reply = await applyOnce({
      key: [request.project, request.incarnation, hashSecret(request.authorization), request.idempotencyKey],
      fingerprint: request.fingerprint,
      run: () => {
        ran = true;
        return run();
      },
    });
    // Powertools answered from the stored record without running the mutation: a replay.
    if (!ran) countIdempotentReplay();
    return reply;
  } catch (error) {
    if (error instanceof Refusal) throw error;
    if (error instanceof powertools.IdempotencyValidationError) {
      throw new Refusal('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request');
    }
    if (error instanceof powertools.IdempotencyAlreadyInProgressError) {
      throw new Refusal(
        'IDEMPOTENCY_IN_PROGRESS',
        'A request with this Idempotency-Key is still in progress; retry shortly',
        { retryAfter: 1 },
      );
    }
    throw error;
  }
}
