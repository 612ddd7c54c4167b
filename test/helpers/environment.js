import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import { TestEnvironment } from 'jest-environment-node';

/**
 * The Node environment, plus a count of failed tests and hooks in the test file's global scope
 * (`__failedTests`), so that suites can print the control plane's logs when something failed.
 *
 * With AIEM_TEST_TIMINGS set to a file, every hook and test appends a line there: the time,
 * seconds since the file started, seconds taken, the file, its describe blocks, and the hook's
 * type or the test's name (a cluster's start adds its progress, test/cluster/cluster.ts). Jest
 * reports tests' durations only; a file's time is mostly in hooks (clusters starting, engines
 * running), and this is where they show.
 */
export default class ProductTestEnvironment extends TestEnvironment {
  /** @param {import('@jest/environment').JestEnvironmentConfig} config @param {import('@jest/environment').EnvironmentContext} context */
  constructor(config, context) {
    super(config, context);
    this.timings = process.env['AIEM_TEST_TIMINGS'];
    this.testPath = relative(config.projectConfig.rootDir, context.testPath);
    this.fileStarted = Date.now();
    /** @type {Map<unknown, number>} when each hook and test (and the file, by this) started */
    this.started = new Map([[this, this.fileStarted]]);
  }

  /** @param {import('jest-circus').Event} event */
  handleTestEvent(event) {
    const failed =
      (event.name === 'test_done' && event.test.errors.length > 0) || event.name === 'hook_failure';
    if (failed) this.global.__failedTests = (this.global.__failedTests ?? 0) + 1;
    if (this.timings !== undefined && this.timings !== '') this.recordTiming(event);
  }

  /** @param {import('jest-circus').Event} event */
  recordTiming(event) {
    if (event.name === 'hook_start') this.started.set(event.hook, Date.now());
    if (event.name === 'test_start') this.started.set(event.test, Date.now());
    const done =
      event.name === 'run_finish' ? { key: this, block: undefined, what: 'file' } : finished(event);
    const start = done === undefined ? undefined : this.started.get(done.key);
    if (done === undefined || start === undefined) return;
    const now = Date.now();
    const line = [
      new Date(now).toISOString(),
      ((now - this.fileStarted) / 1000).toFixed(1),
      ((now - start) / 1000).toFixed(1),
      this.testPath,
      blockNames(done.block).join(' > '),
      done.what,
    ].join('\t');
    appendFileSync(this.timings, `${line}\n`);
  }
}

/**
 * The hook or test an event ends, with its describe block and what it is; undefined for others.
 * @param {import('jest-circus').Event} event
 */
function finished(event) {
  if (event.name === 'hook_success' || event.name === 'hook_failure')
    return { key: event.hook, block: event.hook.parent, what: event.hook.type };
  if (event.name === 'test_done')
    return { key: event.test, block: event.test.parent, what: `test: ${event.test.name}` };
  return undefined;
}

/**
 * The names of a describe block and its parents, outermost first.
 * @param {import('jest-circus').DescribeBlock | undefined} block
 */
function blockNames(block) {
  const names = [];
  for (let b = block; b !== undefined && b.name !== 'ROOT_DESCRIBE_BLOCK'; b = b.parent)
    names.unshift(b.name);
  return names;
}
