// Idempotent retries: a mutation with Idempotency-Key applies at most once per project, credential and key for 24 h.
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { Context } from 'aws-lambda';
import { tableName } from '../config/env';
import { hashSecret } from '../auth/credentials';
import { dynamo } from '../dynamo/client';
import type { Reply } from './edge';
import { BadRequest, Conflict, HttpError } from './errors';

export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;
const KEY = /^[\x21-\x7e]{1,255}$/;

export function parseIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!KEY.test(value)) throw new BadRequest('INVALID_IDEMPOTENCY_KEY', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
  return value;
}

/** What identifies a retry (`key`) and what must be the same in it (`fingerprint`); `run` does the mutation. */
interface IdempotentCall {
  key: string[];
  fingerprint: unknown;
  run: () => Promise<Reply>;
}

const config = new IdempotencyConfig({
  eventKeyJmesPath: 'key',
  payloadValidationJmesPath: 'fingerprint',
  expiresAfterSeconds: IDEMPOTENCY_TTL_SECONDS,
});

let applyOnce: ((call: IdempotentCall) => Promise<Reply>) | undefined;

/** Records live in the content table (keys `IDEM#<hash>`, TTL attribute `ttl`); built on first use. */
function idempotentRunner(): (call: IdempotentCall) => Promise<Reply> {
  applyOnce ??= makeIdempotent(async (call: IdempotentCall) => call.run(), {
    persistenceStore: new DynamoDBPersistenceLayer({
      tableName: tableName(),
      keyAttr: 'pk',
      expiryAttr: 'ttl',
      awsSdkV3Client: dynamo,
    }),
    config,
    keyPrefix: 'IDEM',
  });
  return applyOnce;
}

/**
 * Runs the mutation once per (project, credential, Idempotency-Key): a retry with the same request gets the first
 * success back (status, body, ETag); the same key with another request is a 422; a concurrent duplicate is a 409.
 * Errors are not remembered: nothing was applied, so a retry runs again.
 */
export async function runIdempotently(
  request: { project: string; authorization: string; idempotencyKey: string; fingerprint: unknown },
  context: Context,
  run: () => Promise<Reply>,
): Promise<Reply> {
  config.registerLambdaContext(context);
  try {
    return await idempotentRunner()({
      key: [request.project, hashSecret(request.authorization), request.idempotencyKey],
      fingerprint: request.fingerprint,
      run,
    });
  } catch (error) {
    if (error instanceof HttpError) throw error;
    if (error instanceof IdempotencyValidationError) {
      throw new HttpError(422, 'IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request');
    }
    if (error instanceof IdempotencyAlreadyInProgressError) {
      throw new Conflict('IDEMPOTENCY_IN_PROGRESS', 'A request with this Idempotency-Key is still in progress; retry shortly', {
        'Retry-After': '1',
      });
    }
    throw error;
  }
}
