#!/usr/bin/env node
// Runs a command against a throw-away DynamoDB Local (AWS's own emulator).
//
//   node scripts/dynamodb-local.mjs -- <command...>   start DynamoDB Local, run the command, stop it
//   node scripts/dynamodb-local.mjs --fetch-only      only download/extract the emulator into the cache
//
// The emulator (DynamoDBLocal.jar + DynamoDBLocal_lib/) is taken from the `emulator/` folder of the
// npm package amplify-dynamodb-simulator (fetched with `npm pack`, so only the npm registry is needed)
// and cached outside the repository:
//   $DYNAMODB_LOCAL_DIR, else $XDG_CACHE_HOME/content-api/dynamodb-local, else ~/.cache/content-api/dynamodb-local
// Once the cache is complete no network access happens.
//
// The command gets:
//   AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:<port>
//   AWS_REGION=us-east-1                               (unless already set)
//   AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY dummies   (unless already set)
//   DYNAMODB_ENGINE=dynamodb-local
//   DYNAMODB_REQUEST_TIMEOUT_MS=10000                  (unless already set: the engine is slow)
//
// Other environment variables:
//   DYNAMODB_LOCAL_PORT        fixed port instead of a free one
//   DYNAMODB_LOCAL_JAVA        java executable (default: $JAVA_HOME/bin/java if present, else `java`)
//   DYNAMODB_LOCAL_JAVA_OPTS   extra JVM options, space separated (e.g. "-Xmx512m")
//   DYNAMODB_LOCAL_START_TIMEOUT_MS  readiness timeout (default 60000)
//
// Java flags: -inMemory (nothing on disk), -sharedDb (without it DynamoDB Local keeps one database per
// access key id + region, so a client with other credentials/region would not see the tables),
// -disableTelemetry (1.24+ sends telemetry otherwise). Requires Java 11+ (DynamoDB Local 1.25.1).
// Note: DynamoDB Local has no bind-address option; it listens on all interfaces.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { x as extractTar } from 'tar';

const PACKAGE_SPEC = 'amplify-dynamodb-simulator@2.9.30';
// dist.integrity of amplify-dynamodb-simulator@2.9.30 on registry.npmjs.org (contains DynamoDB Local 1.25.1)
const PACKAGE_INTEGRITY =
  'sha512-xTeeRLvzEfqyd5lh3bH4c0kHvSHHmmhD5ZDsHFKAQ5g2Zl6JqlFdutaQhCLHzxEp6Ry1o7TB6niIoXuQAnSewQ==';
const MARKER = '.content-api-complete';
const TAG = '[dynamodb-local]';

const log = (...args) => process.stderr.write(`${TAG} ${args.join(' ')}\n`);

class UsageError extends Error {}

function cacheDir() {
  if (process.env.DYNAMODB_LOCAL_DIR) return path.resolve(process.env.DYNAMODB_LOCAL_DIR);
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'content-api', 'dynamodb-local');
}

