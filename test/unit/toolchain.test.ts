// The Node the project asks for, and what a fresh `npm ci` does with it: no Node downloaded by an install script, no
// install script outside package.json's allowScripts (npm warns about each), and no dependency whose `engines`
// rejects a Node the project accepts (npm prints EBADENGINE for each, and fails under engine-strict).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../..');
const json = (file: string) => JSON.parse(readFileSync(join(root, file), 'utf8'));
const manifest = json('package.json');
const lock = json('package-lock.json');
const nvmrc = readFileSync(join(root, '.nvmrc'), 'utf8').trim();
// semver ships without types; it comes with npm's own tree (dependency-cruiser, jest).
const semver = require('semver') as { satisfies(version: string, range: string): boolean };
// The lowest release of each major the project accepts (engines ranges are lower bounds), and today's 22 LTS.
const ACCEPTED = ['22.13.0', '22.23.0', `${nvmrc}.0.0`];
const lockedPackages = Object.entries(lock.packages as Record<string, Record<string, unknown>>).filter(
  ([path]) => path,
);

describe('the Node for the scripts', () => {
  it('is not a dependency: no `node` package downloading a runtime through an unpinned nested install', () => {
    expect(manifest.dependencies.node).toBeUndefined();
    expect(manifest.devDependencies.node).toBeUndefined();
    expect(lockedPackages.map(([path]) => path)).not.toContain('node_modules/node');
  });

  it('.nvmrc names the Lambdas runtime; engines and devEngines accept it and the Node 22 LTS', () => {
    const runtime = /^\s*runtime:\s*nodejs(\d+)\.x\s*$/m.exec(readFileSync(join(root, 'serverless.yml'), 'utf8'));
    expect(runtime?.[1]).toBe(nvmrc);
    for (const range of [manifest.engines.node, manifest.devEngines.runtime.version]) {
      for (const version of ACCEPTED) expect(semver.satisfies(version, range)).toBe(true);
      expect(semver.satisfies('22.12.0', range)).toBe(false);
      expect(semver.satisfies('20.19.0', range)).toBe(false);
    }
    // A Node outside the range is a warning from npm install/ci/run, not a refusal (lint and typecheck still run).
    expect(manifest.devEngines.runtime).toMatchObject({ name: 'node', onFail: 'warn' });
  });

  it('every Node the project accepts satisfies every locked dependency: npm ci prints no EBADENGINE', () => {
    const rejecting = lockedPackages
      .filter(([, entry]) => !entry.optional && typeof (entry.engines as { node?: unknown })?.node === 'string')
      .flatMap(([path, entry]) => {
        const range = (entry.engines as { node: string }).node;
        return ACCEPTED.filter((version) => !semver.satisfies(version, range)).map((v) => `${path} (${range}) on ${v}`);
      });
    expect(rejecting).toEqual([]);
  });

  it('each install script in the lockfile is decided in allowScripts: npm ci prints no install-scripts warning', () => {
    const withScripts = lockedPackages
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts.filter((name) => typeof manifest.allowScripts[name] !== 'boolean')).toEqual([]);
    // And none is allowed that no longer exists (an allowance outliving its package hides a rename).
    expect(Object.keys(manifest.allowScripts).filter((name) => !withScripts.includes(name))).toEqual([]);
  });
});
