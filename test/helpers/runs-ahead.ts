/**
 * Slow, independent runs (a client script, a documentation example) that the tests of a file
 * check one by one. Each mostly waits (on a Python process, on engines that start and stop), so
 * they start a few at a time as soon as the file's set-up is done, and each test awaits its own
 * run's outcome and checks it: the file takes about as long as its longest runs, not their sum.
 * The runs must not share state (each has its own workspace or namespace).
 */
import pLimit from 'p-limit';

/** How many runs go at once: enough to overlap their waits, few enough for a two-core machine. */
const DEFAULT_CONCURRENCY = 3;

/**
 * Registers a `beforeAll` (after the file's own set-up hooks, so call this after them) that
 * starts `run(key)` for every key.
 *
 * @returns the outcome of one key's run, for its test to await
 */
export function runAhead<K, T>(
  keys: readonly K[],
  run: (key: K) => Promise<T>,
  concurrency = DEFAULT_CONCURRENCY,
): (key: K) => Promise<T> {
  const outcomes = new Map<K, Promise<T>>();
  beforeAll(() => {
    const limit = pLimit(concurrency);
    for (const key of keys) {
      const outcome = limit(() => run(key));
      // The test of this key reports the failure; until it awaits, the rejection is expected.
      outcome.catch(() => undefined);
      outcomes.set(key, outcome);
    }
  });
  // A test that timed out leaves its run going: the file's tear-down must not pull the product
  // from under it.
  afterAll(async () => {
    await Promise.allSettled(outcomes.values());
  }, 600_000);
  return (key) => {
    const outcome = outcomes.get(key);
    if (outcome === undefined) throw new Error(`No run was started for ${String(key)}`);
    return outcome;
  };
}
