// Environment: every variable the Lambdas read, in one place; a missing required one fails the cold start.

export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`environment variable ${name} is required`);
  return value;
}

export function optionalEnv(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** The single DynamoDB table that holds projects, users, sessions, API key records and idempotency records. */
export const tableName = () => requireEnv('TABLE_NAME');
