// Every `npx`/`npm exec` command written in the repository's docs and code runs a package this project installs or
// publishes: never one npx would fetch from the registry under a name we do not own (it once said
// `npx content-api`, an unrelated public package, which CI would have run with CONTENT_API_KEY in its environment).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(__dirname, '../..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const client = JSON.parse(readFileSync(join(root, 'client/package.json'), 'utf8'));
// What npx finds without the registry: the bins of this checkout's installed packages.
const localBins = new Set(readdirSync(join(root, 'node_modules/.bin')));
const installed = new Set([...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies)]);
// Public tools named in the docs on purpose, each the well-known package of that name.
const THIRD_PARTY = new Set(['wscat']);
// CHANGELOG.md is history: it names what the package was called before. docs.test.ts quotes npx in its own checks.
const SKIP = new Set([
  'CHANGELOG.md',
  'test/unit/docs.test.ts',
  'package-lock.json',
  'test/unit/commands-in-docs.test.ts',
]);
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', '.data', '.serverless', 'coverage', 'results']);

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIP_DIRS.has(entry.name) ? [] : files(path);
    const name = relative(root, path);
    return /\.(md|ts|mjs|cjs|js|json|ya?ml|sh)$/.test(entry.name) && !SKIP.has(name) ? [name] : [];
  });
}

/** The package each `npx ...` / `npm exec ...` in `text` would run, with whether it may download. */
function commands(text: string): Array<{ command: string; runs: string; mayDownload: boolean }> {
  const found = [];
  // Flags before the package: -p/--package/-c/--call take a value, the others (--yes, --no-install, ...) do not.
  const flag = String.raw`\s+(?:(?:-p|--package|-c|--call)(?:=|\s+)[^\s'"\x60]+|--?[\w-]+(?:=[^\s'"\x60]+)?)`;
  for (const match of text.matchAll(new RegExp(String.raw`\b(?:npx|npm exec)((?:${flag})*)\s+([@\w][\w@./-]*)`, 'g'))) {
    const [command, flags = '', bin = ''] = match;
    const pkg = /(?:-p|--package)[= ]([^\s'"`]+)/.exec(flags)?.[1];
    found.push({ command, runs: pkg ?? bin, mayDownload: !/--no-install|--no\b|--offline/.test(flags) });
  }
  return found;
}

const unsafe = files(root).flatMap((file) =>
  commands(readFileSync(join(root, file), 'utf8'))
    .filter(({ runs, mayDownload }) => {
      if (runs === client.name) return mayDownload; // ours, but not necessarily published yet: never a download
      if (runs === '--' || THIRD_PARTY.has(runs)) return false;
      return !(localBins.has(runs) || installed.has(runs.replace(/@[^@/]*$/, '')));
    })
    .map(({ command }) => `${file}: ${command}`),
);

describe('commands in the docs and code', () => {
  it('finds the commands it checks (the scanner works)', () => {
    expect(commands('npx --no-install content-api-client get data')).toEqual([
      { command: 'npx --no-install content-api-client', runs: 'content-api-client', mayDownload: false },
    ]);
    expect(commands('npx --yes -p @content-api/client content-api push')[0]).toMatchObject({
      runs: '@content-api/client',
      mayDownload: true,
    });
    expect(commands('run `npx content-api get data`')[0]).toMatchObject({ runs: 'content-api', mayDownload: true });
  });

  it('each runs a package this repository installs, or its own client without downloading', () => {
    expect(unsafe).toEqual([]);
  });

  it('no scope we do not own is named as ours', () => {
    const scoped = files(root).filter(
      (file) =>
        !file.endsWith('commands-in-docs.test.ts') && /@content-api\//.test(readFileSync(join(root, file), 'utf8')),
    );
    expect(scoped).toEqual([]);
  });
});
