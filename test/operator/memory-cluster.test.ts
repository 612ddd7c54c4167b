/**
 * The cluster kept in memory (operator/src/kube/memory-cluster.ts) against the real thing: the
 * same writes, made through the KubeClient to a kube-apiserver and read back through the
 * ClusterView's watches, and made to the in-memory twin, leave the same engine and objects in
 * view — the status subresource apart from the spec, generations, finalizers, merge patches, a
 * stale resourceVersion refused, creates (a second one refused), strategic merge patches of owned
 * objects (replicas alone; a template, a Service's spec and a ConfigMap's data replaced whole)
 * and deletes. The reconciler's unit tests
 * (operator/src/reconcile/lifecycle.test.ts) rely on each of these.
 */
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubernetesObject,
  type V1ConfigMap,
  type V1ObjectMeta,
  type V1Service,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import {
  ENGINE_UID_LABEL,
  ID_LABEL,
  STOP_REASON_ANNOTATION,
  WORKSPACE_LABEL,
} from '../../shared/resources.ts';
import { RECORDED_ANNOTATION } from '../../shared/recorded.ts';
import { statusCode } from '../../shared/watched-collection.ts';
import { APPLIED_DIGEST_ANNOTATION, ownedWrite, withDigests } from '../../operator/src/desired/digest.ts';
import { desiredObjects, workloadName } from '../../operator/src/desired/workload.ts';
import { daiEngineKind } from '../../operator/src/kinds/dai-engine.ts';
import type { EngineResource } from '../../operator/src/kinds/kind.ts';
import { KubeClient, type EngineWrites } from '../../operator/src/kube/client.ts';
import { ClusterView, type EngineReads } from '../../operator/src/kube/cluster-view.ts';
import { MemoryCluster } from '../../operator/src/kube/memory-cluster.ts';
import { controllerMetrics } from '../../operator/src/runtime/metrics.ts';
import { waitFor } from '../cluster/wait.ts';
import { useCluster } from '../helpers/use-cluster.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const NAMESPACE = 'memory-twin';
const NAME = 'w1.e1';
const SETTINGS = { publicUrl: 'https://cloud.example.com' };
const cluster = useCluster();
const kind = daiEngineKind;

/** Where the writes go and the reads come from, and what the test itself does there. */
interface Side {
  kube: EngineWrites;
  view: EngineReads;
  /** The API's create of an engine. */
  create(engine: EngineResource<'DAIEngine'>): Promise<void>;
  /** A user's delete of the engine. */
  remove(): Promise<void>;
  /** Resolves once the view shows what `shows` looks for (the real view's watches may lag). */
  sees(shows: () => boolean, what: string): Promise<void>;
  /** What the view does not keep: a StatefulSet's pod template annotations, a ConfigMap's data. */
  stored(name: string): Promise<{ template?: Record<string, string>; data?: Record<string, string> }>;
}

/** What the reconciler reads of the engine: everything but the apiserver's identity and clocks. */
function engineSeen(view: EngineReads): Record<string, unknown> | undefined {
  const engine = view.engine(kind, NAME);
  if (engine === undefined) return undefined;
  const { metadata, spec, status, storedStatus } = engine;
  return {
    labels: metadata.labels,
    annotations: metadata.annotations ?? {},
    finalizers: metadata.finalizers ?? [],
    generation: metadata.generation,
    deleting: metadata.deletionTimestamp !== undefined,
    spec,
    status,
    storedStatus,
  };
}

/**
 * What the reconciler reads of an owned object's metadata, the engine's uid (which the apiserver
 * chose) named as such, and the applied digest (made with it) only said to be there.
 */
function metadataSeen(
  metadata: V1ObjectMeta | undefined,
  uid: string | undefined,
): Record<string, unknown> | undefined {
  if (metadata === undefined) return undefined;
  const { [APPLIED_DIGEST_ANNOTATION]: digest, ...annotations } = metadata.annotations ?? {};
  const { [ENGINE_UID_LABEL]: owner, ...labels } = metadata.labels ?? {};
  return { labels, annotations, digested: digest !== undefined, ownedByEngine: owner === uid };
}

/** What the reconciler reads of the StatefulSet. */
function setSeen(
  view: EngineReads,
  name: string,
  uid: string | undefined,
): Record<string, unknown> | undefined {
  const set = view.statefulSets.get(name);
  if (set === undefined) return undefined;
  return {
    metadata: metadataSeen(set.metadata, uid),
    replicas: set.spec?.replicas,
    claimTemplates: (set.spec?.volumeClaimTemplates ?? []).map((t) => ({
      name: t.metadata?.name,
      storage: t.spec?.resources?.requests?.['storage'],
    })),
  };
}

