/**
 * Ends the run with the slowest test files (where the suite's time goes) and one plain line,
 * "jest: N passed, N failed[, N skipped]", that tools reading a log can count without knowing
 * Jest's own summary format. Both are written when the process exits so that they come last,
 * after Jest's own summary.
 */
import { relative } from 'node:path';

/** How many of the slowest files are listed. */
const SLOWEST = 10;

export default class SummaryReporter {
  /** @param {import('@jest/reporters').Config.GlobalConfig} globalConfig */
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  /** @param {unknown} _contexts @param {import('@jest/test-result').AggregatedResult} results */
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const tail = skipped > 0 ? `, ${skipped} skipped` : '';
    const slowest = results.testResults
      .map((r) => ({ file: relative(this.rootDir, r.testFilePath), ms: r.perfStats.end - r.perfStats.start }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SLOWEST);
    const lines =
      results.testResults.length > 1
        ? [
            'Slowest test files:',
            ...slowest.map((s) => `  ${(s.ms / 1000).toFixed(1).padStart(7)} s  ${s.file}`),
            '',
          ]
        : [];
    process.once('exit', () => {
      process.stdout.write(
        [...lines, `jest: ${results.numPassedTests} passed, ${failed} failed${tail}`, ''].join('\n'),
      );
    });
  }
}
