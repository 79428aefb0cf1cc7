// The property project (`npm run test:property`): the model-based property tests with more runs than `npm test`
// gives them. It reuses the root config's integration settings (transform, the global setup that starts the API on
// the embedded engine, env) so the two never drift; only the files it runs and the timeout differ.
const path = require('node:path');
const root = require('../../jest.config.cjs');

const integration = root.projects.find((p) => p.displayName === 'integration');
if (!integration) throw new Error('jest.config.cjs has no "integration" project to take the settings from');

module.exports = {
  ...integration,
  rootDir: path.join(__dirname, '..', '..'),
  displayName: 'property',
  testMatch: ['<rootDir>/test/property/**/*.test.ts'],
  testTimeout: 600000,
};
