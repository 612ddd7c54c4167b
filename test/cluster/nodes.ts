import type { V1Node } from '@kubernetes/client-node';

/** The annotation that tells kwok which nodes it simulates. */
/** The node annotation metrics-server (0.7 and later) reads the resource-metrics path from. */
export const RESOURCE_METRICS_PATH_ANNOTATION = 'metrics.k8s.io/resource-metrics-path';
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

/** The taint on GPU nodes: only pods that tolerate it (GPU engines) are scheduled there. */
export const GPU_TAINT = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' } as const;

/** Shape of the simulated cluster. */
export interface NodePoolOptions {
  cpuNodes: number;
  gpuNodes: number;
  gpusPerNode: number;
  /** Capacity of each CPU node; 16 CPUs, 64 GiB and 110 pods (the kubelet's default) unless set. */
  cpuNodeCapacity?: { cpu: string; memory: string; pods: string };
}

export const DEFAULT_NODE_POOLS: NodePoolOptions = { cpuNodes: 3, gpuNodes: 2, gpusPerNode: 4 };

/**
 * The simulated nodes: CPU nodes, and GPU nodes that advertise `nvidia.com/gpu` and carry the
 * GPU taint. Node status set at creation is kept by the apiserver and by kwok, which is how the
 * GPU capacity gets there without a device plugin.
 */
export function simulatedNodes(options: NodePoolOptions = DEFAULT_NODE_POOLS): V1Node[] {
  const cpu = Array.from({ length: options.cpuNodes }, (_, i) =>
    node(`cpu-node-${i}`, options.cpuNodeCapacity ?? { cpu: '16', memory: '64Gi', pods: '110' }, {
      'node.kubernetes.io/instance-type': 'cpu-16',
    }),
  );
  const gpu = Array.from({ length: options.gpuNodes }, (_, i) => {
    const n = node(
      `gpu-node-${i}`,
      { cpu: '32', memory: '256Gi', pods: '110', 'nvidia.com/gpu': String(options.gpusPerNode) },
      {
        'node.kubernetes.io/instance-type': 'gpu-32',
        'nvidia.com/gpu.present': 'true',
        'nvidia.com/gpu.product': 'Simulated-GPU',
        'nvidia.com/gpu.count': String(options.gpusPerNode),
      },
    );
    n.spec = { taints: [{ ...GPU_TAINT }] };
    return n;
  });
  return [...cpu, ...gpu];
}

function node(name: string, capacity: Record<string, string>, labels: Record<string, string>): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: {
        [KWOK_NODE_ANNOTATION]: 'fake',
        // Where metrics-server scrapes the node's resource metrics: kwok serves them there (its
        // Metric "metrics-resource"), not at a kubelet's /metrics/resource.
        [RESOURCE_METRICS_PATH_ANNOTATION]: `/metrics/nodes/${name}/metrics/resource`,
      },
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
        ...labels,
      },
    },
    status: { capacity, allocatable: { ...capacity } },
  };
}
