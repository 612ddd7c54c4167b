/**
 * The order in which Jest hands out the test files: the longest first, so that the run does not
 * end with one worker finishing a long file while the other has nothing left to do.
 *
 * Jest's own order does this from its cache of the last run's durations, but a fresh machine (a
 * clean clone, CI) has no cache, and Jest then orders by file size: the real-node file, a page of
 * imports that runs for ten minutes, would start last. The durations committed beside this file
 * (file-durations.json: seconds, from a full run) stand in for the cache where it has nothing.
 * Unlike Jest's order, a file that failed last time does not jump the queue: this order exists
 * for the wall time of the whole run.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import TestSequencer from '@jest/test-sequencer';

/** @type {Record<string, number>} seconds by path from the repository root */
const COMMITTED = JSON.parse(
  readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'file-durations.json'), 'utf8'),
);

export default class LongestFirst extends TestSequencer {
  /** @param {import('@jest/test-result').Test[]} tests */
  sort(tests) {
    /** @param {import('@jest/test-result').Test} test */
    const seconds = (test) => {
      const cached = this.time(test);
      if (cached !== undefined) return cached / 1000;
      return COMMITTED[relative(test.context.config.rootDir, test.path)];
    };
    /** @param {import('@jest/test-result').Test} test */
    const size = (test) => test.context.hasteFS.getSize(test.path) ?? 0;
    for (const test of tests) test.duration = this.time(test);
    // Files known by neither come after those known (they are new, and usually short), the bigger first.
    return [...tests].sort((a, b) => {
      const [timeA, timeB] = [seconds(a), seconds(b)];
      if (timeA !== undefined && timeB !== undefined) return timeB - timeA;
      if (timeA !== undefined || timeB !== undefined) return timeA !== undefined ? -1 : 1;
      return size(b) - size(a);
    });
  }
}
