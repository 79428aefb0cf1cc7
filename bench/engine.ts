// The bench's DynamoDB: the embedded engine (dynalite, in memory) alone in its own process, with the table in place;
// or, given BENCH_ENGINE_ENDPOINT (DynamoDB Local), only the table on that engine. Started by bench/run.ts; reports
// its endpoint over IPC and runs until it is sent SIGTERM.
import { startRuntime } from '../lib/local/runtime';

if (process.env.BENCH_ENGINE_ENDPOINT) process.env.AWS_ENDPOINT_URL_DYNAMODB = process.env.BENCH_ENGINE_ENDPOINT;
else delete process.env.AWS_ENDPOINT_URL_DYNAMODB;
const runtime = await startRuntime({ port: 0, dataDir: null });
process.send?.({ endpoint: runtime.endpoint, pid: process.pid });
const stop = () => void runtime.close().finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.once('disconnect', stop);
