// Bundling: one minified, tree-shaken ESM bundle per function in serverless.yml, zipped the way Lambda loads it.
//
// A handler `functions/set.handler` is bundled from functions/set.ts into a zip holding functions/set.mjs and its
// source map (plus the lazy modules it import()s, functions/lazy/*.mjs: see "Lazy modules" below): Lambda resolves
// the handler string to the .mjs file, the local server (tsx) to the .ts file.
// Used by the osls plugin (infra/osls-plugin.mjs) on every `osls package` / `osls deploy`, and by `npm run bundle`.
// No top-level await here: osls loads the plugin, and so this module, with require().
import { decode, encode } from '@jridgewell/sourcemap-codec';
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import yazl from 'yazl';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Zips go where osls keeps its artifacts; the unzipped bundles, maps and esbuild's metafile under build/. */
export const ARTIFACT_DIR = '.serverless';
export const BUILD_DIR = join(ARTIFACT_DIR, 'build');
/** The local runtime (dev server, embedded engine, admin CLI) must never reach a Lambda. */
const LOCAL_ONLY = `lib${sep}local${sep}`;
const SOURCE_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'];
/** A fixed timestamp makes an unchanged bundle an identical zip (same hash), so osls sees unchanged code as unchanged. */
const ZIP_MTIME = new Date('2000-01-01T00:00:00Z');

/**
 * Packages left out of the bundles, per strategy. Measured with scripts/bundle-coldstart.mjs: bundling the AWS SDK
 * adds ~100 KB to each zip but halves the CPU a cold start spends loading the code and answering its first request
 * (~85 ms vs ~180 ms), and runs the SDK version the tests ran (the runtime's copy is older). `external` is for measuring.
 */
export const EXTERNAL = { bundled: [], external: ['@aws-sdk/*'] };

/** `functions/set.handler` -> `functions/set`: the module path shared by Lambda and the local server. */
export function handlerModule(handler) {
  const dot = handler.lastIndexOf('.');
  if (dot <= 0) throw new Error(`handler "${handler}" is not <module>.<export>`);
  return handler.slice(0, dot);
}

function sourceOf(root, module) {
  for (const extension of SOURCE_EXTENSIONS) {
    const file = join(root, `${module}${extension}`);
    if (existsSync(file)) return file;
  }
  throw new Error(`no source for ${module} (looked for ${SOURCE_EXTENSIONS.map((e) => module + e).join(', ')})`);
}

/** Fails the build at any import that would pull the local runtime into a Lambda, naming the importer. */
const keepLocalRuntimeOut = (root) => ({
  name: 'keep-local-runtime-out',
  setup(plugin) {
    plugin.onLoad({ filter: /[\\/]lib[\\/]local[\\/]/ }, (args) => {
      if (!relative(root, args.path).startsWith(LOCAL_ONLY)) return undefined;
      return {
        errors: [
          { text: `${relative(root, args.path)} is local-only code and must not be imported by a Lambda handler` },
        ],
      };
    });
  },
});

async function writeZip(zipPath, files) {
  const zip = new yazl.ZipFile();
  for (const [file, name] of files) zip.addBuffer(readFileSync(file), name, { mtime: ZIP_MTIME, mode: 0o100644 });
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(zipPath));
}

/**
 * Keeps the mappings into our own sources (lib/, functions/) and marks everything else unmapped: stack frames in our
 * code still point at the .ts line, frames inside node_modules show the bundle position. Measured on set: the full
 * map is 754 KB (mostly the SDK), over half of the zip, and costs ~11 ms CPU at import with --enable-source-maps;
 * this one is 39 KB and ~7 ms (most of which is the flag itself). The VLQ text is decoded and encoded by
 * @jridgewell/sourcemap-codec (the codec rollup and babel use); a run of unmapped segments on a line
 * is written as one.
 * @param {{ sources: string[], names: string[], mappings: string }} map
 */
export function ownSourcesOnly(map, isOwn = (source) => !source.split('/').includes('node_modules')) {
  const own = map.sources.map(isOwn);
  const sources = [];
  const names = [];
  const sourceIndex = new Map();
  const nameIndex = new Map();
  const indexOf = (index, list, value) => {
    if (!index.has(value)) index.set(value, list.push(value) - 1);
    return index.get(value);
  };
  const lines = decode(map.mappings).map((line) => {
    const kept = [];
    for (const [column, source, sourceLine, sourceColumn, name] of line) {
      if (source === undefined || !own[source]) {
        if (kept.at(-1)?.length !== 1) kept.push([column]);
        continue;
      }
      const segment = [column, indexOf(sourceIndex, sources, map.sources[source]), sourceLine, sourceColumn];
      if (name !== undefined) segment.push(indexOf(nameIndex, names, map.names[name]));
      kept.push(segment);
    }
    return kept;
  });
  return { ...map, sources, names, mappings: encode(lines) };
}

