// The `content-api-client` bin: runs the CLI on this process's arguments, environment and stdin.
import { readFileSync } from 'node:fs';
// Bundled into dist/cli.js by the build (esbuild inlines JSON), read from client/ when run from source (npm run cli).
import manifest from '../package.json' with { type: 'json' };
import { main } from './cli';

main(process.argv.slice(2), process.env, () => readFileSync(0, 'utf8'), { version: manifest.version }).then((code) => {
  process.exitCode = code;
});
