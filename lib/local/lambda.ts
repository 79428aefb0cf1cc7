// How the local server and the local realtime/stream host invoke a function of serverless.yml in this process: its
// handler loaded from the `handler` string, called with a Lambda context of the function's name and timeout.
import type { Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { ROOT } from './env';

/** The function a `handler` string (`functions/x.handler`) names, imported from the project's root. */
export async function loadHandler<T>(handler: string): Promise<T> {
  const dot = handler.lastIndexOf('.');
  const module = (await import(join(ROOT, handler.slice(0, dot)))) as Record<string, unknown>;
  const found = module[handler.slice(dot + 1)];
  if (typeof found !== 'function') throw new Error(`${handler} is not a function`);
  return found as T;
}

/** A Lambda context whose remaining time runs out `timeoutSeconds` after it is made, as the invocation's would. */
export function lambdaContext(functionName: string, timeoutSeconds: number): Context {
  const deadline = Date.now() + timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
