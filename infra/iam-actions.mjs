// IAM actions of infra/iam.yml that are not granted on the table itself (infra/osls-plugin.mjs places them).
/** Actions on the table's stream (the stream consumer's), granted on the stream's ARN rather than the table's. */
export const STREAM_ACTIONS = [
  'dynamodb:DescribeStream',
  'dynamodb:GetRecords',
  'dynamodb:GetShardIterator',
  'dynamodb:ListStreams',
];
/** Posting to WebSocket connections (the realtime sender's): granted on the stage's @connections only. */
export const CONNECTION_ACTIONS = ['execute-api:ManageConnections'];
