// The browser project (`npm run test:browser`): the integration project's transform and local API, plus Chromium.
// It reuses the root config's integration settings so the two never drift; only what the browser needs differs.
const path = require('node:path');
const root = require('../../jest.config.cjs');

const integration = root.projects.find((p) => p.displayName === 'integration');
if (!integration) throw new Error('jest.config.cjs has no "integration" project to take the settings from');

module.exports = {
  ...integration,
  rootDir: path.join(__dirname, '..', '..'),
  displayName: 'browser',
  testMatch: ['<rootDir>/test/browser/**/*.test.ts'],
  // One browser at a time; launching Chromium and rendering swagger-ui is slow on a cold machine.
  maxWorkers: 1,
  testTimeout: 60000,
};
