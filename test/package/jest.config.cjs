// The package project (`npm run test:package`): runs `npm run package` once and checks .serverless/ (template, zips,
// bundles). It takes the unit project's transform so the two never drift; packaging needs the longer timeout.
const path = require('node:path');
const root = require('../../jest.config.cjs');

const unit = root.projects.find((p) => p.displayName === 'unit');
if (!unit) throw new Error('jest.config.cjs has no "unit" project to take the settings from');

module.exports = {
  ...unit,
  rootDir: path.join(__dirname, '..', '..'),
  displayName: 'package',
  testMatch: ['<rootDir>/test/package/**/*.test.ts'],
  testTimeout: 30000,
};
