/**
 * Jest runs the TypeScript sources as ES modules through ts-jest. Sources import each other
 * with their real `.ts` names (Node 24 runs them as they are), so ts-jest must keep those names
 * instead of rewriting them to `.js`.
 * @type {import('jest').Config}
 */
// Tests provoke server faults on purpose; their log lines would bury the test report.
process.env['AIEM_LOG_LEVEL'] ??= 'silent';

export default {
  testEnvironment: '<rootDir>/test/helpers/environment.js',
  setupFiles: ['<rootDir>/test/helpers/property-seed.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: { rewriteRelativeImportExtensions: false } }],
  },
  testMatch: ['<rootDir>/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/docs-site/'],
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
  // The longest files first, also on a machine without Jest's cache of the last run's durations.
  testSequencer: '<rootDir>/test/helpers/longest-first.js',
};
