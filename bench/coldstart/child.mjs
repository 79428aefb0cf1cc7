// One cold start: a fresh Node process (no loaders) imports one bundle and answers one event read from stdin.
// Prints `BENCH_COLDSTART {...}` (the handler's own log lines may share stdout). Times from performance.now(), whose
// origin is the process start. With BENCH_COLDSTART_PROFILE=1 it also profiles import + first invoke with the V8
// sampling profiler and attributes self time to packages through the bundle's source map (needs
// --enable-source-maps); those runs are for attribution only, never timed.
import { readFileSync } from 'node:fs';
import { findSourceMap } from 'node:module';
import { pathToFileURL } from 'node:url';

const bundle = process.argv[2];
const event = readFileSync(0, 'utf8');
const profiling = process.env.BENCH_COLDSTART_PROFILE === '1';
let session;
if (profiling) {
  const { Session } = await import('node:inspector/promises');
  session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
}
const t0 = performance.now();
const { handler } = await import(bundle);
const t1 = performance.now();
const context = {
  functionName: 'bench',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:bench',
  memoryLimitInMB: '512',
  awsRequestId: 'bench-cold',
  logGroupName: '/aws/lambda/bench',
  logStreamName: 'bench',
  getRemainingTimeInMillis: () => 10_000,
};
const result = await handler(JSON.parse(event), context);
const t2 = performance.now();
const rssMb = process.memoryUsage().rss / 2 ** 20;

/** `.../node_modules/@smithy/core/dist-es/x.js` -> `@smithy/*`; `../../lib/http/edge.ts` -> `lib/http`. */
function areaOfSource(source) {
  const path = source.replace(/\\/g, '/');
  const modules = path.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = path.slice(modules + 'node_modules/'.length).split('/');
    const name = rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
    return name.startsWith('@smithy/') ? '@smithy/*' : name;
  }
  const parts = path.split('/').filter((p) => p !== '..' && p !== '.');
  const lib = parts.indexOf('lib');
  if (lib >= 0) return `lib/${parts[lib + 1]}`;
  return parts.slice(-2).join('/');
}

let byArea;
if (session) {
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  const bundleUrl = pathToFileURL(bundle).href;
  const map = findSourceMap(bundle) ?? findSourceMap(bundleUrl);
  const self = new Map();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + Math.max(0, profile.timeDeltas[i] ?? 0)));
  byArea = {};
  for (const node of profile.nodes) {
    const micros = self.get(node.id);
    if (!micros) continue;
    const { url, functionName, lineNumber, columnNumber } = node.callFrame;
    let area;
    if (functionName === '(idle)') area = '(idle)';
    else if (url === bundleUrl || url === bundle) {
      const entry = lineNumber === 0 && columnNumber === 0 ? undefined : map?.findEntry(lineNumber, columnNumber);
      area = entry?.originalSource
        ? areaOfSource(entry.originalSource)
        : '(bundle top level: module init of every package)';
    } else if (url.startsWith('node:internal/source_map')) area = 'node: source maps (--enable-source-maps)';
    else if (url.startsWith('node:internal/modules')) area = 'node: module loading';
    else if (url.startsWith('node:'))
      area = `node:${url
        .slice(5)
        .split('/')
        .slice(0, url.startsWith('node:internal') ? 2 : 1)
        .join('/')}`;
    else if (url === '') area = functionName.startsWith('(') ? functionName : '(V8 builtins)';
    else area = url.includes('coldstart/child.mjs') ? 'bench harness' : url;
    byArea[area] = (byArea[area] ?? 0) + micros / 1000;
  }
}
process.stdout.write(
  `\nBENCH_COLDSTART ${JSON.stringify({ status: result?.statusCode, body: result?.statusCode === 200 ? undefined : result?.body, boot: t0, load: t1 - t0, invoke: t2 - t1, total: t2, rssMb, byArea })}\n`,
);
