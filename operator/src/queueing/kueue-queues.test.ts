import { parseQueueingConfig } from './config.ts';
import type { KueueKind, KueueObject } from './kueue-objects.ts';
import { holds, KueueQueues, type KueueWrites } from './kueue-queues.ts';

const CONFIG = parseQueueingConfig(`
gpuClasses: [{ name: simulated-gpu, nodeLabels: { nvidia.com/gpu.product: Simulated-GPU } }]
workspaceQuota: { simulated-gpu: 4 }
cohort: engines
`);

/** Kueue's objects kept in memory, answering as the apiserver does (409 on a second create). */
class Objects implements KueueWrites {
  readonly stored = new Map<string, Record<string, unknown>>();
  readonly calls: string[] = [];

  createKueueObject(object: KueueObject): Promise<void> {
    const key = `${object.kind}/${object.metadata.name}`;
    this.calls.push(`create ${key}`);
    if (this.stored.has(key)) return Promise.reject(Object.assign(new Error('exists'), { code: 409 }));
    this.stored.set(key, structuredClone(object) as unknown as Record<string, unknown>);
    return Promise.resolve();
  }

  readKueueObject(kind: KueueKind, name: string): Promise<Record<string, unknown> | undefined> {
    this.calls.push(`get ${kind}/${name}`);
    return Promise.resolve(this.stored.get(`${kind}/${name}`));
  }

  patchKueueObject(kind: KueueKind, name: string, body: object): Promise<void> {
    this.calls.push(`patch ${kind}/${name}`);
    const key = `${kind}/${name}`;
    const merged = mergePatch(this.stored.get(key) ?? {}, body as Record<string, unknown>);
    this.stored.set(key, merged);
    return Promise.resolve();
  }
}

function mergePatch(
  target: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const out = new Map(Object.entries(target));
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) out.delete(key);
    else if (typeof value === 'object' && !Array.isArray(value))
      out.set(
        key,
        mergePatch((out.get(key) ?? {}) as Record<string, unknown>, value as Record<string, unknown>),
      );
    else out.set(key, value);
  }
  return Object.fromEntries(out);
}

const QUEUE = { workspace: 'w1', priority: 10, gpuResources: ['nvidia.com/gpu'] };

describe('KueueQueues.ensure()', () => {
  test('creates the flavors, the priority class, the ClusterQueue and the LocalQueue once; then costs nothing', async () => {
    const objects = new Objects();
    const queues = new KueueQueues({ config: CONFIG, namespace: 'engines', kube: objects });
    await Promise.all([queues.ensure(QUEUE), queues.ensure(QUEUE)]);
    expect([...objects.stored.keys()].sort()).toEqual([
      'ClusterQueue/workspace-w1',
      'LocalQueue/workspace-w1',
      'ResourceFlavor/cpu-only',
      'ResourceFlavor/simulated-gpu',
      'WorkloadPriorityClass/engine-queue-priority-10',
    ]);
    const calls = objects.calls.length;
    await queues.ensure(QUEUE);
    await queues.ensure({ ...QUEUE, workspace: 'w2' });
    // The second workspace: its own ClusterQueue and LocalQueue (and a look whether it had one).
    expect(objects.calls.slice(calls)).toEqual([
      'get ClusterQueue/workspace-w2',
      'create ClusterQueue/workspace-w2',
      'create LocalQueue/workspace-w2',
    ]);
  });

  test("leaves objects that hold what is wanted (Kueue's defaults besides), and mends those that differ", async () => {
    const objects = new Objects();
    await new KueueQueues({ config: CONFIG, namespace: 'engines', kube: objects }).ensure(QUEUE);
    const queue = objects.stored.get('ClusterQueue/workspace-w1') ?? {};
    queue['spec'] = { ...(queue['spec'] as object), queueingStrategy: 'BestEffortFIFO' };
    objects.calls.length = 0;
    // A restarted operator: it finds everything as wanted.
    await new KueueQueues({ config: CONFIG, namespace: 'engines', kube: objects }).ensure(QUEUE);
    expect(objects.calls.filter((c) => c.startsWith('patch'))).toEqual([]);
    // Restarted with another quota and no cohort: the queue is patched, the cohort taken out.
    const changed = { ...CONFIG, cohort: '', workspaceQuota: { 'simulated-gpu': 2 } };
    await new KueueQueues({ config: changed, namespace: 'engines', kube: objects }).ensure(QUEUE);
    expect(objects.calls.filter((c) => c.startsWith('patch'))).toEqual(['patch ClusterQueue/workspace-w1']);
    const spec = objects.stored.get('ClusterQueue/workspace-w1')?.['spec'] as Record<string, unknown>;
    expect(spec).not.toHaveProperty('cohortName');
    expect(JSON.stringify(spec['resourceGroups'])).toContain('"nominalQuota":"2"');
  });

  test('a ClusterQueue keeps covering the GPU resources it covered and adds those engines ask for', async () => {
    const objects = new Objects();
    await new KueueQueues({ config: CONFIG, namespace: 'engines', kube: objects }).ensure(QUEUE);
    const queues = new KueueQueues({ config: CONFIG, namespace: 'engines', kube: objects });
    await queues.ensure({ ...QUEUE, gpuResources: ['amd.com/gpu'] });
    const spec = objects.stored.get('ClusterQueue/workspace-w1')?.['spec'] as {
      resourceGroups: { coveredResources: string[] }[];
    };
    expect(spec.resourceGroups[0]?.coveredResources).toEqual([
      'cpu',
      'memory',
      'amd.com/gpu',
      'nvidia.com/gpu',
    ]);
  });
});

describe('holds()', () => {
  test('what is wanted may be surrounded by more, never differ', () => {
    expect(holds({ a: 1, b: [{ c: 2, d: 3 }] }, { b: [{ c: 2 }] })).toBe(true);
    expect(holds({ b: [{ c: 2 }, { c: 3 }] }, { b: [{ c: 2 }] })).toBe(false);
    expect(holds({ a: '1' }, { a: 1 })).toBe(false);
    expect(holds(undefined, {})).toBe(false);
  });
});
