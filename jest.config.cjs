// Unit tests run pure code with no engine; integration tests run over real HTTP against a real DynamoDB engine
// (the embedded one by default; `npm run test:dynamodb-local` points them at DynamoDB Local).
const transform = { '^.+\\.[cm]?[tj]sx?$': '<rootDir>/test/support/esbuild-transform.cjs' };
const common = {
  transform,
  // @middy/core and jose are ESM-only: let esbuild turn them into CommonJS like our own code.
  transformIgnorePatterns: ['node_modules/(?!(@middy|jose)/)'],
  // ...and resolve middy's packages to their ESM entries (their package.json only exports an `import` condition).
  moduleNameMapper: { '^@middy/(core|util)$': '<rootDir>/node_modules/@middy/$1/index.js' },
  testEnvironment: 'node',
};

module.exports = {
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/client/test/unit/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      // The property and hardening suites run here at a bounded size; their own configs run them larger (.ci/run).
      testMatch: [
        '<rootDir>/test/integration/**/*.test.ts',
        '<rootDir>/client/test/integration/**/*.test.ts',
        '<rootDir>/test/property/**/*.test.ts',
        '<rootDir>/test/hardening/**/*.test.ts',
      ],
      // The soak runs minutes: only `npm run test:soak`.
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/hardening/soak'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFiles: ['<rootDir>/test/support/env.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/after-env.ts'],
    },
  ],
  testTimeout: 30000,
};
