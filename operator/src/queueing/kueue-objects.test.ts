import { parseQueueingConfig } from './config.ts';
import {
  clusterQueue,
  coveredGpuResources,
  engineQueue,
  gpuResourcesOf,
  localQueue,
  priorityClassName,
  queueLabels,
  queueName,
  resourceFlavors,
  workloadPriorityClass,
} from './kueue-objects.ts';

const CONFIG = parseQueueingConfig(`
gpuClasses:
  - name: simulated-gpu
    nodeLabels: { nvidia.com/gpu.product: Simulated-GPU }
  - name: a100
    nodeLabels: { nvidia.com/gpu.product: A100 }
    tolerations: [{ key: gpu, operator: Exists }]
workspaceQuota: { simulated-gpu: 4 }
workspaces: { team-a: { a100: 2 } }
cohort: engines
`);
const MANAGED = { 'app.kubernetes.io/managed-by': 'ai-engine-manager' };

describe('resourceFlavors()', () => {
  test('lists the flavor of engines without GPUs first, then each class with its node labels', () => {
    expect(resourceFlavors(CONFIG)).toEqual([
      {
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        kind: 'ResourceFlavor',
        metadata: { name: 'cpu-only', labels: MANAGED },
        spec: {},
      },
      {
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        kind: 'ResourceFlavor',
        metadata: { name: 'simulated-gpu', labels: MANAGED },
        spec: { nodeLabels: { 'nvidia.com/gpu.product': 'Simulated-GPU' } },
      },
      {
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        kind: 'ResourceFlavor',
        metadata: { name: 'a100', labels: MANAGED },
        spec: {
          nodeLabels: { 'nvidia.com/gpu.product': 'A100' },
          tolerations: [{ key: 'gpu', operator: 'Exists' }],
        },
      },
    ]);
  });
});

describe('clusterQueue()', () => {
  test("gives the workspace its GPUs per class, none without a class, cpu and memory unbound, in the config's cohort", () => {
    const queue = clusterQueue(CONFIG, { workspace: 'team-b', namespace: 'engines' }, ['nvidia.com/gpu']);
    expect(queue.metadata).toEqual({ name: 'workspace-team-b', labels: MANAGED });
    expect(queue.spec).toEqual({
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'engines' } },
      cohortName: 'engines',
      resourceGroups: [
        {
          coveredResources: ['cpu', 'memory', 'nvidia.com/gpu'],
          flavors: [
            {
              name: 'cpu-only',
              resources: [
                { name: 'cpu', nominalQuota: '100k' },
                { name: 'memory', nominalQuota: '64Ti' },
                { name: 'nvidia.com/gpu', nominalQuota: '0' },
              ],
            },
            {
              name: 'simulated-gpu',
              resources: [
                { name: 'cpu', nominalQuota: '100k' },
                { name: 'memory', nominalQuota: '64Ti' },
                { name: 'nvidia.com/gpu', nominalQuota: '4' },
              ],
            },
            {
              name: 'a100',
              resources: [
                { name: 'cpu', nominalQuota: '100k' },
                { name: 'memory', nominalQuota: '64Ti' },
                { name: 'nvidia.com/gpu', nominalQuota: '0' },
              ],
            },
          ],
        },
      ],
      preemption: { withinClusterQueue: 'LowerPriority', reclaimWithinCohort: 'Any' },
    });
    expect(coveredGpuResources(queue)).toEqual(['nvidia.com/gpu']);
  });

  test('a listed workspace gets its own quota; without a cohort the queue names none', () => {
    const queue = clusterQueue({ ...CONFIG, cohort: '' }, { workspace: 'team-a', namespace: 'engines' }, [
      'amd.com/gpu',
    ]);
    const flavors = (
      queue.spec?.['resourceGroups'] as {
        flavors: { name: string; resources: { name: string; nominalQuota: string }[] }[];
      }[]
    )[0]?.flavors;
    expect(flavors?.map((f) => [f.name, f.resources[2]?.nominalQuota])).toEqual([
      ['cpu-only', '0'],
      ['simulated-gpu', '0'],
      ['a100', '2'],
    ]);
    expect(queue.spec).not.toHaveProperty('cohortName');
  });
});

describe('localQueue()', () => {
  test("sits in the engines' namespace and feeds the workspace's ClusterQueue", () => {
    expect(localQueue({ workspace: 'w1', namespace: 'engines' })).toEqual({
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'LocalQueue',
      metadata: { name: 'workspace-w1', namespace: 'engines', labels: MANAGED },
      spec: { clusterQueue: 'workspace-w1' },
    });
  });
});

describe('names', () => {
  test('priority classes name negative values with "minus"', () => {
    expect(priorityClassName(10)).toBe('engine-queue-priority-10');
    expect(priorityClassName(0)).toBe('engine-queue-priority-0');
    expect(priorityClassName(-5)).toBe('engine-queue-priority-minus-5');
    expect(workloadPriorityClass(-5)).toMatchObject({
      kind: 'WorkloadPriorityClass',
      metadata: { name: 'engine-queue-priority-minus-5' },
      value: -5,
    });
  });

  test('a queue name stays a label value for the longest workspace ids, and distinct', () => {
    const long = 'a'.repeat(62) + 'b';
    const other = 'a'.repeat(62) + 'c';
    expect(queueName(long)).toHaveLength(63);
    expect(queueName(long)).toMatch(/^workspace-a+-[0-9a-f]{10}$/);
    expect(queueName(long)).not.toBe(queueName(other));
  });
});

describe('engineQueue()', () => {
  const gpuEngine = { workspace: 'w1', gpus: 1, priority: 5, gpuResources: ['nvidia.com/gpu'] };

  test('GPU engines of a workspace queue; others only when every engine queues; none when queueing is off', () => {
    expect(engineQueue(CONFIG, gpuEngine)).toEqual({
      workspace: 'w1',
      priority: 5,
      gpuResources: ['nvidia.com/gpu'],
    });
    expect(engineQueue(CONFIG, { ...gpuEngine, gpus: 0, gpuResources: [] })).toBeUndefined();
    expect(engineQueue({ ...CONFIG, engines: 'all' }, { ...gpuEngine, gpus: 0, gpuResources: [] })).toEqual({
      workspace: 'w1',
      priority: 5,
      gpuResources: [],
    });
    expect(engineQueue(undefined, gpuEngine)).toBeUndefined();
    expect(engineQueue(CONFIG, { ...gpuEngine, workspace: undefined })).toBeUndefined();
  });

  test('labels put the StatefulSet in the queue at its priority', () => {
    const queue = engineQueue(CONFIG, gpuEngine);
    expect(queue && queueLabels(queue)).toEqual({
      'kueue.x-k8s.io/queue-name': 'workspace-w1',
      'kueue.x-k8s.io/priority-class': 'engine-queue-priority-5',
    });
  });

  test('GPU resources are what a pod requests besides cpu, memory and storage', () => {
    expect(
      gpuResourcesOf({
        cpu: '1',
        memory: '1Gi',
        'nvidia.com/gpu': '1',
        'ephemeral-storage': '1Gi',
        'hugepages-2Mi': '1',
      }),
    ).toEqual(['nvidia.com/gpu']);
    expect(gpuResourcesOf(undefined)).toEqual([]);
  });
});
