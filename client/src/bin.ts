// The `content-api` bin: runs the CLI on this process's arguments, environment and stdin.
import { readFileSync } from 'node:fs';
import { main } from './cli';

main(process.argv.slice(2), process.env, () => readFileSync(0, 'utf8')).then((code) => {
  process.exitCode = code;
});
