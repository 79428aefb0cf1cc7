// The hardening project (`npm run test:soak`, `npm run test:hardening`): fuzzing, injected DynamoDB faults, security
// and the soak, over real HTTP. It reuses the root config's integration settings (transform, global setup that
// starts the shared API, env) so the two never drift; only the files it runs and the timeouts differ.
const path = require('node:path');
const root = require('../../jest.config.cjs');

const integration = root.projects.find((p) => p.displayName === 'integration');
if (!integration) throw new Error('jest.config.cjs has no "integration" project to take the settings from');

module.exports = {
  ...integration,
  rootDir: path.join(__dirname, '..', '..'),
  displayName: 'hardening',
  testMatch: ['<rootDir>/test/hardening/**/*.test.ts'],
  // The root's integration project may ignore the soak (it is not part of `npm test`); here it runs on request.
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 120000,
};
