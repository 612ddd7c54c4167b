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

/** The cluster that describe blocks declared inside {@link shareCluster} use, and its options. */
let shared: { options: string; cluster: () => Cluster } | undefined;

/**
 * Starts a local control plane before the tests of the calling file (or describe block) and stops
 * it after them. When a test failed, every component's log tail is printed and the run folder is
 * kept. Inside {@link shareCluster}, the shared cluster instead, when the options are the same.
 *
 * @returns a function that returns the running cluster (valid inside tests and hooks)
 */
export function useCluster(options: ClusterOptions = {}): () => Cluster {
  if (shared !== undefined) {
    if (shared.options !== canonical(options))
      throw new Error(
        `A describe block inside shareCluster(${shared.options}) asks for another cluster: ${canonical(options)}`,
      );
    return shared.cluster;
  }
  return startedAround(options);
}

/**
 * One cluster for the describe blocks that `declare` declares (call it inside a describe block):
 * their `useCluster` calls (and `useApiServer`'s) with these options return it instead of starting
 * their own. It starts before the first of them and stops after the last; with none of their tests
 * to run (`-t`), it does not start. A cluster start costs seconds of CPU, a real node's more; the
 * blocks clean up what they made (their namespaces, engines, pods) so that the next finds the
 * cluster as it was.
 */
export function shareCluster(options: ClusterOptions, declare: () => void): void {
  const cluster = startedAround(options);
  shared = { options: canonical(options), cluster };
  try {
    declare();
  } finally {
    shared = undefined;
  }
}

/** Cluster options as JSON with sorted keys: equal options, equal text. */
function canonical(options: ClusterOptions): string {
  return JSON.stringify(options, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)))
      : value,
  );
}

/** Starts a cluster before the tests of the describe block (or file) being declared, and stops it after them. */
function startedAround(options: ClusterOptions): () => Cluster {
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
