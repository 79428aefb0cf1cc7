// Metrics: CloudWatch embedded metric format (EMF) lines through Powertools Metrics, one namespace per stage, no API
// calls. Per route (dimension FunctionName) and in total: requests, errors by status class, latency, write
// conflicts, idempotent replays, and the DynamoDB requests, retries and capacity each operation consumed.
import type { MiddlewareObj, Request } from '@middy/core';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { APIGatewayProxyEventV2 as Event, APIGatewayProxyStructuredResultV2 as Result, Context } from 'aws-lambda';
import { isRefusal } from '../config/errors';
import { optionalEnv } from '../config/env';
import type { DynamoUsage } from '../dynamo/usage';

/** Every metric this service emits: the dashboard and alarms (serverless.yml, infra/) may name only these. */
export const METRIC = {
  requests: 'Requests',
  errors4xx: 'Errors4xx',
  errors5xx: 'Errors5xx',
  latency: 'Latency',
  writeConflicts: 'WriteConflicts',
  idempotentReplays: 'IdempotentReplays',
  dynamoRequests: 'DynamoDBRequests',
  dynamoRetries: 'DynamoDBRetries',
  dynamoConditionFailures: 'DynamoDBConditionFailures',
  readCapacity: 'ConsumedReadCapacityUnits',
  writeCapacity: 'ConsumedWriteCapacityUnits',
  /** The sweeper (functions/sweep.ts): markers settled, of which changes that never committed, segments deleted. */
  sweptMarkers: 'SweptMarkers',
  sweptAbandoned: 'SweptAbandonedChanges',
  sweptSegments: 'SweptSegments',
} as const;

/** The dimensions: low cardinality by construction (a route's function, a DynamoDB operation; never a project or user). */
export const DIMENSION = { service: 'service', functionName: 'FunctionName', operation: 'Operation' } as const;

export const SERVICE_NAME = 'content-api';
/** serverless.yml sets `content-api-<stage>`; the local server's lines say `content-api-local`. */
export const metricsNamespace = () => optionalEnv('POWERTOOLS_METRICS_NAMESPACE') ?? 'content-api-local';

/** One instance per process; Powertools keeps its metrics per invocation where invocations overlap. */
export const metrics = new Metrics({ namespace: metricsNamespace(), serviceName: SERVICE_NAME });

/** An idempotent retry answered from its stored first response (lib/http/idempotency.ts). */
export function countIdempotentReplay(): void {
  metrics.addMetric(METRIC.idempotentReplays, MetricUnit.Count, 1);
}

/** The request's usage of DynamoDB, filled by the client middleware while the handler runs (lib/dynamo/usage.ts). */
const usages = new WeakMap<Context, DynamoUsage>();
/** A request's DynamoDB usage, by its Lambda context, begun empty the first time it is asked for. */
export const usageOf = (context: Context): DynamoUsage => {
  let usage = usages.get(context);
  if (!usage) {
    usage = new Map();
    usages.set(context, usage);
  }
  return usage;
};

/** One request's figures, for a host that prints its own line per request instead of the EMF lines. */
export interface RequestSummary {
  functionName: string;
  status: number;
  latencyMs: number;
  /** Summed over every DynamoDB operation the request used. */
  dynamo: { requests: number; retries: number; readUnits: number; writeUnits: number };
}

let summarySink: ((requestId: string, summary: RequestSummary) => void) | undefined;

/**
 * Hands each request's figures to `sink` instead of publishing EMF lines (and the access log's line), or back to EMF
 * with undefined. The local server's readable format (lib/local) sets it; Lambda never does: CloudWatch needs EMF.
 */
export function sendRequestSummariesTo(sink: ((requestId: string, summary: RequestSummary) => void) | undefined) {
  summarySink = sink;
}

/** Whether a host prints its own line per request (then the access log writes none). */
export const hostPrintsRequests = (): boolean => summarySink !== undefined;

function summarise(functionName: string, status: number, latencyMs: number, usage: DynamoUsage | undefined) {
  const dynamo = { requests: 0, retries: 0, readUnits: 0, writeUnits: 0 };
  for (const used of usage?.values() ?? []) {
    dynamo.requests += used.requests;
    dynamo.retries += used.retries;
    dynamo.readUnits += used.readUnits;
    dynamo.writeUnits += used.writeUnits;
  }
  return { functionName, status, latencyMs, dynamo };
}

/**
 * Publishes one EMF line for the request (dimension sets: its function, and the service as a whole), then one per
 * DynamoDB operation it used (function and operation). Each is a JSON log line of its own with the request id.
 */
export function publishMetrics(): MiddlewareObj<Event, Result> {
  const started = new WeakMap<object, number>();
  const publishMetricsBefore = async (request: Request<Event, Result, Error, Context>) => {
    started.set(request, Date.now());
  };
  const publishMetricsAfter = async (request: Request<Event, Result, Error, Context>) => {
    const status = request.response?.statusCode ?? 500;
    const functionName = request.context.functionName ?? process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'unknown';
    // The request id as metadata (not a dimension): a metric line leads to its request's logs.
    const requestId = request.context.awsRequestId;
    const latencyMs = Date.now() - (started.get(request) ?? Date.now());
    if (summarySink) {
      summarySink(requestId, summarise(functionName, status, latencyMs, usages.get(request.context)));
      usages.delete(request.context);
      return;
    }
    metrics.addDimension(DIMENSION.functionName, functionName);
    metrics.addDimensions({});
    metrics.addMetadata('function_request_id', requestId);
    metrics.addMetric(METRIC.requests, MetricUnit.Count, 1);
    // 0 or 1 on every request, so a metric's Average is the route's error rate.
    metrics.addMetric(METRIC.errors4xx, MetricUnit.Count, status >= 400 && status < 500 ? 1 : 0);
    metrics.addMetric(METRIC.errors5xx, MetricUnit.Count, status >= 500 ? 1 : 0);
    metrics.addMetric(METRIC.latency, MetricUnit.Milliseconds, latencyMs);
    if (isRefusal(request.error, 'WRITE_CONFLICT')) metrics.addMetric(METRIC.writeConflicts, MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
    for (const [operation, used] of usages.get(request.context) ?? []) {
      // One dimension set: Powertools refuses (with a warning line) a key shared by two sets.
      metrics.addDimension(DIMENSION.functionName, functionName);
      metrics.addDimension(DIMENSION.operation, operation);
      metrics.addMetadata('function_request_id', requestId);
      metrics.addMetric(METRIC.dynamoRequests, MetricUnit.Count, used.requests);
      metrics.addMetric(METRIC.dynamoRetries, MetricUnit.Count, used.retries);
      metrics.addMetric(METRIC.dynamoConditionFailures, MetricUnit.Count, used.conditionFailures);
      metrics.addMetric(METRIC.readCapacity, MetricUnit.Count, used.readUnits);
      metrics.addMetric(METRIC.writeCapacity, MetricUnit.Count, used.writeUnits);
      metrics.publishStoredMetrics();
    }
    usages.delete(request.context);
  };
  return { before: publishMetricsBefore, after: publishMetricsAfter, onError: publishMetricsAfter };
}
