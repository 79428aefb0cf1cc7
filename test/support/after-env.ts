// Closes the worker's DynamoDB connections (keep-alive sockets) so jest can exit.
import { dynamo } from '../../lib/dynamo/client';

afterAll(() => {
  dynamo.destroy();
});
