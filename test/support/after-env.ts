// Closes the worker's DynamoDB connections (keep-alive sockets) so jest can exit.
import { dynamo } from '../../lib/dynamo/client';
import { logger } from '../../lib/config/logger';
import { sendRequestSummariesTo } from '../../lib/http/metrics';

// Handler code the tests run in-process (the sweeper, the stream consumer, webhooks) would write Lambda's JSON lines
// (EMF metrics, INFO logs) into the test output: a host that prints its own lines takes them, and prints none.
sendRequestSummariesTo(() => undefined);
logger.setLogLevel('WARN');

afterAll(() => {
  dynamo.destroy();
});
