import { GPU_TAINT, simulatedNodes } from './nodes.ts';

describe('simulatedNodes()', () => {
  test('makes CPU nodes without taints and GPU nodes with GPU capacity and the GPU taint', () => {
    const nodes = simulatedNodes({ cpuNodes: 2, gpuNodes: 1, gpusPerNode: 8 });
    expect(nodes.map((n) => n.metadata?.name)).toEqual(['cpu-node-0', 'cpu-node-1', 'gpu-node-0']);
    const gpu = nodes[2]!;
    expect(gpu.status?.capacity?.['nvidia.com/gpu']).toBe('8');
    expect(gpu.status?.allocatable?.['nvidia.com/gpu']).toBe('8');
    expect(gpu.spec?.taints).toEqual([GPU_TAINT]);
    expect(nodes[0]!.spec?.taints).toBeUndefined();
    expect(nodes[0]!.status?.allocatable?.['nvidia.com/gpu']).toBeUndefined();
  });

  test('marks every node for kwok to manage', () => {
    for (const node of simulatedNodes()) {
      expect(node.metadata?.annotations?.['kwok.x-k8s.io/node']).toBe('fake');
    }
  });
});
