// Part 2's HTTP floor: the least an HTTP service in front of DynamoDB can do on this machine. A node:http server (its
// own process, as the local API is) whose only work per request is the floor's request: it parses the body (the
// request's input, already in DynamoDB's attribute format), sends it with the floor's SDK client settings, and
// answers 200 with a small JSON body. HTTP ÷ this is what the service itself adds over an HTTP hop; this ÷ floor is
// what the hop alone costs. Started by bench/run.ts; reports its URL over IPC; runs until SIGTERM.
import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { createServer } from 'node:http';
import { floorClient } from './lib/floor-client';

const client = floorClient();

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    void (async () => {
      const input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      await client.send(req.url === '/GetItem' ? new GetItemCommand(input) : new UpdateItemCommand(input));
      return 200;
    })()
      .catch((error: unknown) => {
        process.stderr.write(`relay: ${error instanceof Error ? error.message : String(error)}\n`);
        return 500;
      })
      .then((status) => {
        const body = JSON.stringify({ message: status === 200 ? 'ok' : 'failed' });
        res.writeHead(status, {
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Length': String(Buffer.byteLength(body)),
        });
        res.end(body);
      });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` });
});
const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('disconnect', stop);
