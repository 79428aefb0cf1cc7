// Logging: structured JSON through Powertools Logger, with every credential-shaped value redacted.
import { Logger } from '@aws-lambda-powertools/logger';

const SECRET_KEY = /authorization|token|secret|password|cookie|api[-_]?key|^key$/i;
const SECRET_VALUE = /\b(?:capi_[0-9a-f]{16}_[\w-]{43}|csess_[\w-]{43}|eyJ[\w-]+\.[\w-]+\.[\w-]*)/g;

/** JSON.stringify replacer: secrets by key name, and credentials inside any string (error messages included). */
export function redact(key: string, value: unknown): unknown {
  if (key !== '' && SECRET_KEY.test(key) && value !== undefined && value !== null) return '[REDACTED]';
  if (typeof value === 'string') return value.replace(SECRET_VALUE, '[REDACTED]');
  return value;
}

export const logger = new Logger({ serviceName: 'content-api', jsonReplacerFn: redact });
