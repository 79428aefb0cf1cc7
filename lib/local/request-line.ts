// The local server's terminal output per request: one short readable line (method, path, status, time, DynamoDB
// requests and capacity) instead of Lambda's JSON lines (EMF metrics and the access log), unless LOG_FORMAT=json.
import type { RequestSummary } from '../http/metrics';

/** Whether the local server prints readable request lines: yes unless LOG_FORMAT=json asks for Lambda's JSON lines. */
export const readableRequestLines = (): boolean => (process.env.LOG_FORMAT ?? '').toLowerCase() !== 'json';

/** A path and query longer than this is cut (with `…`) so one request stays one terminal line. */
const MAX_TARGET = 100;

const units = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/**
 * `POST /api/@demo/site/content/set 200 12 ms · DynamoDB 2 requests, 1 RCU, 2 WCU`: the request as it arrived, its
 * status and time, and (when a function ran) what it asked of DynamoDB; retries are named only when there were some.
 */
export function requestLine(options: {
  method: string;
  target: string;
  status: number;
  ms: number;
  dynamo?: RequestSummary['dynamo'];
}): string {
  const { method, status, ms, dynamo } = options;
  const target = options.target.length > MAX_TARGET ? `${options.target.slice(0, MAX_TARGET - 1)}…` : options.target;
  const line = `${method} ${target} ${status} ${Math.round(ms)} ms`;
  if (!dynamo) return line;
  const requests = `${dynamo.requests} request${dynamo.requests === 1 ? '' : 's'}`;
  const retries = dynamo.retries > 0 ? ` (${dynamo.retries} retried)` : '';
  return `${line} · DynamoDB ${requests}${retries}, ${units(dynamo.readUnits)} RCU, ${units(dynamo.writeUnits)} WCU`;
}