const recorded = {
  state: 'STATE_STARTING',
  reconciling: true,
  profileInfo: { name: 'workspaces/global/daiEngineProfiles/p' },
  daiEngineVersionInfo: { image: 'dai:1.11' },
};
const engine: EngineResource<'DAIEngine'> = {
  apiVersion: 'engine.h2o.ai/v1',
  kind: 'DAIEngine',
  metadata: {
    name: NAME,
    namespace: NAMESPACE,
    labels: { [WORKSPACE_LABEL]: 'w1', [ID_LABEL]: 'e1' },
    annotations: { [RECORDED_ANNOTATION]: JSON.stringify(recorded) },
  },
  spec: { cpu: 1, memoryBytes: String(1024 ** 3), storageBytes: String(1024 ** 3) },
  // The status subresource drops it: the engine reads the recorded fields alone.
  status: { state: 'STATE_FAILED' },
};

/** The writes of a reconcile and a user's lifecycle, and what the view shows after each. */
async function story(side: Side): Promise<unknown[]> {
  const { kube, view } = side;
  const seen: unknown[] = [];
  const write = async <T>(call: () => Promise<T>): Promise<T | number> => {
    try {
      return await call();
    } catch (error: unknown) {
      return statusCode(error) ?? -1;
    }
  };

  await side.create(engine);
  await side.sees(() => view.engine(kind, NAME) !== undefined, 'the engine');
  seen.push(engineSeen(view));

  // The finalizer, on the version read.
  const read = (): EngineResource<'DAIEngine'> => {
    const current = view.engine(kind, NAME);
    if (current === undefined) throw new Error('no engine');
    return current;
  };
  const version = read().metadata.resourceVersion;
  view.wroteEngine(
    kind,
    await kube.patchEngine(kind, NAME, {
      metadata: { finalizers: ['engine.h2o.ai/cleanup'], resourceVersion: version },
    }),
  );
  seen.push(engineSeen(view));
  // A write on the version read before it is refused.
  seen.push(await write(() => kube.patchEngine(kind, NAME, { metadata: { resourceVersion: version } })));

  // A report: the status subresource alone changes, not the generation.
  const conditions = [
    {
      type: 'Ready',
      status: 'False',
      reason: 'Starting',
      message: 'm',
      lastTransitionTime: '2026-03-02T09:00:00Z',
      observedGeneration: 1,
    },
  ];
  view.wroteEngine(
    kind,
    await kube.patchEngineStatus(kind, NAME, { state: 'STATE_STARTING', reconciling: true, conditions }),
    true,
  );
  seen.push(engineSeen(view));

  // A change of the spec counts as a generation; the status sent with it is ignored.
  view.wroteEngine(
    kind,
    await kube.patchEngine(kind, NAME, { spec: { paused: true }, status: { state: 'STATE_PAUSED' } }),
  );
  seen.push(engineSeen(view));
  // An annotation set, then removed with null: no generation.
  view.wroteEngine(
    kind,
    await kube.patchEngine(kind, NAME, {
      metadata: { annotations: { [STOP_REASON_ANNOTATION]: 'MaxIdleDurationExceeded' } },
    }),
  );
  seen.push(engineSeen(view));
  view.wroteEngine(
    kind,
    await kube.patchEngine(kind, NAME, { metadata: { annotations: { [STOP_REASON_ANNOTATION]: null } } }),
  );
  seen.push(engineSeen(view));

  // The workload created; a second create of what exists is refused.
  const desired = desiredObjects(kind, read(), SETTINGS);
  const name = workloadName(kind, read());
  const set: V1StatefulSet = desired.statefulSet;
  view.statefulSets.wrote(await kube.create(withDigests(set, set)));
  view.services.wrote(await kube.create(withDigests(desired.service, desired.service)));
  const files: V1ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: set.metadata,
    data: { a: '1' },
  };
  view.configMaps.wrote(await kube.create(withDigests(files, files)));
  const uid = read().metadata.uid;
  seen.push(setSeen(view, name, uid), metadataSeen(view.services.get(name)?.metadata, uid));
  seen.push(await write(() => kube.create(withDigests(set, set))));
  // Owned objects patched as the reconciler does it: what ownedWrite decides from the view.
  const patched = async <T extends KubernetesObject>(
    copy: { get(name: string): T | undefined; wrote(object: T): void },
    wanted: T,
  ): Promise<unknown> => {
    const planned = ownedWrite(wanted, copy.get(wanted.metadata?.name ?? ''));
    if (planned === undefined || 'create' in planned) return planned;
    const answer = await write(() => kube.patchOwned<T>(planned.patch, planned.replace));
    if (typeof answer === 'number') return answer;
    copy.wrote(answer);
    return planned.replace;
  };
  // The replicas alone (a resume); then the pod template replaced whole: an annotation gone.
  const scaled: V1StatefulSet = Object.assign({}, set, {
    spec: Object.assign({}, set.spec ?? { selector: {}, template: {} }, { replicas: 1 }),
  });
  seen.push(await patched(view.statefulSets, scaled), setSeen(view, name, uid));
  const templated = (annotations: Record<string, string>): V1StatefulSet => {
    const spec = scaled.spec ?? { selector: {}, template: {} };
    const template = Object.assign({}, spec.template, {
      metadata: Object.assign({}, spec.template.metadata, { annotations }),
    });
    return Object.assign({}, scaled, { spec: Object.assign({}, spec, { template }) });
  };
  seen.push(await patched(view.statefulSets, templated({ x: '1' })));
  seen.push(await patched(view.statefulSets, templated({ y: '2' })), setSeen(view, name, uid));
  // A ConfigMap's data replaced whole: a file gone.
  seen.push(
    await patched(view.configMaps, Object.assign({}, files, { data: { b: '2' } })),
    await side.stored(name),
  );
  // A Service of a cluster IP, its spec replaced whole without it: the apiserver keeps the IP.
  const client: V1Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: Object.assign({}, desired.service.metadata, { name: `${name}-api` }),
    spec: { selector: desired.service.spec?.selector ?? {}, ports: desired.service.spec?.ports ?? [] },
  };
  view.services.wrote(await kube.create(withDigests(client, client)));
  seen.push(
    await patched(
      view.services,
      Object.assign({}, client, { spec: Object.assign({}, client.spec, { publishNotReadyAddresses: true }) }),
    ),
    metadataSeen(view.services.get(`${name}-api`)?.metadata, uid),
  );
  await kube.deleteService(name);
  await side.sees(() => view.services.get(name) === undefined, 'the Service gone');
  // Deleting what is gone is no error.
  seen.push(await write(() => kube.deleteService(name)));

  // A user's delete: held by the finalizer (a new generation), gone once it is removed.
  await side.remove();
  await side.sees(() => view.engine(kind, NAME)?.metadata.deletionTimestamp !== undefined, 'the deletion');
  seen.push(engineSeen(view));
  await kube.patchEngine(kind, NAME, {
    metadata: { finalizers: null, resourceVersion: read().metadata.resourceVersion },
  });
  await side.sees(() => view.engine(kind, NAME) === undefined, 'the engine gone');
  seen.push(engineSeen(view));
  return seen;
}

