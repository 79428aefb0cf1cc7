// Jest transform: TypeScript, and the ESM-only packages (@middy, jose), to CommonJS with esbuild, the compiler that
// also builds the Lambda bundles and runs tsx. (@swc/core could not be locked for every platform from our registry.)
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { transformSync, version } = require('esbuild');

// Cached output is keyed on this file and esbuild's version too, so changing either recompiles.
const SELF = createHash('sha256').update(readFileSync(__filename)).update(version).digest('hex');

module.exports = {
  getCacheKey(source, filename, options) {
    return createHash('sha256').update(SELF).update(filename).update(source).update(options.configString).digest('hex');
  },
  process(source, filename) {
    const { code, map } = transformSync(source, {
      loader: /\.[cm]?tsx?$/.test(filename) ? 'ts' : 'js',
      format: 'cjs',
      target: 'node24',
      sourcemap: 'external',
      sourcefile: filename,
      sourcesContent: false,
      // import() becomes require(): jest runs CommonJS and has no ESM loader without experimental flags.
      supported: { 'dynamic-import': false },
    });
    return { code, map };
  },
};
