import { CustomObjectsApi } from '@kubernetes/client-node';
import { useCluster } from '../helpers/use-cluster.ts';
import { startSandboxPod } from '../helpers/sandbox-pod.ts';
import { SIMULATED_SANDBOX_USAGE } from './sandbox-simulator.ts';
import { waitFor } from './wait.ts';
import { parseCpuCores, parseMemoryBytes } from '../../gateway/src/sandbox/metrics.ts';

const cluster = useCluster({ metrics: true });

describe('a cluster started with metrics', () => {
  test("serves a sandbox pod's simulated usage through metrics.k8s.io, as metrics-server reports it", async () => {
    const { target } = await startSandboxPod(cluster(), 'default', 'metered');
    const custom = cluster().kubeConfig.makeApiClient(CustomObjectsApi);
    const podMetrics = (await waitFor(
      () =>
        custom
          .getNamespacedCustomObject({
            group: 'metrics.k8s.io',
            version: 'v1beta1',
            namespace: 'default',
            plural: 'pods',
            name: target.pod,
          })
          .catch(() => undefined),
      { what: 'PodMetrics of the sandbox pod', timeoutMs: 90_000, intervalMs: 1_000 },
    )) as { containers: { name: string; usage: Record<string, string> }[] };
    const usage = podMetrics.containers.find((c) => c.name === target.container)?.usage ?? {};
    expect(parseMemoryBytes(usage['memory'] ?? '')).toBe(BigInt(SIMULATED_SANDBOX_USAGE.memoryBytes));
    // A rate between two scrapes of kwok's counter: about a quarter of a core.
    expect(parseCpuCores(usage['cpu'] ?? '')).toBeGreaterThan(0.2);
    expect(parseCpuCores(usage['cpu'] ?? '')).toBeLessThan(0.3);
  }, 120_000);
});
