/**
 * The reconciler moving engines through the states users see, on a cluster kept in memory
 * (kube/memory-cluster.ts): each test plays the users (through the writes the API makes), the
 * StatefulSet controller and the kubelet (pods and claims), and the clock, and reconciles until
 * the operator has nothing more to write, as its queue would.
 */
import type { V1PodStatus } from '@kubernetes/client-node';
import { ID_LABEL, LAST_ACTIVITY_ANNOTATION, WORKSPACE_LABEL } from '../../../shared/resources.ts';
import { RECORDED_ANNOTATION } from '../../../shared/recorded.ts';
import type { ActivityProber, EngineAnswers } from '../activity/prober.ts';
import { dataClaimName, workloadName } from '../desired/workload.ts';
import { daiEngineKind } from '../kinds/dai-engine.ts';
import { h2oEngineKind } from '../kinds/h2o-engine.ts';
import type {
  EngineKind,
  EngineKindName,
  EngineResource,
  EngineSpec,
  Settings,
  StoredCondition,
} from '../kinds/kind.ts';
import { notebookEngineKind } from '../kinds/notebook-engine.ts';
import { sandboxEngineKind } from '../kinds/sandbox-engine.ts';
import { MemoryCluster, POD_NOT_READY, POD_PENDING, POD_READY } from '../kube/memory-cluster.ts';
import type { ReconcileResult } from '../runtime/controller.ts';
import { EngineReconciler, FINALIZER, type ReconcilerDeps } from './reconciler.ts';

const GIB = 1024 ** 3;
const SETTINGS = { publicUrl: 'https://cloud.example.com' };
const NAME = 'w1.e1';
const IDENTITY = { [WORKSPACE_LABEL]: 'w1', [ID_LABEL]: 'e1' };

/** The snapshots the API records with an engine it creates, in the annotation it writes them to. */
const SNAPSHOTS: Record<EngineKindName, Record<string, unknown>> = {
  DAIEngine: {
    profileInfo: { name: 'workspaces/global/daiEngineProfiles/p' },
    daiEngineVersionInfo: { image: 'dai:1.11' },
  },
  H2OEngine: {
    profileInfo: { name: 'workspaces/global/h2oEngineProfiles/p' },
    h2oEngineVersionInfo: { image: 'h2o:3.46' },
  },
  NotebookEngine: {
    profileInfo: { name: 'workspaces/global/notebookEngineProfiles/p' },
    notebookImageInfo: { image: 'nb:1' },
  },
  SandboxEngine: {
    sandboxEngineTemplateInfo: {
      name: 'workspaces/global/sandboxEngineTemplates/t',
      memoryBytesLimit: String(GIB),
      milliCpuLimit: 1000,
    },
    sandboxEngineImageInfo: { image: 'sandbox:1' },
  },
};

/** An engine as the API creates it: its identity labels, and its snapshots and first state recorded. */
function created<K extends EngineKindName>(kind: EngineKind<K>, spec: EngineSpec<K>): EngineResource<K> {
  const recorded = { state: 'STATE_STARTING', reconciling: true, ...SNAPSHOTS[kind.kind] };
  return {
    metadata: {
      name: NAME,
      labels: IDENTITY,
      annotations: { [RECORDED_ANNOTATION]: JSON.stringify(recorded) },
    },
    spec,
  };
}

