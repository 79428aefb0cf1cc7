// Several API processes over one DynamoDB engine, as AWS runs many warm Lambdas over one table: each process has its
// own warm memory (where paths live, chunk ranges, buckets), the table is shared. The first process serves the
// embedded engine (dynalite, on a free LOCAL_DYNAMODB_PORT) and the others point AWS_ENDPOINT_URL_DYNAMODB at it; or,
// when AWS_ENDPOINT_URL_DYNAMODB is set (DynamoDB Local), all of them use that engine.
//
// Realtime: the first process plays API Gateway's WebSocket API and the table's one stream consumer. The embedded
// engine's change stream exists only inside the process that runs it, and on DynamoDB Local a consumer per process
// would handle every record three times (three change-log writes, three messages, and a 410 for every connection
// another process holds, which drops the subscription). So the others run no consumer (LOCAL_STREAM_CONSUMER=off)
// and post, should they ever post, through the first one's management API. A subscriber connects to `urls[0]` and
// sees the changes written through any process, as a client of API Gateway sees changes written by any Lambda.
import { stopProcess, startLocalApi, type LocalApi } from './local-api';

export interface Servers {
  /** The API of each process, e.g. http://127.0.0.1:1234; urls[0] also serves the WebSocket API and the stream. */
  urls: string[];
  /** The DynamoDB endpoint every process uses. */
  endpoint: string;
  /** Stops every process (the first last: it may hold the engine). */
  stop(): Promise<void>;
}

/**
 * Starts `count` API processes (lib/local/start.ts) over one engine. `env` is added to this process's environment;
 * TABLE_NAME is taken from it (or from this process), else a fresh one is chosen and set on process.env.
 */
export async function startServers(options: {
  count: number;
  env?: Record<string, string | undefined>;
}): Promise<Servers> {
  if (!(options.count >= 1)) throw new Error('startServers needs a count of at least 1');
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  if (!env.TABLE_NAME) {
    env.TABLE_NAME = `content-api-mp-${Date.now()}`;
    process.env.TABLE_NAME = env.TABLE_NAME;
  }
  const started: LocalApi[] = [];
  const stop = async () => {
    for (const api of started.slice(1)) await stopProcess(api.child);
    if (started[0]) await stopProcess(started[0].child);
  };
  const start = (extra: Record<string, string | undefined>) =>
    startLocalApi({
      env: { ...env, PORT: '0', DATA_DIR: ':memory:', ...extra },
      stdio: ['ignore', 'ignore', 'inherit'],
    }).then((api) => {
      started.push(api);
      return api;
    });
  try {
    const first = await start({ LOCAL_DYNAMODB_PORT: '0' });
    const rest = await Promise.all(
      Array.from({ length: options.count - 1 }, () =>
        start({
          AWS_ENDPOINT_URL_DYNAMODB: first.endpoint,
          LOCAL_STREAM_CONSUMER: 'off',
          REALTIME_ENDPOINT: first.url,
        }),
      ),
    );
    return { urls: [first.url, ...rest.map((api) => api.url)], endpoint: first.endpoint, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
