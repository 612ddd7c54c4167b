import { jest } from '@jest/globals';
import { startCluster, type Cluster, type ClusterOptions } from '../cluster/cluster.ts';

declare global {
  // Set by test/helpers/environment.js when a test or hook of the current file fails.
  var __failedTests: number | undefined;
}

/** Cold binary builds happen outside the tests, but a slow machine still needs a generous start. */
const START_TIMEOUT_MS = 5 * 60 * 1000;
const TEST_TIMEOUT_MS = 60 * 1000;
const REAL_NODE_START_TIMEOUT_MS = 20 * 60 * 1000;

/**
 * Starts a local control plane before the tests of the calling file and stops it after them.
 * When a test failed, every component's log tail is printed and the run folder is kept.
 *
 * @returns a function that returns the running cluster (valid inside tests and hooks)
 */
export function useCluster(options: ClusterOptions = {}): () => Cluster {
  let cluster: Cluster | undefined;
  // Failures counted before this cluster started belong to another one (a file of several cases).
  let failedBefore = 0;
  // Tests on a cluster await controllers (scheduler, garbage collector, kwok), which take
  // seconds on a loaded two-core machine.
  jest.setTimeout(TEST_TIMEOUT_MS);
  beforeAll(
    async () => {
      failedBefore = globalThis.__failedTests ?? 0;
      cluster = await startCluster(options);
    },
    // A real node waits its turn: one per machine, and other test files may hold it.
    options.realNode === true ? REAL_NODE_START_TIMEOUT_MS : START_TIMEOUT_MS,
  );
  afterAll(async () => {
    if (cluster === undefined) return;
    const failed = (globalThis.__failedTests ?? 0) > failedBefore;
    if (failed) {
      console.error(`Control plane logs (kept in ${cluster.runDir}):\n${cluster.logs(80)}`);
    }
    await cluster.stop({ keepRunDir: failed });
  }, 60_000);
  return () => {
    if (cluster === undefined) throw new Error('The cluster is not running (did beforeAll fail?)');
    return cluster;
  };
}
