/**
 * Ends the run with one plain line, "jest: N passed, N failed[, N skipped]", that tools
 * reading a log can count without knowing Jest's own summary format. It is written when the
 * process exits so that it is the last line, after Jest's own summary.
 */
export default class SummaryReporter {
  /** @param {unknown} _contexts @param {import('@jest/test-result').AggregatedResult} results */
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const tail = skipped > 0 ? `, ${skipped} skipped` : '';
    process.once('exit', () => {
      process.stdout.write(`jest: ${results.numPassedTests} passed, ${failed} failed${tail}\n`);
    });
  }
}