/** A container the kubelet restarts again and again, last ended by `reason`. */
const crashing = (reason: string, exitCode: number): V1PodStatus => ({
  phase: 'Running',
  conditions: [{ type: 'Ready', status: 'False' }],
  containerStatuses: [
    {
      name: 'engine',
      image: 'engine:1',
      imageID: '',
      ready: false,
      restartCount: 4,
      state: { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: { terminated: { reason, exitCode } },
    },
  ],
});

/** How the reconciler asks engines themselves (over HTTP in the operator), played by a test. */
type EngineQuestions = Pick<ReconcilerDeps, 'probeActivity' | 'askEngine'>;

/** One engine on a cluster in memory, its reconciler, and a clock the test moves. */
class Scene<K extends EngineKindName> {
  time = new Date('2026-03-02T09:00:00Z');
  readonly cluster = new MemoryCluster(() => this.time);
  readonly kind: EngineKind<K>;
  reconciler: EngineReconciler<K>;

  constructor(kind: EngineKind<K>, options: EngineQuestions = {}) {
    this.kind = kind;
    this.reconciler = this.reconcilerWith(SETTINGS, options);
  }

  /** A reconciler of this cluster's engines with these settings (the operator restarted with them). */
  reconcilerWith(settings: Settings, options: EngineQuestions = {}): EngineReconciler<K> {
    return new EngineReconciler<K>({
      kube: this.cluster.kube,
      view: this.cluster.view,
      kind: this.kind,
      settings,
      now: () => this.time,
      ...options,
    });
  }

  create(spec: EngineSpec<K>, engine = created(this.kind, spec)): this {
    this.cluster.createEngine(this.kind, engine);
    return this;
  }

  later(ms: number): void {
    this.time = new Date(this.time.getTime() + ms);
  }

  /** Reconciles, as events and requeues would, until a pass writes nothing; the last pass's answer. */
  async settle(): Promise<ReconcileResult | undefined> {
    for (let pass = 0; pass < 10; pass += 1) {
      const before = this.cluster.writes.length;
      const result = await this.reconciler.reconcile(NAME);
      if (this.cluster.writes.length === before) return result;
    }
    throw new Error(`still writing after 10 passes: ${this.cluster.writes.slice(-5).join(', ')}`);
  }

  /** The engine as the apiserver holds it. */
  get engine(): EngineResource<K> {
    const engine = this.cluster.stored(this.kind, NAME);
    if (engine === undefined) throw new Error(`${NAME} is gone`);
    return engine;
  }

  get state(): string | undefined {
    return this.engine.status?.state;
  }

  condition(type: string): StoredCondition | undefined {
    const conditions: StoredCondition[] = this.engine.status?.conditions ?? [];
    return conditions.find((c) => c.type === type);
  }

  get workload(): string {
    return workloadName(this.kind, this.engine);
  }

  /** The replicas the engine's StatefulSet asks for. */
  get replicas(): number | undefined {
    return this.cluster.statefulSets.get(this.workload)?.spec?.replicas;
  }

  get podNames(): string[] {
    return this.cluster.pods.of(this.engine.metadata.uid ?? '').map((p) => p.metadata?.name ?? '');
  }

  get dataClaim(): string {
    return dataClaimName(this.kind, this.engine, 0);
  }

  /** The user's pause (or terminate) as the API writes it. */
  stop(): void {
    this.cluster.editEngine(this.kind, NAME, { spec: { [this.kind.stopIntent]: true } });
    this.cluster.writeStatus(this.kind, NAME, { state: this.kind.stopStates.stopping, reconciling: true });
  }

  /** The user's resume as the API writes it. */
  resume(): void {
    this.cluster.editEngine(this.kind, NAME, { spec: { [this.kind.stopIntent]: false } });
    this.cluster.writeStatus(this.kind, NAME, {
      state: 'STATE_STARTING',
      reconciling: true,
      resumeTime: this.time.toISOString(),
    });
  }

  /** Created, started and reconciled to RUNNING with its pods ready. */
  async running(spec: EngineSpec<K>): Promise<this> {
    this.create(spec);
    await this.settle();
    this.cluster.startPods(this.workload, POD_READY);
    await this.settle();
    expect(this.state).toBe('STATE_RUNNING');
    return this;
  }
}

const DAI_SPEC: EngineSpec<'DAIEngine'> = { cpu: 1, memoryBytes: String(2 * GIB), storageBytes: String(GIB) };
const NOTEBOOK_SPEC: EngineSpec<'NotebookEngine'> = {
  cpu: 1,
  memoryBytes: String(GIB),
  storageBytes: String(GIB),
};

describe('a DAI engine on the in-memory cluster', () => {
  test('gets the finalizer and its workload on first sight, and reports STARTING while its pod waits', async () => {
    const scene = new Scene(daiEngineKind).create(DAI_SPEC);
    await scene.settle();
    expect(scene.engine.metadata.finalizers).toEqual([FINALIZER]);
    expect(scene.replicas).toBe(1);
    expect(scene.cluster.services.get(scene.workload)).toBeDefined();
    expect(scene.cluster.configMaps.get(scene.workload)).toBeDefined();
    expect(scene.state).toBe('STATE_STARTING');
    expect(scene.engine.status?.reconciling).toBe(true);
    expect(scene.condition('Ready')).toMatchObject({ status: 'False' });

    scene.cluster.startPods(scene.workload, POD_PENDING);
    await scene.settle();
    expect(scene.state).toBe('STATE_STARTING');
  });

  test('goes STARTING → CONNECTING → RUNNING as its pod runs, then answers', async () => {
    const scene = new Scene(daiEngineKind).create(DAI_SPEC);
    await scene.settle();
    scene.cluster.startPods(scene.workload, POD_NOT_READY);
    await scene.settle();
    expect(scene.state).toBe('STATE_CONNECTING');

    scene.later(30_000);
    scene.cluster.setPodStatus(`${scene.workload}-0`, POD_READY);
    await scene.settle();
    expect(scene.engine.status).toMatchObject({
      state: 'STATE_RUNNING',
      reconciling: false,
      runningSince: scene.time.toISOString(),
      apiUrl: 'https://cloud.example.com/workspaces/w1/daiEngines/e1/',
    });
    expect(scene.condition('Ready')).toMatchObject({ status: 'True', reason: 'Running' });
    // Nothing changed: another reconcile writes nothing.
    const writes = scene.cluster.writes.length;
    await scene.reconciler.reconcile(NAME);
    expect(scene.cluster.writes).toHaveLength(writes);
  });

  test('a pod gone while the engine runs makes it STARTING until its replacement is ready', async () => {
    const scene = await new Scene(daiEngineKind).running(DAI_SPEC);
    scene.cluster.removePod(`${scene.workload}-0`);
    await scene.settle();
    expect(scene.engine.status).toMatchObject({ state: 'STATE_STARTING', reconciling: true });
    expect(scene.condition('Ready')?.status).toBe('False');
    scene.cluster.startPods(scene.workload, POD_READY);
    await scene.settle();
    expect(scene.state).toBe('STATE_RUNNING');
  });

  test('pauses: PAUSING while its pod stops, PAUSED once it is gone, its data claim kept', async () => {
    const scene = await new Scene(daiEngineKind).running(DAI_SPEC);
    scene.stop();
    await scene.settle();
    expect(scene.replicas).toBe(0);
    expect(scene.state).toBe('STATE_PAUSING');
    expect(scene.condition('Stopped')).toMatchObject({ status: 'True', reason: 'UserRequested' });

    scene.cluster.collectGarbage();
    await scene.settle();
    expect(scene.state).toBe('STATE_PAUSED');
    expect(scene.engine.status?.reconciling).toBe(false);
    expect(scene.podNames).toEqual([]);
    expect(scene.cluster.claims.get(scene.dataClaim)).toBeDefined();
  });

  test('resumes from PAUSED: STARTING with one replica again, RUNNING once its pod is ready', async () => {
    const scene = await new Scene(daiEngineKind).running(DAI_SPEC);
    scene.stop();
    await scene.settle();
    scene.cluster.collectGarbage();
    await scene.settle();
    expect(scene.state).toBe('STATE_PAUSED');

    scene.later(60_000);
    scene.resume();
    await scene.settle();
    expect(scene.replicas).toBe(1);
    expect(scene.state).toBe('STATE_STARTING');
    expect(scene.condition('Stopped')).toMatchObject({ status: 'False' });

    scene.cluster.startPods(scene.workload, POD_READY);
    await scene.settle();
    expect(scene.state).toBe('STATE_RUNNING');
    // The run counts from the resume's RUNNING, not from the first one.
    expect(scene.engine.status?.runningSince).toBe(scene.time.toISOString());
  });

  test('a crashing pod fails the engine with the reason; it is held FAILED, its pods stopped, until resumed', async () => {
    const scene = await new Scene(daiEngineKind).running(DAI_SPEC);
    scene.later(5_000);
    scene.cluster.setPodStatus(`${scene.workload}-0`, crashing('Error', 1));
    await scene.settle();
    expect(scene.state).toBe('STATE_FAILED');
    expect(scene.condition('Failed')).toMatchObject({ status: 'True', reason: 'ProcessFailed' });
    expect(scene.condition('Failed')?.message).toContain('exit code 1');
    expect(scene.replicas).toBe(0);

    // Its pod gone, nothing shows the failure any more: the engine is still held failed.
    scene.cluster.collectGarbage();
    scene.later(60_000);
    await scene.settle();
    expect(scene.state).toBe('STATE_FAILED');
    expect(scene.replicas).toBe(0);

    scene.resume();
    await scene.settle();
    expect(scene.replicas).toBe(1);
    expect(scene.state).toBe('STATE_STARTING');
    scene.cluster.startPods(scene.workload, POD_READY);
    await scene.settle();
    expect(scene.state).toBe('STATE_RUNNING');
    expect(scene.condition('Failed')).toMatchObject({ status: 'False' });
  });

  test('a resume replaces the pod that was failing before it', async () => {
    const scene = await new Scene(daiEngineKind).running(DAI_SPEC);
    scene.cluster.setPodStatus(`${scene.workload}-0`, crashing('OOMKilled', 137));
    await scene.settle();
    expect(scene.state).toBe('STATE_FAILED');
    expect(scene.condition('Failed')?.reason).toBe('OOMKilled');

    // The scale to zero has not taken the pod yet when the user resumes.
    scene.later(10_000);
    scene.resume();
    await scene.settle();
    expect(scene.cluster.writes).toContain(`delete Pod/${scene.workload}-0`);
    expect(scene.podNames).toEqual([]);
    expect(scene.state).toBe('STATE_STARTING');
  });

  test('past its maxIdleDuration a running engine is paused, the Stopped condition saying why', async () => {
    const scene = await new Scene(daiEngineKind).running({ ...DAI_SPEC, maxIdleDuration: '1800s' });
    const result = await scene.settle();
    expect(result?.requeueAfterMs).toBe(1_800_000);

    scene.later(1_799_000);
    await scene.settle();
    expect(scene.engine.spec.paused).toBeUndefined();

    scene.later(1_000);
    await scene.settle();
    expect(scene.engine.spec.paused).toBe(true);
    expect(scene.state).toBe('STATE_PAUSING');
    expect(scene.replicas).toBe(0);
    expect(scene.condition('Stopped')).toMatchObject({ status: 'True', reason: 'MaxIdleDurationExceeded' });

    scene.cluster.collectGarbage();
    await scene.settle();
    expect(scene.state).toBe('STATE_PAUSED');

    // Resumed, the reason is forgotten.
    scene.resume();
    await scene.settle();
    expect(scene.condition('Stopped')).toMatchObject({ status: 'False', reason: 'Active' });
  });

  test('activity within the idle limit keeps it running, and the limit counts again from it', async () => {
    const scene = await new Scene(daiEngineKind).running({ ...DAI_SPEC, maxIdleDuration: '1800s' });
    scene.later(1_000_000);
    scene.cluster.editEngine(daiEngineKind, NAME, {
      metadata: { annotations: { [LAST_ACTIVITY_ANNOTATION]: scene.time.toISOString() } },
    });
    scene.later(800_000);
    const result = await scene.settle();
    expect(scene.engine.spec.paused).toBeUndefined();
    expect(scene.state).toBe('STATE_RUNNING');
    expect(result?.requeueAfterMs).toBe(1_000_000);
  });

  test('a bigger storage request grows the claim, storageResizing true until the volume has grown', async () => {
    const scene = await new Scene(daiEngineKind).running(DAI_SPEC);
    expect(scene.engine.status?.storageResizing).toBe(false);

    scene.cluster.editEngine(daiEngineKind, NAME, { spec: { storageBytes: String(4 * GIB) } });
    const result = await scene.settle();
    const claim = scene.cluster.claims.get(scene.dataClaim);
    expect(claim?.spec?.resources?.requests?.['storage']).toBe(String(4 * GIB));
    expect(scene.engine.status?.storageResizing).toBe(true);
    expect(scene.state).toBe('STATE_RUNNING');
    expect(result?.requeueAfterMs).toBeLessThanOrEqual(5_000);

    scene.cluster.finishResize(scene.dataClaim);
    await scene.settle();
    expect(scene.engine.status?.storageResizing).toBe(false);
  });

  test('deleting: DELETING while workloads and claims go, the finalizer removed once they are gone', async () => {
    const scene = await new Scene(daiEngineKind).running(DAI_SPEC);
    const workload = scene.workload;
    const uid = scene.engine.metadata.uid ?? '';
    scene.cluster.deleteEngine(daiEngineKind, NAME);
    const result = await scene.settle();
    expect(scene.state).toBe('STATE_DELETING');
    expect(scene.engine.metadata.finalizers).toEqual([FINALIZER]);
    expect(result?.requeueAfterMs).toBeGreaterThan(0);
    expect(scene.cluster.statefulSets.get(workload)).toBeUndefined();
    expect(scene.cluster.services.get(workload)).toBeUndefined();
    expect(scene.cluster.configMaps.get(workload)).toBeUndefined();
    // The claim waits for the pod that uses it.
    expect(scene.cluster.claims.of(uid)[0]?.metadata?.deletionTimestamp).toBeDefined();

    scene.cluster.collectGarbage();
    await scene.settle();
    expect(scene.cluster.claims.of(uid)).toEqual([]);
    expect(scene.cluster.stored(daiEngineKind, NAME)).toBeUndefined();
  });

  test('a StatefulSet scaled by hand is scaled back to what the engine wants', async () => {
    const scene = await new Scene(daiEngineKind).running(DAI_SPEC);
    const set = scene.cluster.statefulSets.get(scene.workload);
    if (set?.spec === undefined) throw new Error('no StatefulSet');
    scene.cluster.statefulSets.put(
      Object.assign({}, set, { spec: Object.assign({}, set.spec, { replicas: 3 }) }),
    );
    await scene.settle();
    expect(scene.replicas).toBe(1);
  });

  test('a change of the spec reaches the workload, and observedGeneration follows it', async () => {
    const scene = await new Scene(daiEngineKind).running(DAI_SPEC);
    expect(scene.engine.status?.observedGeneration).toBe(1);
    scene.cluster.editEngine(daiEngineKind, NAME, { spec: { cpu: 2 } });
    await scene.settle();
    const set = scene.cluster.statefulSets.get(scene.workload);
    const container = set?.spec?.template.spec?.containers.find((c) => c.name === daiEngineKind.container);
    expect(container?.resources?.limits?.['cpu']).toBe('2');
    expect(scene.engine.status?.observedGeneration).toBe(2);
  });

  test('a change of the pod template replaces it whole: what the engine no longer wants there goes', async () => {
    const scene = await new Scene(daiEngineKind).running(DAI_SPEC);
    const set = scene.cluster.statefulSets.get(scene.workload);
    if (set?.spec === undefined) throw new Error('no StatefulSet');
    // A field set by hand in the template, which the operator never wanted.
    const template = set.spec.template;
    const edited = Object.assign({}, template, {
      spec: Object.assign({ containers: [] }, template.spec, { hostname: 'by-hand' }),
    });
    scene.cluster.statefulSets.put(
      Object.assign({}, set, { spec: Object.assign({}, set.spec, { template: edited }) }),
    );
    scene.cluster.editEngine(daiEngineKind, NAME, { spec: { cpu: 2 } });
    await scene.settle();
    const after = scene.cluster.statefulSets.get(scene.workload)?.spec?.template.spec;
    expect(after?.hostname).toBeUndefined();
    expect(
      after?.containers.find((c) => c.name === daiEngineKind.container)?.resources?.limits?.['cpu'],
    ).toBe('2');
  });

  test('starting creates each workload object once and writes the finalizer once', async () => {
    const scene = await new Scene(daiEngineKind).running(DAI_SPEC);
    const workloads = scene.cluster.writes.filter((w) => !w.includes(daiEngineKind.plural));
    expect(workloads).toEqual([
      `create ConfigMap/${scene.workload}`,
      `create Service/${scene.workload}`,
      `create StatefulSet/${scene.workload}`,
    ]);
    expect(scene.cluster.writes.filter((w) => w === `patch ${daiEngineKind.plural}/${NAME}`)).toHaveLength(1);
    expect(scene.engine.metadata.finalizers).toEqual([FINALIZER]);
  });

  test('an engine created with the finalizer starts without writing it again', async () => {
    const engine = created(daiEngineKind, DAI_SPEC);
    const scene = new Scene(daiEngineKind).create(DAI_SPEC, {
      ...engine,
      metadata: { ...engine.metadata, finalizers: [FINALIZER] },
    });
    await scene.settle();
    scene.cluster.startPods(scene.workload, POD_READY);
    await scene.settle();
    expect(scene.state).toBe('STATE_RUNNING');
    expect(scene.cluster.writes.filter((w) => w === `patch ${daiEngineKind.plural}/${NAME}`)).toEqual([]);
    expect(scene.engine.metadata.finalizers).toEqual([FINALIZER]);
  });

  test('an engine created paused writes no workload, is PAUSED, and gets its workload once resumed', async () => {
    const scene = new Scene(daiEngineKind).create({ ...DAI_SPEC, paused: true });
    await scene.settle();
    expect(scene.state).toBe('STATE_PAUSED');
    expect(scene.cluster.writes.filter((w) => !w.includes(daiEngineKind.plural))).toEqual([]);
    scene.resume();
    await scene.settle();
    expect(scene.replicas).toBe(1);
    expect(scene.cluster.services.get(scene.workload)).toBeDefined();
    expect(scene.cluster.configMaps.get(scene.workload)).toBeDefined();
  });

  test('a pause and a resume write the StatefulSet replicas alone, and nothing else of the workload', async () => {
    const scene = await new Scene(daiEngineKind).running(DAI_SPEC);
    const template = scene.cluster.statefulSets.get(scene.workload)?.spec?.template;
    const before = scene.cluster.writes.length;
    scene.stop();
    await scene.settle();
    scene.cluster.collectGarbage();
    await scene.settle();
    expect(scene.state).toBe('STATE_PAUSED');
    scene.resume();
    await scene.settle();
    const workloads = scene.cluster.writes.slice(before).filter((w) => !w.includes(daiEngineKind.plural));
    expect(workloads).toEqual([`patch StatefulSet/${scene.workload}`, `patch StatefulSet/${scene.workload}`]);
    expect(scene.replicas).toBe(1);
    expect(scene.cluster.statefulSets.get(scene.workload)?.spec?.template).toEqual(template);
  });

  test("a profile's pod template that cannot be applied fails the engine, and nothing runs", async () => {
    const recorded = {
      state: 'STATE_STARTING',
      profileInfo: { name: 'workspaces/global/daiEngineProfiles/p', yamlPodTemplateSpec: 'kind: Pod\n' },
      daiEngineVersionInfo: { image: 'dai:1.11' },
    };
    const scene = new Scene(daiEngineKind).create(DAI_SPEC, {
      metadata: {
        name: NAME,
        labels: IDENTITY,
        annotations: { [RECORDED_ANNOTATION]: JSON.stringify(recorded) },
      },
      spec: DAI_SPEC,
    });
    const result = await scene.settle();
    expect(scene.state).toBe('STATE_FAILED');
    expect(scene.condition('Ready')).toMatchObject({ status: 'False', reason: 'InvalidPodTemplate' });
    expect(scene.cluster.statefulSets.all()).toEqual([]);
    // Only a change of the engine or its profile can mend it: nothing to retry.
    expect(result).toBeUndefined();
  });

  test('with network peers set, a NetworkPolicy guards the engine, and it goes once they are unset', async () => {
    const guarded = {
      ...SETTINGS,
      engineNetworkPeers: [{ podSelector: { matchLabels: { app: 'gateway' } } }],
    };
    const scene = new Scene(daiEngineKind);
    scene.reconciler = scene.reconcilerWith(guarded);
    scene.create(DAI_SPEC);
    await scene.settle();
    const order = scene.cluster.writes.filter((w) => w.startsWith('create'));
    expect(order.indexOf(`create NetworkPolicy/${scene.workload}`)).toBeLessThan(
      order.indexOf(`create StatefulSet/${scene.workload}`),
    );

    scene.reconciler = scene.reconcilerWith(SETTINGS);
    await scene.settle();
    expect(scene.cluster.networkPolicies.get(scene.workload)).toBeUndefined();
  });

  test('a paused engine is deleted at once: its claim goes, then its finalizer', async () => {
    const scene = await new Scene(daiEngineKind).running(DAI_SPEC);
    scene.stop();
    await scene.settle();
    scene.cluster.collectGarbage();
    await scene.settle();
    expect(scene.state).toBe('STATE_PAUSED');
    const uid = scene.engine.metadata.uid ?? '';
    scene.cluster.deleteEngine(daiEngineKind, NAME);
    await scene.settle();
    expect(scene.cluster.claims.of(uid)).toEqual([]);
    expect(scene.cluster.stored(daiEngineKind, NAME)).toBeUndefined();
  });

  test('an engine written without the API admitting it is held with its condition, and nothing of it runs', async () => {
    const scene = new Scene(daiEngineKind).create(DAI_SPEC, { metadata: { name: NAME }, spec: DAI_SPEC });
    await scene.settle();
    expect(scene.condition('Admitted')).toMatchObject({ status: 'False', reason: 'NotAdmitted' });
    expect(scene.engine.metadata.finalizers).toBeUndefined();
    expect(scene.cluster.statefulSets.all()).toEqual([]);
    expect(scene.cluster.writes).toEqual([`patch ${daiEngineKind.plural}/${NAME}/status`]);
  });

  test('an engine held unadmitted starts once a change the API admits gives it its identity and snapshots', async () => {
    const scene = new Scene(daiEngineKind).create(DAI_SPEC, { metadata: { name: NAME }, spec: DAI_SPEC });
    await scene.settle();
    expect(scene.condition('Admitted')?.status).toBe('False');

    const admitted = created(daiEngineKind, DAI_SPEC).metadata;
    scene.cluster.editEngine(daiEngineKind, NAME, {
      metadata: { labels: admitted.labels, annotations: admitted.annotations },
    });
    await scene.settle();
    expect(scene.engine.metadata.finalizers).toEqual([FINALIZER]);
    expect(scene.replicas).toBe(1);
    expect(scene.state).toBe('STATE_STARTING');
    expect(scene.condition('Admitted')).toBeUndefined();
  });
});

describe('a notebook engine on the in-memory cluster', () => {
  test('stays STARTING (it has no CONNECTING) until its pod is ready, then RUNNING', async () => {
    const scene = new Scene(notebookEngineKind).create(NOTEBOOK_SPEC);
    await scene.settle();
    scene.cluster.startPods(scene.workload, POD_NOT_READY);
    await scene.settle();
    expect(scene.state).toBe('STATE_STARTING');
    scene.cluster.setPodStatus(`${scene.workload}-0`, POD_READY);
    await scene.settle();
    expect(scene.state).toBe('STATE_RUNNING');
  });

  test('killed for memory: FAILED with the OOM reason in its failureReason', async () => {
    const scene = await new Scene(notebookEngineKind).running(NOTEBOOK_SPEC);
    scene.cluster.setPodStatus(`${scene.workload}-0`, crashing('OOMKilled', 137));
    await scene.settle();
    expect(scene.engine.status).toMatchObject({
      state: 'STATE_FAILED',
      failureReason: 'FAILURE_REASON_OOM_KILLED',
    });
    expect(scene.replicas).toBe(0);
  });

  test('a lost data volume fails it', async () => {
    const scene = await new Scene(notebookEngineKind).running(NOTEBOOK_SPEC);
    scene.cluster.loseClaim(scene.dataClaim);
    scene.later(10 * 60_000);
    await scene.settle();
    expect(scene.engine.status).toMatchObject({
      state: 'STATE_FAILED',
      failureReason: 'FAILURE_REASON_PVC_ACCESS_FAILURE',
    });
  });

  test('past its maxRunningDuration it is paused with that reason', async () => {
    const scene = await new Scene(notebookEngineKind).running({
      ...NOTEBOOK_SPEC,
      maxRunningDuration: '3600s',
    });
    scene.later(3_600_000);
    await scene.settle();
    expect(scene.engine.spec.paused).toBe(true);
    expect(scene.condition('Stopped')).toMatchObject({
      status: 'True',
      reason: 'MaxRunningDurationExceeded',
    });
    expect(scene.replicas).toBe(0);
    scene.cluster.collectGarbage();
    await scene.settle();
    expect(scene.state).toBe('STATE_PAUSED');
    expect(scene.cluster.claims.get(scene.dataClaim)).toBeDefined();
  });
});

describe('an H2O engine on the in-memory cluster', () => {
  const H2O_SPEC: EngineSpec<'H2OEngine'> = { cpu: 1, memoryBytes: String(GIB), nodeCount: 2 };

  test('is CONNECTING until its nodes run and its leader alone is ready, then RUNNING', async () => {
    const scene = new Scene(h2oEngineKind).create(H2O_SPEC);
    await scene.settle();
    expect(scene.replicas).toBe(2);
    expect(scene.cluster.services.get(`${scene.workload}-api`)).toBeDefined();
    scene.cluster.startPods(scene.workload, POD_NOT_READY);
    await scene.settle();
    expect(scene.state).toBe('STATE_CONNECTING');
    // Both nodes answer while they still look for each other: not formed yet.
    scene.cluster.setPodStatus(`${scene.workload}-0`, POD_READY);
    scene.cluster.setPodStatus(`${scene.workload}-1`, POD_READY);
    await scene.settle();
    expect(scene.state).toBe('STATE_CONNECTING');
    scene.cluster.setPodStatus(`${scene.workload}-1`, POD_NOT_READY);
    await scene.settle();
    expect(scene.state).toBe('STATE_RUNNING');
  });

  test('stays CONNECTING while its ready leader reports a cloud not yet formed, and is RUNNING once it is', async () => {
    // What the leader's GET /3/Cloud answers: H2O's cloud size and whether its nodes agree.
    let cloud: EngineAnswers = { answers: [{ cloud_size: 1, consensus: true, locked: false }] };
    const asked: string[] = [];
    const scene = new Scene(h2oEngineKind, {
      askEngine: ({ paths }) => {
        asked.push(...paths);
        return Promise.resolve(cloud);
      },
    }).create(H2O_SPEC);
    await scene.settle();
    scene.cluster.startPods(scene.workload, POD_NOT_READY);
    scene.cluster.setPodStatus(`${scene.workload}-0`, POD_READY);
    const waiting = await scene.settle();
    expect(scene.state).toBe('STATE_CONNECTING');
    expect(scene.condition('Ready')).toMatchObject({ status: 'False', reason: 'NotServingYet' });
    expect(asked).toContain('/3/Cloud');
    // Nothing in the cluster changes while the cloud forms: the reconciler looks again by itself.
    expect(waiting?.requeueAfterMs).toBeLessThanOrEqual(1000);

    cloud = { answers: [{ cloud_size: 2, consensus: false, locked: false }] };
    await scene.settle();
    expect(scene.state).toBe('STATE_CONNECTING');

    cloud = { answers: [{ cloud_size: 2, consensus: true, locked: true }] };
    await scene.settle();
    expect(scene.state).toBe('STATE_RUNNING');
    // Once RUNNING, the cloud is not asked again on every pass.
    asked.length = 0;
    scene.later(60_000);
    await scene.settle();
    expect(asked).toEqual([]);
  });

  test('stays CONNECTING while the pod counted ready refuses the cloud check: a node that is not the leader', async () => {
    // Kubelet's readiness trails H2O by a probe period: just after the nodes merge, the node
    // that led its cloud of one can still be the ready pod while the new leader is not yet. That
    // node refuses H2O's API (403) — the Service would send users to it.
    let cloud: EngineAnswers = { failure: 'answered HTTP 403', refusedWith: 403 };
    const scene = new Scene(h2oEngineKind, { askEngine: () => Promise.resolve(cloud) }).create(H2O_SPEC);
    await scene.settle();
    scene.cluster.startPods(scene.workload, POD_NOT_READY);
    scene.cluster.setPodStatus(`${scene.workload}-1`, POD_READY);
    await scene.settle();
    expect(scene.state).toBe('STATE_CONNECTING');
    expect(scene.condition('Ready')).toMatchObject({ status: 'False', reason: 'NotServingYet' });

    // Kubelet catches up: the leader is the ready pod, and it answers for the formed cloud.
    scene.cluster.setPodStatus(`${scene.workload}-1`, POD_NOT_READY);
    scene.cluster.setPodStatus(`${scene.workload}-0`, POD_READY);
    cloud = { answers: [{ cloud_size: 2, consensus: true, locked: true }] };
    await scene.settle();
    expect(scene.state).toBe('STATE_RUNNING');
  });

  test('is judged by its pods alone when its leader does not answer the cloud check, or not as H2O does', async () => {
    for (const answer of [
      { failure: 'connect ECONNREFUSED' },
      { answers: [{ nodes: [] }] },
    ] as EngineAnswers[]) {
      const scene = new Scene(h2oEngineKind, { askEngine: () => Promise.resolve(answer) }).create(H2O_SPEC);
      await scene.settle();
      scene.cluster.startPods(scene.workload, POD_NOT_READY);
      scene.cluster.setPodStatus(`${scene.workload}-0`, POD_READY);
      await scene.settle();
      expect(scene.state).toBe('STATE_RUNNING');
    }
  });

  test('terminates: TERMINATING while its nodes stop, TERMINATED once they are gone, and stays so', async () => {
    const scene = new Scene(h2oEngineKind).create(H2O_SPEC);
    await scene.settle();
    scene.cluster.startPods(scene.workload, POD_NOT_READY);
    scene.cluster.setPodStatus(`${scene.workload}-0`, POD_READY);
    await scene.settle();
    expect(scene.state).toBe('STATE_RUNNING');

    scene.stop();
    await scene.settle();
    expect(scene.replicas).toBe(0);
    expect(scene.state).toBe('STATE_TERMINATING');
    scene.cluster.collectGarbage();
    await scene.settle();
    expect(scene.state).toBe('STATE_TERMINATED');
    expect(scene.condition('Stopped')).toMatchObject({ status: 'True', reason: 'UserRequested' });

    scene.later(24 * 3_600_000);
    const result = await scene.settle();
    expect(scene.state).toBe('STATE_TERMINATED');
    expect(scene.replicas).toBe(0);
    expect(result).toBeUndefined();
  });

  test('past its maxIdleDuration it is terminated with that reason when its leader shows no work', async () => {
    const probeActivity: ActivityProber = () => Promise.resolve({ found: undefined });
    const scene = new Scene(h2oEngineKind, { probeActivity }).create({
      ...H2O_SPEC,
      nodeCount: 1,
      maxIdleDuration: '600s',
    });
    await scene.settle();
    scene.cluster.startPods(scene.workload, POD_READY);
    await scene.settle();
    expect(scene.state).toBe('STATE_RUNNING');
    scene.later(600_000);
    await scene.settle();
    expect(scene.engine.spec.terminated).toBe(true);
    expect(scene.state).toBe('STATE_TERMINATING');
    expect(scene.condition('Stopped')).toMatchObject({ status: 'True', reason: 'MaxIdleDurationExceeded' });
  });

  test('at its idle limit a leader training a job keeps it running, its activity recorded', async () => {
    const scene = new Scene(h2oEngineKind, {
      probeActivity: ({ now }) => Promise.resolve({ found: now }),
    }).create({ ...H2O_SPEC, nodeCount: 1, maxIdleDuration: '600s' });
    await scene.settle();
    scene.cluster.startPods(scene.workload, POD_READY);
    await scene.settle();
    scene.later(600_000);
    const result = await scene.settle();
    expect(scene.engine.spec.terminated).toBeUndefined();
    expect(scene.state).toBe('STATE_RUNNING');
    expect(scene.engine.metadata.annotations?.[LAST_ACTIVITY_ANNOTATION]).toBe(scene.time.toISOString());
    expect(result?.requeueAfterMs).toBe(600_000);
  });
});

describe('a sandbox engine on the in-memory cluster', () => {
  test('STARTING while its pod is created, RUNNING once ready; terminated: TERMINATING, then TERMINATED', async () => {
    const scene = new Scene(sandboxEngineKind).create({});
    await scene.settle();
    expect(scene.engine.status).toMatchObject({
      state: 'STATE_STARTING',
      pendingReason: 'PENDING_REASON_CREATING_RESOURCES',
    });
    scene.cluster.startPods(scene.workload, POD_READY);
    await scene.settle();
    expect(scene.engine.status).toMatchObject({
      state: 'STATE_RUNNING',
      pendingReason: 'PENDING_REASON_UNSPECIFIED',
    });

    scene.stop();
    await scene.settle();
    expect(scene.replicas).toBe(0);
    expect(scene.engine.status).toMatchObject({
      state: 'STATE_TERMINATING',
      pendingReason: 'PENDING_REASON_DELETING_RESOURCES',
    });
    scene.cluster.collectGarbage();
    await scene.settle();
    expect(scene.state).toBe('STATE_TERMINATED');
  });
});
