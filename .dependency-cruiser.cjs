// The dependency rule (npm run lint:deps): every import between lib/ folders points down the layers, and nothing
// a Lambda bundles imports the local runtime, the docs, the bench, the scripts or the tests. The layers, lowest
// first, are the README's (Architecture); a folder may import the folders listed before it, never those after.
const LAYERS = [
  'config',
  'paths',
  'content',
  'dynamo',
  'schema',
  'policy',
  'rules',
  'expressions',
  'auth',
  'storage',
  'store',
  'webhooks',
  'realtime',
  'history',
  'http',
];
// On top: never imported by Lambda code (functions/ and the layers above).
const TOP = '^(lib/(local|openapi)/|bench/|scripts/|test/)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...LAYERS.map((layer, i) => ({
      name: `${layer}-points-down`,
      comment: `lib/${layer} may import only ${LAYERS.slice(0, i).join(', ') || 'nothing of ours'} (README, Architecture)`,
      severity: 'error',
      from: { path: `^lib/${layer}/` },
      to: { path: [`^lib/(${LAYERS.slice(i + 1).join('|') || '-'})/`, '^functions/', TOP] },
    })),
    {
      name: 'storage-through-its-face',
      comment:
        'lib/storage is entered through lib/storage/index.ts alone: how content is laid out in segments stays ' +
        'inside (tests and the bench may look inside)',
      severity: 'error',
      from: { path: '^(lib|functions)/', pathNot: '^lib/storage/' },
      to: { path: '^lib/storage/', pathNot: '^lib/storage/index[.]ts$' },
    },
    {
      name: 'storage-layout-is-pure',
      comment:
        'lib/storage/layout is the pure core of the engine: the key grammar, the item layout, cut and assemble. It ' +
        'imports only itself, the JSON model and paths: no AWS SDK, no DynamoDB client, no environment, no ' +
        'randomness (new ids are handed in). Only bucketed.ts hashes (node:crypto createHash: deterministic)',
      severity: 'error',
      from: { path: '^lib/storage/layout/' },
      to: {
        pathNot: [
          '^lib/storage/layout/',
          '^lib/content/json[.]ts$',
          '^lib/paths/index[.]ts$',
          '^node_modules/(lossless-json|big[.]js)/',
        ],
        dependencyTypesNot: ['core'],
      },
    },
    {
      name: 'storage-layout-no-randomness',
      comment: 'lib/storage/layout uses nothing of Node: no randomness, no crypto (ids and budgets are handed in)',
      severity: 'error',
      from: { path: '^lib/storage/layout/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'functions-bundle-no-tooling',
      comment: 'a Lambda entry imports lib/ layers only: never the local runtime, the docs, bench, scripts or tests',
      severity: 'error',
      from: { path: '^functions/' },
      to: { path: TOP },
    },
    {
      name: 'openapi-not-local',
      comment: 'the docs are built without the local runtime (which serves them)',
      severity: 'error',
      from: { path: '^lib/openapi/' },
      to: { path: '^lib/local/' },
    },
    {
      name: 'no-circular',
      comment: 'no import cycle, between folders or files',
      severity: 'error',
      from: { path: '^(lib|functions)/' },
      to: { circular: true },
    },
    {
      name: 'client-stands-alone',
      comment:
        'the client package ships alone: it imports only its own files (generated copies included), its own ' +
        'package.json (the bin prints its version) and Node',
      severity: 'error',
      from: { path: '^client/src/' },
      to: { pathNot: ['^client/src/', '^client/package[.]json$'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'every import resolves (a moved file left an old path behind)',
      severity: 'error',
      from: {},
      // aws-lambda is types only (@types/aws-lambda).
      to: { couldNotResolve: true, pathNot: '^aws-lambda$' },
    },
  ],
  options: {
    // TypeScript 7 has no compiler API for dependency-cruiser to parse with; swc reads the .ts files.
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.mjs', '.js', '.cjs', '.json'],
      conditionNames: ['import', 'require', 'node', 'default'],
      exportsFields: ['exports'],
    },
    reporterOptions: {
      // `npx depcruise lib functions --output-type archi`: the folder graph.
      archi: { collapsePattern: '^(lib/[^/]+|functions|infra)/' },
    },
  },
};