describe('the in-memory cluster', () => {
  let real: ClusterView | undefined;
  afterAll(async () => {
    await real?.stop();
  });

  test('shows what the apiserver and the watches show after the same writes', async () => {
    const { kubeConfig } = cluster();
    await cluster().kubectl(['apply', '-f', `${ROOT}/crds`]);
    await cluster().kubectl(['wait', '--for=condition=Established', `crd/${kind.plural}.engine.h2o.ai`]);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
    const log = pino({ level: 'silent' });
    real = new ClusterView({ kubeConfig, namespace: NAMESPACE, log, kinds: [kind] }, () => undefined);
    await real.start();
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    const apps = kubeConfig.makeApiClient(AppsV1Api);
    const target = { group: 'engine.h2o.ai', version: 'v1', namespace: NAMESPACE, plural: kind.plural };
    const view = real;
    const onCluster = await story({
      kube: new KubeClient({ kubeConfig, namespace: NAMESPACE, metrics: controllerMetrics(new Registry()) }),
      view,
      create: async (body) => {
        await custom.createNamespacedCustomObject({ ...target, body });
      },
      remove: async () => {
        await custom.deleteNamespacedCustomObject({ ...target, name: NAME });
      },
      sees: async (shows, what) => {
        await waitFor(() => Promise.resolve(shows() || undefined), { what, timeoutMs: 30_000 });
      },
      stored: async (name) => {
        const set = await apps.readNamespacedStatefulSet({ name, namespace: NAMESPACE });
        const map = await core.readNamespacedConfigMap({ name, namespace: NAMESPACE });
        return {
          ...(set.spec?.template.metadata?.annotations
            ? { template: set.spec.template.metadata.annotations }
            : {}),
          ...(map.data ? { data: map.data } : {}),
        };
      },
    });

    const twin = new MemoryCluster(() => new Date());
    const inMemory = await story({
      kube: twin.kube,
      view: twin.view,
      create: (body) => {
        twin.createEngine(kind, body);
        return Promise.resolve();
      },
      remove: () => {
        twin.deleteEngine(kind, NAME);
        return Promise.resolve();
      },
      sees: (shows, what) => (shows() ? Promise.resolve() : Promise.reject(new Error(`not seen: ${what}`))),
      stored: (name) => {
        const annotations = twin.statefulSets.get(name)?.spec?.template.metadata?.annotations;
        const data = twin.configMaps.get(name)?.data;
        return Promise.resolve({
          ...(annotations ? { template: annotations } : {}),
          ...(data ? { data } : {}),
        });
      },
    });

    expect(inMemory).toEqual(onCluster);
    // The story did what it says on the cluster.
    expect(onCluster[2]).toBe(409);
    expect(onCluster[4]).toMatchObject({
      generation: 2,
      spec: { paused: true },
      status: { state: 'STATE_STARTING' },
    });
    // Created, then a create of what exists refused; the replicas patched alone; the template's
    // annotations and the ConfigMap's data replaced whole; the cluster IP Service's spec too.
    expect(onCluster[9]).toBe(409);
    expect(onCluster[10]).toEqual([]);
    expect(onCluster[11]).toMatchObject({ replicas: 1 });
    expect(onCluster[12]).toEqual(['spec']);
    expect(onCluster[15]).toEqual(['data']);
    expect(onCluster[16]).toMatchObject({ template: { y: '2' }, data: { b: '2' } });
    expect(onCluster[17]).toEqual(['spec']);
  });
});
