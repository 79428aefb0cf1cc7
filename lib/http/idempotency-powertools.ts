// Powertools idempotency, loaded by lib/http/idempotency.ts with the first request that names an Idempotency-Key. In
// the Lambda bundles this is a lazy module (scripts/bundle.mjs): a file of its own that must import packages only;
// the DynamoDB client classes it uses come from the bundle that loads it.
export {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
export { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
