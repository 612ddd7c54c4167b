import { TestEnvironment } from 'jest-environment-node';

/**
 * The Node environment, plus a count of failed tests and hooks in the test file's global scope
 * (`__failedTests`), so that suites can print the control plane's logs when something failed.
 */
export default class ProductTestEnvironment extends TestEnvironment {
  /** @param {import('jest-circus').Event} event */
  handleTestEvent(event) {
    const failed =
      (event.name === 'test_done' && event.test.errors.length > 0) || event.name === 'hook_failure';
    if (failed) this.global.__failedTests = (this.global.__failedTests ?? 0) + 1;
  }
}