/** Generates the ajv validators the handlers import (the generated file is not committed). */
export function buildValidators(root = ROOT) {
  const run = spawnSync('npm', ['run', '-s', 'build:validators'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (run.status !== 0) throw new Error(`npm run build:validators failed (exit ${run.status})`);
}

/**
 * Lazy modules. An import() in our code (lib/, functions/) does not go into the bundle: its target, a package or one
 * of our files that imports packages only, is bundled into a file of its own next to the entry (`./lazy/<name>.mjs`),
 * zipped with each function that uses it, and loaded with its first use. A cold start that never reaches the import()
 * neither compiles nor runs that code. Not esbuild's code splitting: a split bundle loads the chunks it shares with
 * its import() targets at start (measured: ~2-3 ms of cold start per extra file, about what the lazy code costs); and
 * without splitting esbuild inlines an import() target, wrapped for lazy init, so it is compiled at start anyway (and
 * again when it runs), together with everything it reaches.
 *
 * A lazy module shares no code with the bundle that loads it, so it must not import our own modules (that would be a
 * second copy of their state and classes: the build fails). The packages in LAZY_SHARED it takes from the loading
 * bundle instead of carrying a copy: the loader shares them first, as globalThis[Symbol.for(LAZY_SHARED_KEY)][package]
 * (see lib/http/idempotency.ts); the lazy file fails at once, naming what is missing, if they are not there.
 */
export const LAZY_DIR = 'lazy';
export const LAZY_SHARED = ['@aws-sdk/client-dynamodb'];
export const LAZY_SHARED_KEY = 'content-api.lazy-shared';

const isOwnCode = (root, file) => !relative(root, file).startsWith('..') && !file.split(sep).includes('node_modules');

/** `jose` -> `jose`, `@scope/pkg/sub` -> `scope-pkg-sub`; our `lib/http/x.ts` -> `lib-http-x`. */
function lazyNameOf(root, specifier, file) {
  const name = isOwnCode(root, file) ? relative(root, file).replace(/\.[^./\\]+$/, '') : specifier;
  return name.replace(/^@/, '').replace(/[^\w.-]+/g, '-');
}

/** Main builds: each import() in our code becomes an external `./lazy/<name>.mjs`; `found` collects file -> name. */
const lazyImports = (root, found) => ({
  name: 'lazy-imports',
  setup(plugin) {
    plugin.onResolve({ filter: /.*/ }, async (args) => {
      if (args.kind !== 'dynamic-import' || args.pluginData?.lazy || !isOwnCode(root, args.importer)) return undefined;
      const resolved = await plugin.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: { lazy: true },
      });
      if (resolved.errors.length > 0) return { errors: resolved.errors };
      if (resolved.external) return undefined;
      const name = lazyNameOf(root, args.path, resolved.path);
      const clash = [...found].find(([file, other]) => other === name && file !== resolved.path);
      if (clash)
        return {
          errors: [
            {
              text: `lazy modules ${relative(root, clash[0])} and ${relative(root, resolved.path)} would both be ${name}.mjs`,
            },
          ],
        };
      found.set(resolved.path, name);
      return { path: `./${LAZY_DIR}/${name}.mjs`, external: true };
    });
  },
});

/** Lazy builds: a LAZY_SHARED package is a module that hands out what the loading bundle shared (`names` of it). */
const sharedFromLoader = (names, lazyFile) => ({
  name: 'shared-from-loader',
  setup(plugin) {
    const filter = new RegExp(`^(${LAZY_SHARED.map((p) => p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})$`);
    plugin.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'lazy-shared' }));
    plugin.onLoad({ filter: /.*/, namespace: 'lazy-shared' }, (args) => {
      const wanted = names.get(args.path) ?? [];
      const shared = `globalThis[Symbol.for(${JSON.stringify(LAZY_SHARED_KEY)})]?.[${JSON.stringify(args.path)}] ?? {}`;
      const message = `\`${lazyFile} takes \${missing.join(', ')} from ${args.path} of the bundle that loads it, which did not share them\``;
      return {
        loader: 'js',
        contents: [
          `const shared = ${shared};`,
          `const missing = ${JSON.stringify(wanted)}.filter((name) => shared[name] === undefined);`,
          `if (missing.length > 0) throw new Error(${message});`,
          wanted.length > 0 ? `export const { ${wanted.join(', ')} } = shared;` : '',
        ].join('\n'),
      };
    });
  },
});