function isComplete(dir) {
  try {
    return (
      fs.readFileSync(path.join(dir, MARKER), 'utf8').trim() === PACKAGE_SPEC &&
      fs.statSync(path.join(dir, 'DynamoDBLocal.jar')).isFile() &&
      fs.statSync(path.join(dir, 'DynamoDBLocal_lib')).isDirectory()
    );
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// fetch + extract

function run(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

async function npmPack(destDir) {
  const isWin = process.platform === 'win32';
  const res = await run(isWin ? 'npm.cmd' : 'npm', ['pack', PACKAGE_SPEC, '--ignore-scripts', '--loglevel=error'], {
    cwd: destDir,
    shell: isWin,
    env: { ...process.env, npm_config_update_notifier: 'false' },
  }).catch((err) => {
    throw new Error(`could not run npm: ${err.message}`);
  });
  if (res.code !== 0) {
    throw new Error(`npm pack ${PACKAGE_SPEC} failed (exit ${res.code ?? res.signal}):\n${res.stderr}${res.stdout}`);
  }
  // destDir is a fresh temp dir, so the only .tgz in it is ours (robust against npm's naming of the file)
  const tgz = fs.readdirSync(destDir).find((f) => f.endsWith('.tgz'));
  if (!tgz) throw new Error(`npm pack produced no tarball:\n${res.stdout}\n${res.stderr}`);
  return path.join(destDir, tgz);
}

function verifyIntegrity(buf) {
  const [algo, expected] = PACKAGE_INTEGRITY.split(/-(.*)/s);
  const actual = createHash(algo).update(buf).digest('base64');
  if (actual !== expected) {
    throw new Error(`integrity mismatch for ${PACKAGE_SPEC}: expected ${PACKAGE_INTEGRITY}, got ${algo}-${actual}`);
  }
}

// The entries below `package/emulator/` of the verified tarball, into `outDir`. node-tar reads the gzip and every tar
// header form, and refuses absolute paths, `..` and writes through symlinks; strict turns any such refusal or damaged
// entry into a failure instead of a skipped file. Only files and directories are taken (the package has nothing else).
const EMULATOR_PREFIX = 'package/emulator/';
const TAKEN_TYPES = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory']);

async function extractEmulator(tgzBuf, outDir) {
  let files = 0;
  await pipeline(
    Readable.from([tgzBuf]),
    extractTar({
      cwd: outDir,
      strip: EMULATOR_PREFIX.split('/').length - 1,
      strict: true,
      preserveOwner: false,
      filter: (entryPath, entry) =>
        entryPath.replace(/^\.\//, '').startsWith(EMULATOR_PREFIX) && TAKEN_TYPES.has(entry.type),
      onReadEntry: (entry) => {
        if (entry.type !== 'Directory') files++;
      },
    }),
  );
  return files;
}

async function ensureEmulator() {
  const dir = cacheDir();
  if (isComplete(dir)) {
    log(`using cached DynamoDB Local in ${dir}`);
    return dir;
  }
  const parent = path.dirname(dir);
  await fsp.mkdir(parent, { recursive: true });
  const tmp = await fsp.mkdtemp(path.join(parent, `.${path.basename(dir)}.tmp-`));
  try {
    log(`fetching ${PACKAGE_SPEC} with npm pack (cache: ${dir}) ...`);
    const tgz = await npmPack(tmp);
    const buf = await fsp.readFile(tgz);
    verifyIntegrity(buf);
    await fsp.rm(tgz, { force: true });
    const out = path.join(tmp, 'emulator');
    await fsp.mkdir(out);
    log(`extracting emulator/ (${(buf.length / 1e6).toFixed(1)} MB tarball) ...`);
    const n = await extractEmulator(buf, out);
    if (!fs.existsSync(path.join(out, 'DynamoDBLocal.jar')))
      throw new Error('tarball has no emulator/DynamoDBLocal.jar');
    await fsp.writeFile(path.join(out, MARKER), `${PACKAGE_SPEC}\n`);

    if (!fs.existsSync(dir)) {
      try {
        await fsp.rename(out, dir);
      } catch (err) {
        if (!isComplete(dir)) throw err; // a concurrent run finished first: fine
      }
    } else {
      // dir exists but is incomplete (e.g. created by the user or an interrupted older version):
      // move our entries in, marker last.
      for (const entry of await fsp.readdir(out)) {
        if (entry === MARKER) continue;
        await fsp.rm(path.join(dir, entry), { recursive: true, force: true });
        await fsp.rename(path.join(out, entry), path.join(dir, entry));
      }
      await fsp.rename(path.join(out, MARKER), path.join(dir, MARKER));
    }
    log(`cached ${n} files in ${dir}`);
  } finally {
    await fsp.rm(tmp, { recursive: true, force: true });
  }
  if (!isComplete(dir)) throw new Error(`cache ${dir} is still incomplete after extraction`);
  return dir;
}

// ---------------------------------------------------------------------------------------------
// start / wait / stop

// DynamoDB Local binds the wildcard address, so probe there (port 0 = let the OS pick a free one).
function freePort(port = 0) {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(port, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function javaBin() {
  if (process.env.DYNAMODB_LOCAL_JAVA) return process.env.DYNAMODB_LOCAL_JAVA;
  if (process.env.JAVA_HOME) {
    const p = path.join(process.env.JAVA_HOME, 'bin', process.platform === 'win32' ? 'java.exe' : 'java');
    if (fs.existsSync(p)) return p;
  }
  return 'java';
}

// One ListTables request; resolves true on HTTP 200 with a TableNames list.
function probe(port) {
  return new Promise((resolve) => {
    const body = '{}';
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/',
        timeout: 2000,
        headers: {
          'Content-Type': 'application/x-amz-json-1.0',
          'X-Amz-Target': 'DynamoDB_20120810.ListTables',
          // DynamoDB Local only needs a well-formed credential scope; the signature is not verified
          Authorization:
            'AWS4-HMAC-SHA256 Credential=local/20000101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
          'Content-Length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let data = '';
        res.on('data', (d) => (data += d));
        res.on('end', () => resolve(res.statusCode === 200 && data.includes('TableNames')));
        res.on('error', () => resolve(false));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end(body);
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function startJava(dir, port) {
  const args = [
    ...(process.env.DYNAMODB_LOCAL_JAVA_OPTS || '').split(/\s+/).filter(Boolean),
    `-Djava.library.path=${path.join(dir, 'DynamoDBLocal_lib')}`,
    '-jar',
    path.join(dir, 'DynamoDBLocal.jar'),
    '-inMemory',
    '-sharedDb',
    '-disableTelemetry',
    '-port',
    String(port),
  ];
  const bin = javaBin();
  log(`starting ${bin} ${args.join(' ')}`);
  const child = spawn(bin, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const state = { child, output: '', exited: false, exitInfo: null, spawnError: null };
  const keep = (d) => {
    state.output += d;
    if (state.output.length > 64 * 1024) state.output = state.output.slice(-64 * 1024);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.on('error', (err) => {
    state.spawnError = err;
    state.exited = true;
  });
  child.on('exit', (code, signal) => {
    state.exited = true;
    state.exitInfo = signal ? `signal ${signal}` : `exit code ${code}`;
  });
  return state;
}

// When Jetty cannot bind, the main thread dies but the JVM keeps running: detect it from the output.
const JAVA_FATAL = /Exception in thread "main"|Failed to bind|BindException/;

async function waitReady(state, port, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (state.exited || JAVA_FATAL.test(state.output)) return false;
    if (await probe(port)) return true;
    await sleep(200);
  }
  return false;
}

async function stopJava(state) {
  if (!state || state.exited) return;
  const exited = new Promise((r) => state.child.once('exit', r));
  state.killedByUs = true;
  state.child.kill('SIGTERM');
  const t = setTimeout(() => {
    if (!state.exited) state.child.kill('SIGKILL');
  }, 5000);
  await exited;
  clearTimeout(t);
}

function describeJavaFailure(state, what) {
  const lines = [`${what}`];
  if (state.spawnError) {
    lines.push(
      state.spawnError.code === 'ENOENT'
        ? `java executable not found (${state.spawnError.path}); install a JRE 11+ or set JAVA_HOME / DYNAMODB_LOCAL_JAVA`
        : `could not start java: ${state.spawnError.message}`,
    );
  } else if (state.exitInfo && !state.killedByUs) {
    lines.push(`java exited early (${state.exitInfo})`);
  }
  if (state.output.trim()) lines.push('--- java output ---', state.output.trimEnd(), '--- end java output ---');
  return lines.join('\n');
}

const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

async function main(argv) {
  const sep = argv.indexOf('--');
  const opts = sep === -1 ? argv : argv.slice(0, sep);
  const command = sep === -1 ? [] : argv.slice(sep + 1);

  if (opts.includes('-h') || opts.includes('--help')) {
    process.stdout.write(
      'usage: node scripts/dynamodb-local.mjs -- <command...>\n       node scripts/dynamodb-local.mjs --fetch-only\n',
    );
    return 0;
  }
  const unknown = opts.filter((o) => o !== '--fetch-only');
  if (unknown.length) throw new UsageError(`unknown option(s): ${unknown.join(' ')}`);
  const fetchOnly = opts.includes('--fetch-only');
  if (!fetchOnly && command.length === 0)
    throw new UsageError('missing command: node scripts/dynamodb-local.mjs -- <command...>');

  const dir = await ensureEmulator();
  if (fetchOnly) return 0;

  let java = null;
  let cmdChild = null;
  let stopping = null;
  const onSignal = (sig) => {
    if (stopping) return;
    log(`received ${sig}, shutting down`);
    stopping = sig;
    if (cmdChild && cmdChild.exitCode === null && cmdChild.signalCode === null) {
      try {
        cmdChild.kill(sig);
      } catch {}
    } else {
      stopJava(java).finally(() => process.exit(SIGNAL_EXIT[sig] ?? 1));
    }
  };
  for (const sig of Object.keys(SIGNAL_EXIT)) process.on(sig, onSignal);

  try {
    const fixedPort = process.env.DYNAMODB_LOCAL_PORT ? Number(process.env.DYNAMODB_LOCAL_PORT) : null;
    if (fixedPort !== null && !(Number.isInteger(fixedPort) && fixedPort > 0 && fixedPort < 65536)) {
      throw new UsageError(`invalid DYNAMODB_LOCAL_PORT: ${process.env.DYNAMODB_LOCAL_PORT}`);
    }
    const timeoutMs = Number(process.env.DYNAMODB_LOCAL_START_TIMEOUT_MS) || 60_000;
    let port;
    // a free port can be taken between probing and java binding it: retry a few times then
    for (let attempt = 1; ; attempt++) {
      if (fixedPort !== null) {
        await freePort(fixedPort).catch((err) => {
          throw new UsageError(`DYNAMODB_LOCAL_PORT=${fixedPort} is not usable: ${err.code || err.message}`);
        });
      }
      port = fixedPort ?? (await freePort());
      const started = Date.now();
      java = startJava(dir, port);
      const ready = await waitReady(java, port, timeoutMs);
      if (stopping) return SIGNAL_EXIT[stopping] ?? 1;
      if (ready) {
        log(`ready on http://127.0.0.1:${port} after ${Date.now() - started} ms`);
        break;
      }
      const fatal = java.exited || JAVA_FATAL.test(java.output);
      await stopJava(java);
      if (fatal && /BindException|Failed to bind/.test(java.output) && fixedPort === null && attempt < 3) {
        log(`port ${port} was taken meanwhile, retrying with another port`);
        continue;
      }
      const what = fatal ? 'DynamoDB Local failed to start' : `DynamoDB Local did not answer within ${timeoutMs} ms`;
      log(describeJavaFailure(java, what).replace(/\n/g, `\n${TAG} `));
      return 1;
    }

    // if java dies while the command runs, say so (the command will then fail on its own)
    java.child.once('exit', () => {
      if (!stopping && cmdChild && cmdChild.exitCode === null) {
        log(
          describeJavaFailure(java, 'DynamoDB Local stopped unexpectedly while the command was running').replace(
            /\n/g,
            `\n${TAG} `,
          ),
        );
      }
    });

    const env = {
      ...process.env,
      AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${port}`,
      AWS_REGION: process.env.AWS_REGION || 'us-east-1',
      AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID || 'local',
      AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY || 'local',
      DYNAMODB_ENGINE: 'dynamodb-local',
      // The Java engine on a shared 2-core machine answers a request in seconds at times: a longer request timeout
      // than a Lambda's 3 s, so the SDK does not resend (and find "already there") what landed slowly.
      DYNAMODB_REQUEST_TIMEOUT_MS: process.env.DYNAMODB_REQUEST_TIMEOUT_MS || '10000',
    };
    log(`running: ${command.join(' ')}`);
    const code = await new Promise((resolve) => {
      cmdChild = spawn(command[0], command.slice(1), { stdio: 'inherit', env, shell: process.platform === 'win32' });
      cmdChild.on('error', (err) => {
        log(err.code === 'ENOENT' ? `command not found: ${command[0]}` : `could not run command: ${err.message}`);
        resolve(127);
      });
      cmdChild.on('exit', (c, signal) => {
        if (signal) resolve(128 + (os.constants.signals[signal] ?? 0));
        else resolve(c ?? 1);
      });
    });
    return stopping ? (SIGNAL_EXIT[stopping] ?? code) : code;
  } finally {
    await stopJava(java);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    log(err instanceof UsageError ? err.message : `error: ${err.stack || err}`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
