// A recording DynamoDB proxy for the fault tests (dynamo-proxy.ts with an observer), placed between the fault-injecting
// proxy and the engine: it sees every request that really reaches the engine and the engine's real answer (even when
// the fault proxy then loses it), so a test can tell exactly which content writes were applied, how often, in order.
import { type ProxyRequest, startDynamoProxy } from './dynamo-proxy';

/** One write to a content segment (an UpdateItem, or the update of a transaction) that the engine answered. */
export interface AppliedWrite {
  seq: number;
  /** True when the engine applied it (200); false when its condition failed or it was refused. */
  applied: boolean;
  status: number;
  /** The request token the service wrote into a token slot (also the new ETag), and the slot's number. */
  token?: string;
  slot?: number;
  pk?: string;
  /** The segment written (pk and sk): token slots are per segment. */
  segment?: string;
  /** The DynamoDB request it came in (its number, and UpdateItem or TransactWriteItems). */
  request: number;
  operation: string;
}

export interface Recorder {
  url: string;
  /** Every content write (`C#` items) the engine answered, in the order of its answers. */
  writes(): AppliedWrite[];
  /** Requests per operation that reached the engine. */
  counts(): Record<string, number>;
  reset(): void;
  close(): Promise<void>;
}

/** The token slot an UpdateItem writes (`#nK = :vJ` where #nK names rqN) and the token value it writes there. */
export function tokenOf(body: Record<string, any>): { token?: string; slot?: number; pk?: string; segment?: string } {
  const names = (body.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (body.ExpressionAttributeValues ?? {}) as Record<string, { S?: string }>;
  const pk = (body.Key?.pk?.S as string | undefined) ?? undefined;
  const segment = `${pk}\u0000${body.Key?.sk?.S ?? ''}`;
  for (const match of String(body.UpdateExpression ?? '').matchAll(/(#\w+) = (:\w+)/g)) {
    const attribute = names[match[1] as string];
    const slot = /^rq(\d+)$/.exec(attribute ?? '');
    if (slot) return { token: values[match[2] as string]?.S, slot: Number(slot[1]), pk, segment };
  }
  return { pk, segment };
}

export async function startRecorder(upstream: string): Promise<Recorder> {
  let seq = 0;
  let requests = 0;
  let writes: AppliedWrite[] = [];
  /** Transactions answered 200 by ClientRequestToken: a resend of one (the SDK's retry) is answered, not applied again. */
  let committed = new Set<string>();
  const observe = (request: ProxyRequest, status: number) => {
    if (request.operation !== 'UpdateItem' && request.operation !== 'TransactWriteItems') return;
    let parsed: Record<string, any>;
    try {
      parsed = JSON.parse(request.body.toString('utf8')) as Record<string, any>;
    } catch {
      return;
    }
    const idempotency = typeof parsed.ClientRequestToken === 'string' ? parsed.ClientRequestToken : undefined;
    if (request.operation === 'TransactWriteItems' && idempotency !== undefined && status === 200) {
      if (committed.has(idempotency)) return;
      committed.add(idempotency);
    }
    // A transaction's token is in the update of the segment it commits (the one with a token slot).
    const updates: Record<string, any>[] =
      request.operation === 'UpdateItem'
        ? [parsed]
        : (parsed.TransactItems ?? []).flatMap((item: { Update?: Record<string, any> }) =>
            item.Update ? [item.Update] : [],
          );
    // One request applies its token once, however many segments it stamps with it (a transaction that commits a
    // cut writes the token into each segment it creates).
    const number = ++requests;
    const stamped = new Set<string>();
    for (const update of updates) {
      if (!String(update.Key?.pk?.S ?? '').startsWith('C#')) continue;
      const write = tokenOf(update);
      if (write.token !== undefined) {
        if (stamped.has(write.token)) continue;
        stamped.add(write.token);
      }
      writes.push({
        seq: ++seq,
        applied: status === 200,
        status,
        request: number,
        operation: request.operation,
        ...write,
      });
    }
  };
  const proxy = await startDynamoProxy(upstream, { observe });
  return {
    url: proxy.url,
    writes: () => [...writes],
    counts: proxy.counts,
    reset: () => {
      writes = [];
      committed = new Set();
      proxy.reset();
    },
    close: proxy.close,
  };
}
