// The multi-process project (`npm run test:multiprocess`): three API processes over one engine, driven by random
// operations through random processes and compared with the reference model. It reuses the root config's
// integration settings (transform, worker env) so the two never drift; its own global setup starts the three
// processes instead of the one the integration suite shares.
const path = require('node:path');
const root = require('../../jest.config.cjs');

const integration = root.projects.find((p) => p.displayName === 'integration');
if (!integration) throw new Error('jest.config.cjs has no "integration" project to take the settings from');

module.exports = {
  ...integration,
  rootDir: path.join(__dirname, '..', '..'),
  displayName: 'multiprocess',
  testMatch: ['<rootDir>/test/multiprocess/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  globalSetup: '<rootDir>/test/multiprocess/global-setup.ts',
  globalTeardown: '<rootDir>/test/multiprocess/global-teardown.ts',
  testTimeout: 600000,
};
