// Tracing: X-Ray through Powertools Tracer, loaded with the first request only where tracing is on (in Lambda, with
// POWERTOOLS_TRACE_ENABLED=true, which serverless.yml sets with active tracing), so tracing off costs no cold start.
import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEventV2 as Event, APIGatewayProxyStructuredResultV2 as Result, Context } from 'aws-lambda';
import { dynamo, documents } from '../dynamo/client';

type Tracer = InstanceType<typeof import('./tracing-powertools').Tracer>;
type Segment = NonNullable<ReturnType<Tracer['getSegment']>>;

/** On in a Lambda sandbox (AWS_EXECUTION_ENV) whose configuration turns it on; never in the local server or tests. */
export const tracingEnabled = () =>
  process.env.POWERTOOLS_TRACE_ENABLED === 'true' && (process.env.AWS_EXECUTION_ENV ?? '') !== '';

let loading: Promise<Tracer> | undefined;
/** The first traced request of the process is its cold start (the tracer is created with it, so its own flag is spent). */
let coldStart = true;

/**
 * The tracer, and both DynamoDB clients captured (one subsegment per call, the trace header passed on). Done before
 * the process's first DynamoDB request: the content client resolves its middleware once per command class
 * (lib/dynamo/client.ts), so middleware added later would not be seen.
 */
async function loadTracer(): Promise<Tracer> {
  const { Tracer } = await import('./tracing-powertools');
  // No HTTP capture: DynamoDB calls are captured as AWS calls, and request bodies never go into a trace.
  const tracer = new Tracer({ serviceName: 'content-api', captureHTTPsRequests: false });
  tracer.captureAWSv3Client(dynamo);
  tracer.captureAWSv3Client(documents);
  return tracer;
}

/**
 * Middy middleware: a `## <function>` subsegment around the handler, annotated with the cold start, the service, the
 * route and the status (error flag for 4xx, fault for 5xx); responses and errors are not recorded (they hold content).
 */
export function traceRequest(): MiddlewareObj<Event, Result> {
  const open = new WeakMap<object, { tracer: Tracer; parent: Segment; own: Segment }>();
  const traceRequestBefore = async (request: Request<Event, Result, Error, Context>) => {
    if (!tracingEnabled()) return;
    loading ??= loadTracer().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    const tracer = await loading;
    const parent = tracer.getSegment();
    if (!parent) return;
    const own = parent.addNewSubsegment(`## ${request.context.functionName}`);
    tracer.setSegment(own);
    tracer.putAnnotation('ColdStart', coldStart);
    coldStart = false;
    tracer.addServiceNameAnnotation();
    tracer.putAnnotation('route', request.event.routeKey ?? '');
    open.set(request, { tracer, parent, own });
  };
  const traceRequestAfter = async (request: Request<Event, Result, Error, Context>) => {
    const trace = open.get(request);
    if (!trace) return;
    open.delete(request);
    const status = request.response?.statusCode ?? 500;
    trace.tracer.putAnnotation('status', status);
    if (status >= 500) trace.own.addFaultFlag();
    else if (status >= 400) trace.own.addErrorFlag();
    trace.own.close();
    trace.tracer.setSegment(trace.parent);
  };
  return { before: traceRequestBefore, after: traceRequestAfter, onError: traceRequestAfter };
}
