/**
 * The reconciler with GPU queueing on, on a cluster kept in memory: the test plays Kueue (the
 * Workload of the engine's StatefulSet, the queue's order) besides the StatefulSet controller and
 * the users.
 */
import { ID_LABEL, STOP_REASON_ANNOTATION, WORKSPACE_LABEL } from '../../../shared/resources.ts';
import { RECORDED_ANNOTATION } from '../../../shared/recorded.ts';
import { dataClaimName, workloadName } from '../desired/workload.ts';
import type { EngineResource, EngineSpec } from '../kinds/kind.ts';
import { notebookEngineKind } from '../kinds/notebook-engine.ts';
import { MemoryCluster, POD_PENDING, POD_READY } from '../kube/memory-cluster.ts';
import { parseQueueingConfig } from '../queueing/config.ts';
import type { EngineQueue } from '../queueing/kueue-objects.ts';
import type { Queueing } from '../queueing/queueing.ts';
import type { WorkloadView } from '../queueing/workloads.ts';
import { EngineReconciler } from './reconciler.ts';

const GIB = 1024 ** 3;
const NAME = 'w1.n1';
const kind = notebookEngineKind;
const SPEC: EngineSpec<'NotebookEngine'> = {
  cpu: 1,
  gpu: 1,
  memoryBytes: String(GIB),
  storageBytes: String(GIB),
};
const CONFIG = parseQueueingConfig('gpuClasses: [{ name: gpus }]\nworkspaceQuota: { gpus: 1 }\n');

/** Kueue as the test plays it: the Workload of each StatefulSet (by uid), and queue positions. */
class FakeKueue implements Queueing {
  readonly config = CONFIG;
  readonly ensured: EngineQueue[] = [];
  readonly workloads = new Map<string, WorkloadView>();
  position: number | undefined;

  ensure(queue: EngineQueue): Promise<void> {
    this.ensured.push(queue);
    return Promise.resolve();
  }

  workloadOf(setUid: string): WorkloadView | undefined {
    return this.workloads.get(setUid);
  }

  positionOf(): number | undefined {
    return this.position;
  }

  forget(): void {}

  /** Kueue's account of the StatefulSet with that uid. */
  say(setUid: string, ...conditions: WorkloadView['conditions']): void {
    this.workloads.set(setUid, {
      name: `statefulset-${setUid}`,
      setUid,
      setName: undefined,
      deleting: false,
      conditions,
    });
  }
}

function scene(): {
  cluster: MemoryCluster;
  kueue: FakeKueue;
  reconciler: EngineReconciler<'NotebookEngine'>;
} {
  let time = new Date('2026-11-28T09:00:00Z');
  const cluster = new MemoryCluster(() => time);
  const kueue = new FakeKueue();
  const reconciler = new EngineReconciler<'NotebookEngine'>({
    kube: cluster.kube,
    view: cluster.view,
    kind,
    settings: { publicUrl: 'https://cloud.example.com' },
    now: () => (time = new Date(time.getTime() + 1000)),
    queueing: kueue,
  });
  const recorded = {
    state: 'STATE_STARTING',
    reconciling: true,
    profileInfo: { name: 'workspaces/global/notebookEngineProfiles/p', queuePriority: 7 },
    notebookImageInfo: { image: 'nb:1' },
  };
  const engine: EngineResource<'NotebookEngine'> = {
    metadata: {
      name: NAME,
      labels: { [WORKSPACE_LABEL]: 'w1', [ID_LABEL]: 'n1' },
      annotations: { [RECORDED_ANNOTATION]: JSON.stringify(recorded) },
    },
    spec: SPEC,
  };
  cluster.createEngine(kind, engine);
  return { cluster, kueue, reconciler };
}

async function settle(reconciler: EngineReconciler<'NotebookEngine'>, cluster: MemoryCluster): Promise<void> {
  for (let pass = 0; pass < 10; pass += 1) {
    const before = cluster.writes.length;
    await reconciler.reconcile(NAME);
    if (cluster.writes.length === before) return;
  }
  throw new Error('still writing after 10 passes');
}