/** Which names a lazy module imports from each LAZY_SHARED package (a quick unminified build with them external). */
async function sharedNamesOf(options) {
  const result = await build({
    ...options,
    minify: false,
    sourcemap: false,
    metafile: false,
    write: false,
    external: [...options.external, ...LAZY_SHARED],
  });
  const names = new Map();
  for (const { text } of result.outputFiles) {
    for (const [statement, list, from] of text.matchAll(/^import\s*(\{[^}]*\}|[^'"]*?)\s*from\s*"([^"]+)"/gm)) {
      if (!LAZY_SHARED.includes(from)) continue;
      if (!list.startsWith('{'))
        throw new Error(`lazy module: only named imports from ${from} can be shared (${statement})`);
      const own = list
        .slice(1, -1)
        .split(',')
        .map((spec) => spec.trim().split(/\s+as\s+/)[0])
        .filter(Boolean);
      names.set(from, [...new Set([...(names.get(from) ?? []), ...own])].sort());
    }
  }
  return names;
}

/** What every build shares: the functions, their lazy modules and the bench's floor alike. */
function commonOptions(root, sdk) {
  return {
    absWorkingDir: root,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: false,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    // ESM builds first: they tree-shake; CommonJS-only packages still resolve through main.
    mainFields: ['module', 'main'],
    minify: true,
    treeShaking: true,
    // Lambda runs with NODE_OPTIONS=--enable-source-maps; stack traces need positions and names, not the sources.
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    external: EXTERNAL[sdk],
    // A real require() for any bundled CommonJS module that loads a Node built-in (esbuild's shim would throw).
    banner: {
      js: "import{createRequire as __createRequire}from'node:module';const require=__createRequire(import.meta.url);",
    },
    metafile: true,
    logLevel: 'warning',
  };
}

/**
 * The lazy modules a bundle loads on first use: their outputs in the metafile (paths relative to the root).
 * @param {{ outputs: Record<string, { imports: Array<{ path: string, kind: string, external?: boolean }> }> }} metafile
 * @param {string} output the entry's path in the metafile (relative to the root)
 */
export function lazyModulesOf(metafile, output) {
  return (metafile.outputs[output]?.imports ?? [])
    .filter((i) => i.external && i.kind === 'dynamic-import' && i.path.startsWith(`./${LAZY_DIR}/`))
    .map((i) => join(dirname(output), i.path).split(sep).join('/'))
    .filter((file, index, files) => files.indexOf(file) === index);
}

/**
 * Bundles every function given as { name: handler } in one esbuild run (shared modules are parsed once; each entry
 * still gets its own self-contained, separately tree-shaken bundle), builds the lazy modules they import() (see
 * above), then zips each function with its lazy modules. Writes <buildDir>/meta.json (every build's metafile, merged).
 * `maps: 'all'` keeps the mappings into node_modules too (for measuring; see ownSourcesOnly).
 * @param {{ root?: string, functions: Record<string, string>, sdk?: 'bundled' | 'external', maps?: 'own' | 'all',
 *   buildDir?: string, artifactDir?: string, validators?: boolean }} options
 */
export async function bundleFunctions({
  root = ROOT,
  functions,
  sdk = 'bundled',
  maps = 'own',
  buildDir = BUILD_DIR,
  artifactDir = ARTIFACT_DIR,
  validators = true,
}) {
  if (validators) buildValidators(root);
  const outDir = join(root, buildDir);
  rmSync(outDir, { recursive: true, force: true });
  const modules = [...new Set(Object.values(functions).map(handlerModule))];
  const common = commonOptions(root, sdk);
  const lazy = new Map();
  const main = await build({
    ...common,
    entryPoints: Object.fromEntries(modules.map((module) => [module, sourceOf(root, module)])),
    outdir: outDir,
    plugins: [keepLocalRuntimeOut(root), lazyImports(root, lazy)],
  });
  const metafile = { inputs: { ...main.metafile.inputs }, outputs: { ...main.metafile.outputs } };
  const rel = (file) => relative(root, file).split(sep).join('/');
  // Each lazy module is built next to every entry folder that imports it (the import is `./lazy/<name>.mjs`).
  const wanted = new Set(modules.flatMap((module) => lazyModulesOf(metafile, rel(join(outDir, `${module}.mjs`)))));
  for (const [file, name] of lazy) {
    if (main.metafile.inputs[rel(file)]) throw new Error(`${rel(file)} is imported both with import() and statically`);
    const outputs = [...wanted].filter((output) => output.endsWith(`/${LAZY_DIR}/${name}.mjs`));
    await Promise.all(
      outputs.map(async (output) => {
        const entry = relative(outDir, join(root, output)).replace(/\.mjs$/, '');
        const options = {
          ...common,
          entryPoints: { [entry]: file },
          outdir: outDir,
          plugins: [keepLocalRuntimeOut(root)],
        };
        const names = await sharedNamesOf(options);
        const result = await build({
          ...options,
          plugins: [...options.plugins, sharedFromLoader(names, `${entry}.mjs`)],
        });
        const own = Object.keys(result.metafile.inputs).filter(
          (input) => input !== rel(file) && !input.includes(':') && isOwnCode(root, join(root, input)),
        );
        if (own.length > 0)
          throw new Error(
            `lazy module ${rel(file)} imports our own ${own.join(', ')}: only packages (see scripts/bundle.mjs)`,
          );
        Object.assign(metafile.inputs, result.metafile.inputs);
        Object.assign(metafile.outputs, result.metafile.outputs);
      }),
    );
  }
  writeFileSync(join(outDir, 'meta.json'), JSON.stringify(metafile));
  for (const output of Object.keys(metafile.outputs).filter((file) => file.endsWith('.mjs'))) {
    const file = join(root, `${output}.map`);
    const map = JSON.parse(readFileSync(file, 'utf8'));
    // Sources relative to where the file sits in the zip (functions/x.mjs, functions/lazy/y.mjs), so Lambda's stack
    // traces read /var/task/lib/storage/write.ts:42 rather than a path climbing out of the build directory.
    const inZip = join(root, relative(outDir, join(root, output)));
    map.sources = map.sources.map((source) => relative(dirname(inZip), resolve(dirname(file), source)));
    writeFileSync(file, JSON.stringify(maps === 'own' ? ownSourcesOnly(map) : map));
  }
  mkdirSync(join(root, artifactDir), { recursive: true });
  return Promise.all(
    Object.entries(functions).map(async ([name, handler]) => {
      const module = handlerModule(handler);
      const bundle = join(outDir, `${module}.mjs`);
      const zip = join(root, artifactDir, `${name}.zip`);
      const lazyFiles = lazyModulesOf(metafile, rel(bundle)).map((output) => join(root, output));
      await writeZip(
        zip,
        [bundle, ...lazyFiles].flatMap((file) => {
          const inZip = relative(outDir, file).split(sep).join('/');
          return [
            [file, inZip],
            [`${file}.map`, `${inZip}.map`],
          ];
        }),
      );
      return {
        name,
        handler,
        bundle: relative(root, bundle),
        zip: relative(root, zip),
        bundleBytes: statSync(bundle).size,
        // Loaded only when the code reaches its import(): not part of a cold start that does not.
        lazy: lazyFiles.map((file) => ({ file: relative(root, file), bytes: statSync(file).size })),
        zipBytes: statSync(zip).size,
      };
    }),
  );
}

/** { name: handler } for every function in serverless.yml (read as plain YAML, as the local server does). */
export function functionsOf(root = ROOT) {
  const config = parse(readFileSync(join(root, 'serverless.yml'), 'utf8'));
  return Object.fromEntries(Object.entries(config.functions).map(([name, fn]) => [name, fn.handler]));
}

/** `npm run bundle [-- --sdk external]`: bundles and zips every function without running osls. */
async function main() {
  const sdk = process.argv.includes('--sdk') ? process.argv[process.argv.indexOf('--sdk') + 1] : 'bundled';
  if (!(sdk in EXTERNAL)) throw new Error(`--sdk must be one of ${Object.keys(EXTERNAL).join(', ')}`);
  const started = Date.now();
  const results = await bundleFunctions({ functions: functionsOf(), sdk });
  for (const r of results)
    console.log(
      `${r.zip}  ${(r.zipBytes / 1024).toFixed(1)} KB zipped, ${(r.bundleBytes / 1024).toFixed(1)} KB bundle`,
    );
  console.log(`${results.length} functions bundled in ${Date.now() - started} ms`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
