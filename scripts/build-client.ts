// The client package (client/): its types generated from the API's own sources, then its bundles and declarations.
// `npm run build:client` writes client/src/generated/ (committed; a unit test fails when it drifts from
// docs/openapi.json or the error catalogue), bundles client/dist with esbuild (ESM, and CommonJS for `require`),
// writes the declarations for both and prints the core's gzipped size.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { renderApiTypes, renderErrorCodes } from './client-types';

const root = join(import.meta.dirname, '..');
const client = join(root, 'client');
const GENERATED = {
  api: join(client, 'src/generated/api.ts'),
  errorCodes: join(client, 'src/generated/error-codes.ts'),
};

// Unchanged files are left alone: a test may be reading them while the package test builds.
function writeIfChanged(file: string, text: string): void {
  if (!existsSync(file) || readFileSync(file, 'utf8') !== text) writeFileSync(file, text);
}

// Node's resolution (moduleResolution nodenext) needs the file's extension on a relative import; tsc writes the
// specifiers as the sources have them (extensionless, which the bundler resolution of this repository and Jest want).
const RELATIVE_SPECIFIER = /(from\s+|import\(\s*)(['"])(\.{1,2}\/[^'"]+?)\2/g;

/** Gives each declaration's relative imports their extension, and writes a .d.cts twin for the CommonJS build. */
function writeDeclarationsForNode(dist: string): void {
  const files = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.d.ts'));
  for (const file of files) {
    const text = readFileSync(join(dist, file), 'utf8');
    const withExtension = (extension: string) =>
      text.replace(RELATIVE_SPECIFIER, (_all, before: string, quote: string, specifier: string) =>
        /\.[cm]?js$/.test(specifier)
          ? `${before}${quote}${specifier}${quote}`
          : `${before}${quote}${specifier}${extension}${quote}`,
      );
    writeFileSync(join(dist, file), withExtension('.js'));
    writeFileSync(join(dist, file.replace(/\.d\.ts$/, '.d.cts')), withExtension('.cjs'));
  }
}

async function main(): Promise<void> {
  mkdirSync(dirname(GENERATED.api), { recursive: true });
  // Kept out of Biome (biome.json): the drift test compares them with the renderer's output byte for byte.
  writeIfChanged(GENERATED.api, renderApiTypes(JSON.parse(readFileSync(join(root, 'docs/openapi.json'), 'utf8'))));
  writeIfChanged(GENERATED.errorCodes, renderErrorCodes());
  if (process.argv.includes('--types-only')) return;

  const dist = join(client, 'dist');
  rmSync(dist, { recursive: true, force: true });
  const common = { bundle: true, format: 'esm', platform: 'neutral', target: 'es2022', logLevel: 'warning' } as const;
  // Realtime is its own entry (content-api-client/realtime): an app that never subscribes bundles none of it.
  // Each entry also as CommonJS (.cjs) for the `require` condition: a CommonJS app, or Jest without an ESM transform.
  // Offline writes too (content-api-client/offline), and their file store for Node (file-store, which imports node:fs).
  // Backups too (content-api-client/backup): the pieces codec and exportJson/importJson.
  for (const entry of ['index', 'realtime', 'offline', 'file-store', 'backup']) {
    const platform = entry === 'file-store' ? 'node' : 'neutral';
    await build({
      ...common,
      platform,
      entryPoints: [join(client, `src/${entry}.ts`)],
      outfile: join(dist, `${entry}.js`),
    });
    await build({
      ...common,
      platform,
      format: 'cjs',
      entryPoints: [join(client, `src/${entry}.ts`)],
      outfile: join(dist, `${entry}.cjs`),
    });
  }
  await build({
    ...common,
    platform: 'node',
    entryPoints: [join(client, 'src/bin.ts')],
    outfile: join(dist, 'cli.js'),
    banner: { js: '#!/usr/bin/env node' },
  });
  execFileSync(join(root, 'node_modules/.bin/tsc'), ['-p', join(client, 'tsconfig.build.json')], { stdio: 'inherit' });
  writeDeclarationsForNode(dist);

  // The size an app pays: the core minified as a bundler would (everything imported), then gzipped; realtime alike.
  for (const entry of ['index', 'realtime', 'offline']) {
    const minified = await build({
      ...common,
      entryPoints: [join(client, `src/${entry}.ts`)],
      minify: true,
      write: false,
    });
    const bytes = minified.outputFiles[0]!.contents;
    const label = entry === 'index' ? 'client core' : `client ${entry}`;
    console.error(`${label}: ${bytes.length} B minified, ${gzipSync(bytes, { level: 9 }).length} B minified+gzipped`);
  }
}

await main();