const stored = (cluster: MemoryCluster): EngineResource<'NotebookEngine'> => {
  const engine = cluster.stored(kind, NAME);
  if (engine === undefined) throw new Error('gone');
  return engine;
};

const PENDING = {
  type: 'QuotaReserved',
  status: 'False',
  reason: 'Pending',
  message: 'insufficient unused quota for nvidia.com/gpu in flavor gpus, 1 more needed',
};
const RESERVED = {
  type: 'QuotaReserved',
  status: 'True',
  reason: 'QuotaReserved',
  message: 'Quota reserved in ClusterQueue workspace-w1',
};

describe('EngineReconciler with queueing', () => {
  test('puts a GPU engine in its workspace queue at its profile priority, its StatefulSet keeping the volume when deleted', async () => {
    const { cluster, kueue, reconciler } = scene();
    await settle(reconciler, cluster);
    const set = cluster.statefulSets.get(workloadName(kind, stored(cluster)));
    expect(set?.metadata?.labels).toMatchObject({
      'kueue.x-k8s.io/queue-name': 'workspace-w1',
      'kueue.x-k8s.io/priority-class': 'engine-queue-priority-7',
    });
    expect(set?.spec?.persistentVolumeClaimRetentionPolicy).toEqual({
      whenDeleted: 'Retain',
      whenScaled: 'Retain',
    });
    expect(kueue.ensured).toContainEqual({ workspace: 'w1', priority: 7, gpuResources: ['nvidia.com/gpu'] });
  });

  test("reports a waiting engine QUEUED with Kueue's reason and position, then ADMITTED; STARTING all along until it runs", async () => {
    const { cluster, kueue, reconciler } = scene();
    await settle(reconciler, cluster);
    const setName = workloadName(kind, stored(cluster));
    const uid = cluster.statefulSets.get(setName)?.metadata?.uid ?? '';
    cluster.startPods(setName, POD_PENDING);
    kueue.say(uid, PENDING);
    kueue.position = 2;
    await settle(reconciler, cluster);
    let engine = stored(cluster);
    expect(engine.status?.state).toBe('STATE_STARTING');
    expect(engine.status?.queueStatus).toMatchObject({
      state: 'STATE_QUEUED',
      queue: 'workspaces/w1',
      position: 2,
      message: PENDING.message,
    });
    expect(engine.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      reason: 'Queued',
      message: PENDING.message,
    });
    const queuedSince = engine.status?.queueStatus?.since;

    kueue.position = 0;
    await settle(reconciler, cluster);
    expect(stored(cluster).status?.queueStatus).toMatchObject({ position: 0, since: queuedSince });

    kueue.say(uid, RESERVED);
    kueue.position = undefined;
    cluster.setPodStatus(`${setName}-0`, POD_READY);
    await settle(reconciler, cluster);
    engine = stored(cluster);
    expect(engine.status?.state).toBe('STATE_RUNNING');
    expect(engine.status?.queueStatus).toMatchObject({ state: 'STATE_ADMITTED', queue: 'workspaces/w1' });
    // The position no longer applies and is gone.
    expect(engine.status?.queueStatus).not.toHaveProperty('position');
  });

  test('pauses a queued engine by deleting its StatefulSet and keeps its claim', async () => {
    const { cluster, reconciler } = scene();
    await settle(reconciler, cluster);
    const setName = workloadName(kind, stored(cluster));
    cluster.startPods(setName, POD_READY);
    await settle(reconciler, cluster);
    cluster.editEngine(kind, NAME, { spec: { paused: true } });
    await settle(reconciler, cluster);
    expect(cluster.statefulSets.get(setName)).toBeUndefined();
    expect(cluster.claims.get(dataClaimName(kind, stored(cluster), 0))).toBeDefined();
  });

  test("stops an engine Kueue preempted, as a user would pause it, with the queue's words", async () => {
    const { cluster, kueue, reconciler } = scene();
    await settle(reconciler, cluster);
    const setName = workloadName(kind, stored(cluster));
    const uid = cluster.statefulSets.get(setName)?.metadata?.uid ?? '';
    cluster.startPods(setName, POD_READY);
    kueue.say(uid, RESERVED);
    await settle(reconciler, cluster);
    kueue.say(uid, {
      type: 'Evicted',
      status: 'True',
      reason: 'Preempted',
      message: 'Preempted to accommodate a higher priority Workload',
    });
    await settle(reconciler, cluster);
    const engine = stored(cluster);
    expect(engine.spec.paused).toBe(true);
    expect(engine.metadata.annotations?.[STOP_REASON_ANNOTATION]).toBe('Preempted');
    expect(engine.status?.queueStatus).toMatchObject({
      state: 'STATE_PREEMPTED',
      message: 'Preempted to accommodate a higher priority Workload',
    });
    expect(cluster.statefulSets.get(setName)).toBeUndefined();
    expect(cluster.claims.get(dataClaimName(kind, engine, 0))).toBeDefined();
  });

  test('an engine started before queueing was on joins its queue at its next start, its claim kept', async () => {
    const { cluster, kueue, reconciler } = scene();
    const before = new EngineReconciler<'NotebookEngine'>({
      kube: cluster.kube,
      view: cluster.view,
      kind,
      settings: { publicUrl: 'https://cloud.example.com' },
    });
    await settle(before, cluster);
    const setName = workloadName(kind, stored(cluster));
    expect(cluster.statefulSets.get(setName)?.metadata?.labels).not.toHaveProperty([
      'kueue.x-k8s.io/queue-name',
    ]);
    cluster.startPods(setName, POD_READY);
    const claim = dataClaimName(kind, stored(cluster), 0);

    // Queueing is turned on while it runs: it runs on, outside the queue.
    await settle(reconciler, cluster);
    expect(cluster.statefulSets.get(setName)?.spec?.replicas).toBe(1);
    // Paused: the set is scaled down first, and goes once its pod has, orphaning its claim.
    cluster.editEngine(kind, NAME, { spec: { paused: true } });
    await settle(reconciler, cluster);
    expect(cluster.statefulSets.get(setName)?.spec?.replicas).toBe(0);
    cluster.collectGarbage();
    await settle(reconciler, cluster);
    expect(cluster.statefulSets.get(setName)).toBeUndefined();
    expect(cluster.writes).toContain(`delete StatefulSet/${setName} orphaning its dependents`);
    expect(cluster.claims.get(claim)).toBeDefined();

    // Resumed: made anew, in its queue, with the same claim.
    cluster.editEngine(kind, NAME, { spec: { paused: false } });
    await settle(reconciler, cluster);
    expect(cluster.statefulSets.get(setName)?.metadata?.labels).toMatchObject({
      'kueue.x-k8s.io/queue-name': 'workspace-w1',
    });
    expect(kueue.ensured).toContainEqual({ workspace: 'w1', priority: 7, gpuResources: ['nvidia.com/gpu'] });
    cluster.startPods(setName, POD_PENDING);
    expect(cluster.claims.all().map((c) => c.metadata?.name)).toEqual([claim]);
  });

  test('an engine without GPUs does not queue', async () => {
    const { cluster, kueue, reconciler } = scene();
    cluster.editEngine(kind, NAME, { spec: { gpu: 0 } });
    await settle(reconciler, cluster);
    const set = cluster.statefulSets.get(workloadName(kind, stored(cluster)));
    expect(set?.metadata?.labels).not.toHaveProperty(['kueue.x-k8s.io/queue-name']);
    expect(kueue.ensured).toEqual([]);
    expect(stored(cluster).status?.queueStatus).toBeUndefined();
  });
});
