/**
 * The operator on the local control plane with simulated nodes, driven through the public API:
 * every engine kind from create to RUNNING, pause and resume keeping data, GPU placement, H2O
 * clusters, storage growth, failures and their recovery, duration limits, and deletion.
 */
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
  type V1LabelSelector,
  type V1NetworkPolicy,
  type V1Pod,
} from '@kubernetes/client-node';
import { fromJson, type Json } from '../../gateway/src/json/canonical.ts';
import { toCustomResource } from '../../gateway/src/store/objects.ts';
import { RESOURCE_KINDS } from '../../shared/resources.ts';
import { pino } from 'pino';
import type { Registry } from 'prom-client';
import { ClusterView } from '../../operator/src/kube/cluster-view.ts';
import { ENGINE_KINDS, startOperator, type Operator } from '../../operator/src/operator.ts';
import { waitFor } from '../cluster/wait.ts';
import { GATEWAY_POD, useApiServer } from '../helpers/api-server.ts';
import { watchUntil, watchUntilGone } from '../helpers/watch.ts';
import { GPU_TAINT } from '../cluster/nodes.ts';
import {
  GIB,
  ok,
  ownedBy,
  PROFILE as BASE_PROFILE,
  podsOf as livePods,
  reaches as reachesState,
  type EngineObject,
} from './fixtures.ts';

const NAMESPACE = 'operator-test';
const api = useApiServer({ namespace: NAMESPACE, operator: true, cluster: { resizeDelayMs: 1500 } });
const enc = encodeURIComponent;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const rest = (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> =>
  ok(api().rest(method, path, body));

const PROFILE = {
  ...BASE_PROFILE,
  yamlGpuTolerations: `- key: ${GPU_TAINT.key}\n  operator: Exists\n  effect: ${GPU_TAINT.effect}\n`,
};
/** DAI engines' pods get a label and an environment variable from their profile. */
const DAI_PROFILE = {
  ...PROFILE,
  yamlPodTemplateSpec: [
    'metadata:',
    '  labels:',
    '    team: data-science',
    'spec:',
    '  containers:',
    '  - name: driverless-ai',
    '    env:',
    '    - name: FROM_PROFILE',
    '      value: "yes"',
  ].join('\n'),
  baseConfiguration: { max_runtime_minutes: '60', enable_gpus: 'true' },
  configurationOverride: { disk_limit_gb: '100' },
};
const PROFILES: Record<string, object> = {
  daiEngineProfiles: DAI_PROFILE,
  h2oEngineProfiles: PROFILE,
  notebookEngineProfiles: PROFILE,
};

beforeAll(async () => {
  for (const [collection, profile] of Object.entries(PROFILES)) {
    const id = `${collection.replace(/s$/, '')}Id`;
    await rest('POST', `/v1/workspaces/global/${collection}?${id}=standard`, profile);
  }
  for (const version of ['1.10.5', '1.10.6', '1.11.0'])
    await rest('POST', `/v1/workspaces/global/daiEngineVersions?daiEngineVersionId=${version}`, {
      image: `dai:${version}`,
    });
  await rest('POST', '/v1/workspaces/global/h2oEngineVersions?h2oEngineVersionId=3.46.0.1', {
    image: 'h2o:3.46',
  });
  await rest('POST', '/v1/workspaces/global/notebookEngineImages?notebookEngineImageId=jupyter', {
    image: 'jupyter:1',
    enabled: true,
  });
});

type Engine = EngineObject;

const reaches = (plural: string, name: string, state: string, timeoutMs = 60_000): Promise<Engine> =>
  reachesState(api(), { namespace: NAMESPACE, plural, name }, state, timeoutMs);

/** Resolves once the engine is gone from the cluster. */
const gone = (plural: string, name: string): Promise<void> =>
  watchUntilGone(api().cluster.kubeConfig, `/apis/engine.h2o.ai/v1/namespaces/${NAMESPACE}/${plural}`, name, {
    what: `${name} deleted`,
    timeoutMs: 60_000,
  });

const selector = ownedBy;

const podsOf = (uid: string): Promise<V1Pod[]> => livePods(api().cluster.kubeConfig, NAMESPACE, uid);

/** name=uid of each claim, so a recreated claim (new uid) is told apart from a kept one. */
async function claimsOf(uid: string): Promise<string[]> {
  const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
  const list = await core.listNamespacedPersistentVolumeClaim({
    namespace: NAMESPACE,
    labelSelector: selector(uid),
  });
  return list.items.map((p) => `${p.metadata?.name ?? ''}=${p.metadata?.uid ?? ''}`);
}

/** The names of the live objects the operator made for the engine, as `Kind/name`. */
async function ownedObjects(uid: string): Promise<string[]> {
  return (await owned(uid)).flatMap(([kind, items]) =>
    items
      .filter((i) => i.metadata?.deletionTimestamp === undefined)
      .map((i) => `${kind}/${i.metadata?.name ?? ''}`),
  );
}

/** Every object the operator made for the engine, by kind. */
async function owned(uid: string): Promise<[string, KubernetesObject[]][]> {
  const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
  const apps = api().cluster.kubeConfig.makeApiClient(AppsV1Api);
  const labelSelector = selector(uid);
  const namespace = NAMESPACE;
  return [
    ['StatefulSet', (await apps.listNamespacedStatefulSet({ namespace, labelSelector })).items],
    ['Service', (await core.listNamespacedService({ namespace, labelSelector })).items],
    ['ConfigMap', (await core.listNamespacedConfigMap({ namespace, labelSelector })).items],
    ['Pod', (await core.listNamespacedPod({ namespace, labelSelector })).items],
    ['PVC', (await core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector })).items],
    ['NetworkPolicy', (await networkPolicies(labelSelector)).items],
  ];
}

const networkPolicies = (labelSelector: string): Promise<{ items: V1NetworkPolicy[] }> =>
  api()
    .cluster.kubeConfig.makeApiClient(NetworkingV1Api)
    .listNamespacedNetworkPolicy({ namespace: NAMESPACE, labelSelector });

/** Whether a label selector picks a pod with these labels (Kubernetes' rules, for the forms used here). */
function selects(selector: V1LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (selector === undefined) return false;
  const expressions = selector.matchExpressions ?? [];
  if (expressions.length > 0) throw new Error('matchExpressions are not expected in engine policies');
  return Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
}

/** The ports of `policy` a pod with `labels` in the same namespace may connect to: 'all', or the listed ports. */
function admitted(policy: V1NetworkPolicy, labels: Record<string, string>): 'all' | number[] {
  const ports: number[] = [];
  for (const rule of policy.spec?.ingress ?? []) {
    if (
      !(rule._from ?? []).some(
        (peer) => peer.namespaceSelector === undefined && selects(peer.podSelector, labels),
      )
    )
      continue;
    if (rule.ports === undefined) return 'all';
    ports.push(...rule.ports.map((p) => Number(p.port)));
  }
  return ports;
}

async function patchEngine(plural: string, name: string, body: object): Promise<void> {
  await api()
    .cluster.kubeConfig.makeApiClient(CustomObjectsApi)
    .patchNamespacedCustomObject(
      { group: 'engine.h2o.ai', version: 'v1', namespace: NAMESPACE, plural, name, body },
      mergePatch,
    );
}

const DAI = {
  profile: 'workspaces/global/daiEngineProfiles/standard',
  daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6',
};
const uidOf = (created: Record<string, unknown>, field: string): string =>
  (created[field] as { uid: string }).uid;

describe('the operator', () => {
  test('runs a DAI engine, pauses it keeping its volume, resumes it, and deletes everything it made', async () => {
    const created = await rest('POST', '/v1/workspaces/op/daiEngines?daiEngineId=e1', {
      ...DAI,
      config: { max_runtime_minutes: '30', port: '80' },
    });
    const uid = uidOf(created, 'daiEngine');
    await reaches('daiengines', 'op.e1', 'STATE_RUNNING');
    const engine = await rest('GET', `/v1/${enc('workspaces/op/daiEngines/e1')}`);
    expect(engine['daiEngine']).toMatchObject({
      state: 'STATE_RUNNING',
      reconciling: false,
      apiUrl: `${api().gateway.restUrl}/workspaces/op/daiEngines/e1/`,
      loginUrl: `${api().gateway.restUrl}/workspaces/op/daiEngines/e1/openid/login`,
      currentRunningDuration: expect.stringMatching(/^\d+s$/) as unknown,
    });
    const [pod] = await podsOf(uid);
    expect(pod?.spec?.containers[0]).toMatchObject({
      image: 'dai:1.10.6',
      resources: { limits: { cpu: '1', memory: String(2 * GIB) } },
      env: expect.arrayContaining([{ name: 'FROM_PROFILE', value: 'yes' }]) as unknown,
    });
    expect(pod?.metadata?.labels?.['team']).toBe('data-science');
    // The final configuration: the override beats everything, reserved keys keep the core value.
    const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
    const [configMap] = (
      await core.listNamespacedConfigMap({ namespace: NAMESPACE, labelSelector: selector(uid) })
    ).items;
    const toml = configMap?.data?.['config.toml'] ?? '';
    expect(toml).toContain('max_runtime_minutes = 30\n');
    expect(toml).toContain('disk_limit_gb = 100\n');
    expect(toml).toContain('port = 12345\n');
    expect(toml).toContain('enable_gpus = true\n');
    const volumes = await claimsOf(uid);
    expect(volumes).toHaveLength(1);

    await rest('POST', `/v1/${enc('workspaces/op/daiEngines/e1')}:pause`);
    await reaches('daiengines', 'op.e1', 'STATE_PAUSED');
    expect(await podsOf(uid)).toHaveLength(0);
    expect(await claimsOf(uid)).toEqual(volumes);

    // An upgrade while paused swaps the image and keeps the data.
    await rest('POST', `/v1/${enc('workspaces/op/daiEngines/e1')}:upgradeDAIEngineVersion`, {
      newDaiEngineVersion: 'workspaces/global/daiEngineVersions/1.11.0',
    });
    await rest('POST', `/v1/${enc('workspaces/op/daiEngines/e1')}:resume`);
    await reaches('daiengines', 'op.e1', 'STATE_RUNNING');
    expect((await podsOf(uid))[0]?.spec?.containers[0]?.image).toBe('dai:1.11.0');
    expect(await claimsOf(uid)).toEqual(volumes);
    const resumed = await rest('GET', `/v1/${enc('workspaces/op/daiEngines/e1')}`);
    expect((resumed['daiEngine'] as { resumeTime?: string }).resumeTime).toBeDefined();

    await rest('DELETE', `/v1/${enc('workspaces/op/daiEngines/e1')}`);
    await gone('daiengines', 'op.e1');
    expect(await ownedObjects(uid)).toEqual([]);
  });

  test('runs an engine written in the earlier layout, with its snapshots in status', async () => {
    const draft = await writeInEarlierLayout(api().cluster.kubeConfig, NAMESPACE, 'earlier');
    await reaches('daiengines', 'op.earlier', 'STATE_RUNNING');
    const engine = await rest('GET', `/v1/${enc('workspaces/op/daiEngines/earlier')}`);
    expect(engine['daiEngine']).toMatchObject({
      state: 'STATE_RUNNING',
      creator: (draft['daiEngine'] as { creator: string }).creator,
      daiEngineVersionInfo: { image: 'dai:1.10.6' },
    });
    await rest('DELETE', `/v1/${enc('workspaces/op/daiEngines/earlier')}`);
    await gone('daiengines', 'op.earlier');
  });

  test('puts GPU engines on GPU nodes with the profile’s tolerations, and CPU engines elsewhere', async () => {
    const gpu = await rest('POST', '/v1/workspaces/op/daiEngines?daiEngineId=gpu', { ...DAI, gpu: 1 });
    const cpu = await rest('POST', '/v1/workspaces/op/daiEngines?daiEngineId=cpu', DAI);
    await reaches('daiengines', 'op.gpu', 'STATE_RUNNING');
    await reaches('daiengines', 'op.cpu', 'STATE_RUNNING');
    const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
    const placement = async (uid: string): Promise<{ taints: string[]; pod: V1Pod | undefined }> => {
      const [pod] = await podsOf(uid);
      const node = await core.readNode({ name: pod?.spec?.nodeName ?? '' });
      return { taints: (node.spec?.taints ?? []).map((t) => t.key), pod };
    };
    const onGpu = await placement(uidOf(gpu, 'daiEngine'));
    const onCpu = await placement(uidOf(cpu, 'daiEngine'));
    expect(onGpu.taints).toContain(GPU_TAINT.key);
    expect(onCpu.taints).not.toContain(GPU_TAINT.key);
    expect(onGpu.pod?.spec?.containers[0]?.resources?.limits).toMatchObject({ 'nvidia.com/gpu': '1' });
    expect(onGpu.pod?.spec?.tolerations).toEqual(
      expect.arrayContaining([expect.objectContaining({ key: GPU_TAINT.key, operator: 'Exists' })]),
    );
    expect(onCpu.pod?.spec?.tolerations ?? []).not.toEqual(
      expect.arrayContaining([expect.objectContaining({ key: GPU_TAINT.key })]),
    );
  });

  test('runs an H2O engine of 3 nodes as one H2O-3 cloud behind a headless service, clients reaching its leader, and terminates it for good', async () => {
    const created = await rest('POST', '/v1/workspaces/op/h2oEngines?h2oEngineId=h1', {
      profile: 'workspaces/global/h2oEngineProfiles/standard',
      h2oEngineVersion: 'workspaces/global/h2oEngineVersions/3.46.0.1',
      nodeCount: 3,
    });
    const uid = uidOf(created, 'h2oEngine');
    await reaches('h2oengines', 'op.h1', 'STATE_RUNNING');
    const pods = await podsOf(uid);
    expect(pods).toHaveLength(3);
    const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
    const services = (
      await core.listNamespacedService({ namespace: NAMESPACE, labelSelector: selector(uid) })
    ).items;
    const headless = services.find((s) => s.spec?.clusterIP === 'None');
    const client = services.find((s) => s.spec?.clusterIP !== 'None');
    // The nodes find each other by the headless service, before any of them is ready.
    expect(headless?.spec?.publishNotReadyAddresses).toBe(true);
    expect(new Set(pods.map((p) => p.spec?.subdomain))).toEqual(new Set([headless?.metadata?.name]));
    const env = (name: string): (string | undefined)[] =>
      pods.map((p) => p.spec?.containers[0]?.env?.find((e) => e.name === name)?.value);
    expect(env('H2O_NODE_EXPECTED_COUNT')).toEqual(['3', '3', '3']);
    expect(new Set(env('H2O_KUBERNETES_SERVICE_DNS'))).toEqual(
      new Set([`${headless?.metadata?.name ?? ''}.${NAMESPACE}.svc.cluster.local`]),
    );
    expect(new Set(env('H2O_CONTEXT_PATH'))).toEqual(new Set(['/workspaces/op/h2oEngines/h1']));
    // Clients go through a service of ready pods: only the leader of a formed cloud is ready.
    expect(client?.spec?.publishNotReadyAddresses ?? false).toBe(false);
    expect(client?.spec?.ports?.map((p) => p.port)).toEqual([54321]);
    expect(pods[0]?.spec?.containers[0]?.readinessProbe?.httpGet).toMatchObject({
      path: '/kubernetes/isLeaderNode',
      port: 8081,
    });

    await rest('POST', `/v1/${enc('workspaces/op/h2oEngines/h1')}:terminate`);
    await reaches('h2oengines', 'op.h1', 'STATE_TERMINATED');
    expect(await podsOf(uid)).toHaveLength(0);
    const resume = await api().rest('POST', `/v1/${enc('workspaces/op/h2oEngines/h1')}:resume`);
    expect(resume.status).not.toBe(200);
    // Deleting the engine deletes both its services with the rest.
    await rest('DELETE', `/v1/${enc('workspaces/op/h2oEngines/h1')}`);
    await gone('h2oengines', 'op.h1');
    expect(await ownedObjects(uid)).toEqual([]);
  });

  test('isolates engines: no API token, no privilege escalation, and a NetworkPolicy that admits the gateway to the engine’s port and no other engine', async () => {
    const dai = uidOf(await rest('POST', '/v1/workspaces/op/daiEngines?daiEngineId=iso', DAI), 'daiEngine');
    const notebook = uidOf(
      await rest('POST', '/v1/workspaces/op/notebookEngines?notebookEngineId=iso', {
        profile: 'workspaces/global/notebookEngineProfiles/standard',
        notebookImage: 'workspaces/global/notebookEngineImages/jupyter',
      }),
      'notebookEngine',
    );
    await reaches('daiengines', 'op.iso', 'STATE_RUNNING');
    await reaches('notebookengines', 'op.iso', 'STATE_RUNNING');
    const [daiPod] = await podsOf(dai);
    const [notebookPod] = await podsOf(notebook);
    for (const pod of [daiPod, notebookPod]) {
      expect(pod?.spec?.automountServiceAccountToken).toBe(false);
      expect(pod?.spec?.securityContext?.seccompProfile).toEqual({ type: 'RuntimeDefault' });
      expect(pod?.spec?.containers[0]?.securityContext?.allowPrivilegeEscalation).toBe(false);
      // No token volume was injected.
      expect(pod?.spec?.volumes?.filter((v) => v.projected !== undefined) ?? []).toEqual([]);
    }
    const [daiPolicy] = (await networkPolicies(selector(dai))).items;
    const [notebookPolicy] = (await networkPolicies(selector(notebook))).items;
    if (daiPolicy === undefined || notebookPolicy === undefined)
      throw new Error('An engine has no NetworkPolicy');
    const labels = (pod: V1Pod | undefined): Record<string, string> => pod?.metadata?.labels ?? {};
    // Each policy guards its own engine's pods only.
    expect(selects(daiPolicy.spec?.podSelector, labels(daiPod))).toBe(true);
    expect(selects(daiPolicy.spec?.podSelector, labels(notebookPod))).toBe(false);
    expect(daiPolicy.spec?.policyTypes).toEqual(['Ingress']);
    // The notebook (a user's code) reaches nothing of the DAI engine, nor the DAI engine the notebook.
    expect(admitted(daiPolicy, labels(notebookPod))).toEqual([]);
    expect(admitted(notebookPolicy, labels(daiPod))).toEqual([]);
    // The gateway reaches each engine's port only; an engine's own pods reach each other fully.
    expect(admitted(daiPolicy, GATEWAY_POD)).toEqual([12345]);
    expect(admitted(notebookPolicy, GATEWAY_POD)).toEqual([8888]);
    expect(admitted(daiPolicy, labels(daiPod))).toBe('all');
    // Deleted with the engine.
    await rest('DELETE', `/v1/${enc('workspaces/op/notebookEngines/iso')}`);
    await gone('notebookengines', 'op.iso');
    expect(await ownedObjects(notebook)).toEqual([]);
    await rest('DELETE', `/v1/${enc('workspaces/op/daiEngines/iso')}`);
  });

  test('grows a notebook engine’s volume, reporting storageResizing until it is done', async () => {
    const created = await rest('POST', '/v1/workspaces/op/notebookEngines?notebookEngineId=n1', {
      profile: 'workspaces/global/notebookEngineProfiles/standard',
      notebookImage: 'workspaces/global/notebookEngineImages/jupyter',
    });
    await reaches('notebookengines', 'op.n1', 'STATE_RUNNING');
    const uid = uidOf(created, 'notebookEngine');
    const before = await claimsOf(uid);
    const path = `/apis/engine.h2o.ai/v1/namespaces/${NAMESPACE}/notebookengines`;
    const query = { fieldSelector: 'metadata.name=op.n1' };
    await watchUntil<Engine>(
      api().cluster.kubeConfig,
      path,
      (e) => e.object.status?.storageResizing === true,
      {
        what: 'resizing',
        query,
        trigger: () =>
          rest('POST', `/v1/${enc('workspaces/op/notebookEngines/n1')}:resizeStorage`, {
            newStorageBytes: String(4 * GIB),
          }),
      },
    );
    await watchUntil<Engine>(
      api().cluster.kubeConfig,
      path,
      (e) => e.object.status?.storageResizing === false,
      {
        what: 'resized',
        query,
      },
    );
    const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
    const [claim] = (
      await core.listNamespacedPersistentVolumeClaim({ namespace: NAMESPACE, labelSelector: selector(uid) })
    ).items;
    expect(claim?.status?.capacity?.['storage']).toBe(String(4 * GIB));
    expect(await claimsOf(uid)).toEqual(before);
  });

  test('reports a crashing engine FAILED with its reason, stops it, and a resume brings it back', async () => {
    const created = await rest('POST', '/v1/workspaces/op/notebookEngines?notebookEngineId=crash', {
      profile: 'workspaces/global/notebookEngineProfiles/standard',
      notebookImage: 'workspaces/global/notebookEngineImages/jupyter',
    });
    await reaches('notebookengines', 'op.crash', 'STATE_RUNNING');
    const uid = uidOf(created, 'notebookEngine');
    const [pod] = await podsOf(uid);
    const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
    // The simulated node reports the container killed for lack of memory, again and again.
    await core.patchNamespacedPod(
      {
        name: pod?.metadata?.name ?? '',
        namespace: NAMESPACE,
        body: { metadata: { annotations: { 'crash-loop.stage.test.aiem/reason': 'OOMKilled' } } },
      },
      mergePatch,
    );
    await reaches('notebookengines', 'op.crash', 'STATE_FAILED');
    const failed = await rest('GET', `/v1/${enc('workspaces/op/notebookEngines/crash')}`);
    expect(failed['notebookEngine']).toMatchObject({
      state: 'STATE_FAILED',
      failureReason: 'FAILURE_REASON_OOM_KILLED',
      reconciling: false,
    });
    // kubectl shows the cause and the container's report too.
    const object = await reaches('notebookengines', 'op.crash', 'STATE_FAILED');
    const failedCondition = object.status?.conditions?.find((c) => c.type === 'Failed');
    expect(failedCondition).toMatchObject({ status: 'True', reason: 'OOMKilled' });
    expect(failedCondition?.message).toContain('container "notebook" was killed at its memory limit');
    // A failed engine holds no pods: they are stopped until the user resumes.
    await watchUntilGone(
      api().cluster.kubeConfig,
      `/api/v1/namespaces/${NAMESPACE}/pods`,
      pod?.metadata?.name ?? '',
      {
        what: 'the crashing pod stopped',
      },
    );

    await rest('POST', `/v1/${enc('workspaces/op/notebookEngines/crash')}:resume`);
    await reaches('notebookengines', 'op.crash', 'STATE_RUNNING');
    const recovered = await rest('GET', `/v1/${enc('workspaces/op/notebookEngines/crash')}`);
    expect(recovered['notebookEngine']).toMatchObject({ failureReason: 'FAILURE_REASON_UNSPECIFIED' });
    expect(await podsOf(uid)).toHaveLength(1);
  });

  test('says why an engine whose pods no node takes is still starting, in the scheduler’s words', async () => {
    await rest('POST', '/v1/workspaces/global/h2oEngineProfiles?h2oEngineProfileId=nowhere', {
      ...PROFILE,
      yamlPodTemplateSpec: 'spec:\n  nodeSelector:\n    pool: none-such\n',
    });
    await rest('POST', '/v1/workspaces/op/h2oEngines?h2oEngineId=nowhere', {
      profile: 'workspaces/global/h2oEngineProfiles/nowhere',
      h2oEngineVersion: 'workspaces/global/h2oEngineVersions/3.46.0.1',
      nodeCount: 2,
    });
    const unschedulable = /^0\/\d+ nodes are available: .*node affinity\/selector/;
    const waiting = await watchUntil<Engine>(
      api().cluster.kubeConfig,
      `/apis/engine.h2o.ai/v1/namespaces/${NAMESPACE}/h2oengines`,
      (e) =>
        e.object.status?.conditions?.some(
          (c) => c.type === 'Ready' && c.reason === 'Unschedulable' && unschedulable.test(c.message ?? ''),
        ) === true,
      { what: 'the engine unschedulable', query: { fieldSelector: 'metadata.name=op.nowhere' } },
    );
    expect(waiting.status?.state).toBe('STATE_STARTING');
    expect(waiting.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    await rest('DELETE', `/v1/${enc('workspaces/op/h2oEngines/nowhere')}`);
    await gone('h2oengines', 'op.nowhere');
  });

  test('reports FAILED with the reason when the profile’s pod template breaks the workload', async () => {
    await rest('POST', '/v1/workspaces/global/h2oEngineProfiles?h2oEngineProfileId=broken', {
      ...PROFILE,
      // A sidecar without an image: Kubernetes refuses such a pod.
      yamlPodTemplateSpec: 'spec:\n  containers:\n  - name: sidecar\n',
    });
    await rest('POST', '/v1/workspaces/op/h2oEngines?h2oEngineId=broken', {
      profile: 'workspaces/global/h2oEngineProfiles/broken',
      h2oEngineVersion: 'workspaces/global/h2oEngineVersions/3.46.0.1',
    });
    const failed = await reaches('h2oengines', 'op.broken', 'STATE_FAILED');
    const ready = failed.status?.conditions?.find((c) => c.type === 'Ready') as
      { reason: string; message?: string } | undefined;
    expect(ready?.reason).toBe('InvalidWorkload');
    expect(ready?.message).toContain('image');
  });

  test('pauses a DAI engine left idle past its limit, and resets idleness on reported activity', async () => {
    await rest('POST', '/v1/workspaces/op/daiEngines?daiEngineId=idle', { ...DAI, maxIdleDuration: '4s' });
    await reaches('daiengines', 'op.idle', 'STATE_RUNNING');
    // The engine reports user activity: idleness starts over from that moment.
    const activity = new Date().toISOString();
    await patchEngine('daiengines', 'op.idle', {
      metadata: { annotations: { 'engine.h2o.ai/last-activity-time': activity } },
    });
    const paused = await reaches('daiengines', 'op.idle', 'STATE_PAUSED', 30_000);
    const stopped = paused.status?.conditions?.find((c) => c.type === 'Stopped');
    expect(stopped?.reason).toBe('MaxIdleDurationExceeded');
    const pausedAt = Date.now();
    expect(pausedAt - Date.parse(activity)).toBeGreaterThanOrEqual(4000);
    const engine = await rest('GET', `/v1/${enc('workspaces/op/daiEngines/idle')}`);
    expect(engine['daiEngine']).toMatchObject({ state: 'STATE_PAUSED', currentIdleDuration: '0s' });
  });

  test('pauses a notebook and terminates an H2O engine left idle when their activity probes get no answer (simulated pods), on time', async () => {
    await rest('POST', '/v1/workspaces/op/notebookEngines?notebookEngineId=idle', {
      profile: 'workspaces/global/notebookEngineProfiles/standard',
      notebookImage: 'workspaces/global/notebookEngineImages/jupyter',
      maxIdleDuration: '4s',
    });
    await rest('POST', '/v1/workspaces/op/h2oEngines?h2oEngineId=idle', {
      profile: 'workspaces/global/h2oEngineProfiles/standard',
      h2oEngineVersion: 'workspaces/global/h2oEngineVersions/3.46.0.1',
      maxIdleDuration: '4s',
    });
    // At the deadline each is asked, at its pod's address, whether it worked without traffic; a
    // simulated pod's address answers nothing an engine would, so the probe fails and the engine
    // is stopped as idle, within moments of its deadline (the probe waits at most a second for a
    // connection).
    for (const [plural, state] of [
      ['notebookengines', 'STATE_PAUSED'],
      ['h2oengines', 'STATE_TERMINATED'],
    ] as const) {
      const stopped = (await reaches(plural, 'op.idle', state, 30_000)) as Engine & {
        metadata: { annotations?: Record<string, string> };
        status: { runningSince?: string };
      };
      const condition = stopped.status.conditions?.find((c) => c.type === 'Stopped') as
        { reason: string; lastTransitionTime: string } | undefined;
      expect(condition?.reason).toBe('MaxIdleDurationExceeded');
      // Nothing recorded activity: no probe answered.
      expect(stopped.metadata.annotations?.['engine.h2o.ai/last-activity-time']).toBeUndefined();
      // Wanted stopped once idle for its limit after it became RUNNING, plus the failed probe.
      const idleFor =
        Date.parse(condition?.lastTransitionTime ?? '') - Date.parse(stopped.status.runningSince ?? '');
      expect(idleFor).toBeGreaterThanOrEqual(4000);
      expect(idleFor).toBeLessThan(7000);
    }
  });

  test('terminates an H2O engine that runs past its maximum running duration', async () => {
    await rest('POST', '/v1/workspaces/op/h2oEngines?h2oEngineId=limited', {
      profile: 'workspaces/global/h2oEngineProfiles/standard',
      h2oEngineVersion: 'workspaces/global/h2oEngineVersions/3.46.0.1',
      maxRunningDuration: '3s',
    });
    const terminated = await reaches('h2oengines', 'op.limited', 'STATE_TERMINATED', 30_000);
    expect(terminated.status?.conditions?.find((c) => c.type === 'Stopped')?.reason).toBe(
      'MaxRunningDurationExceeded',
    );
  });

  test('reports disk usage for DAI 1.10.6 and later from the engine’s report, and none before', async () => {
    await rest('POST', '/v1/workspaces/op/daiEngines?daiEngineId=disk', DAI);
    await rest('POST', '/v1/workspaces/op/daiEngines?daiEngineId=old', {
      ...DAI,
      daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.5',
    });
    await reaches('daiengines', 'op.disk', 'STATE_RUNNING');
    await reaches('daiengines', 'op.old', 'STATE_RUNNING');
    const report = {
      'engine.h2o.ai/disk-usage': JSON.stringify({ totalBytes: '2147483648', freeBytes: '1073741824' }),
    };
    for (const name of ['op.old', 'op.disk'])
      await patchEngine('daiengines', name, { metadata: { annotations: report } });
    const reported = await watchUntil<KubernetesObject & { status?: { freeDiskSizeBytes?: string } }>(
      api().cluster.kubeConfig,
      `/apis/engine.h2o.ai/v1/namespaces/${NAMESPACE}/daiengines`,
      (e) => e.object.status?.freeDiskSizeBytes === '1073741824',
      { what: 'disk usage reported', query: { fieldSelector: 'metadata.name=op.disk' } },
    );
    await api().sees('daiengines', reported);
    const fresh = await rest('GET', `/v1/${enc('workspaces/op/daiEngines/disk')}`);
    expect(fresh['daiEngine']).toMatchObject({
      totalDiskSizeBytes: '2147483648',
      freeDiskSizeBytes: '1073741824',
    });
    const old = await rest('GET', `/v1/${enc('workspaces/op/daiEngines/old')}`);
    expect(old['daiEngine']).not.toHaveProperty('freeDiskSizeBytes');
    expect(old['daiEngine']).not.toHaveProperty('totalDiskSizeBytes');
  });

  test('an unchanged running engine makes the operator write nothing, however often it reconciles it', async () => {
    const created = await rest('POST', '/v1/workspaces/op/daiEngines?daiEngineId=quiet', DAI);
    const uid = uidOf(created, 'daiEngine');
    await reaches('daiengines', 'op.quiet', 'STATE_RUNNING');
    const operator = api().operator;
    if (operator === undefined) throw new Error('the operator is not running');
    const versions = async (): Promise<Record<string, string | undefined>> => {
      const custom = api().cluster.kubeConfig.makeApiClient(CustomObjectsApi);
      const target = { group: 'engine.h2o.ai', version: 'v1', namespace: NAMESPACE, plural: 'daiengines' };
      const engine = (await custom.getNamespacedCustomObject({
        ...target,
        name: 'op.quiet',
      })) as EngineObject;
      // Pods are the simulated kubelet's to change, not the operator's.
      const objects: [string, KubernetesObject[]][] = [
        ...(await owned(uid)).filter(([kind]) => kind !== 'Pod'),
        ['DAIEngine', [engine]],
      ];
      return Object.fromEntries(
        objects.flatMap(([kind, items]) =>
          items.map((o) => [`${kind}/${o.metadata?.name ?? ''}`, o.metadata?.resourceVersion]),
        ),
      );
    };
    // Settled: RUNNING is reported and nothing is left to do.
    await waitFor(async () => (await idle(operator.registry, 'DAIEngine')) || undefined, {
      what: 'an idle controller',
    });
    const before = await versions();
    expect(Object.keys(before).map((key) => key.split('/')[0])).toEqual([
      'StatefulSet',
      'Service',
      'ConfigMap',
      'PVC',
      'NetworkPolicy',
      'DAIEngine',
    ]);
    // Changes the operator does not act on, each of which makes it reconcile the engine again.
    const [pod] = await livePods(api().cluster.kubeConfig, NAMESPACE, uid);
    const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
    const reconciled = await metric(operator.registry, 'aiem_reconcile_total', 'DAIEngine');
    const calls = await apiserverCalls(operator.registry);
    let last = '';
    for (let i = 0; i < 3; i++) {
      const touched = await core.patchNamespacedPod(
        {
          name: pod?.metadata?.name ?? '',
          namespace: NAMESPACE,
          body: { metadata: { labels: { touched: String(i) } } },
        },
        mergePatch,
      );
      last = touched.metadata?.resourceVersion ?? '';
    }
    // Once the operator's copy holds the last change (it keeps the version, not the label it
    // never reads), the engine has been queued; once the controller is idle after that, the
    // reconcile has run.
    const seenLast = (): boolean =>
      operator.view.pods.of(uid).some((p) => p.metadata?.resourceVersion === last);
    await waitFor(
      async () =>
        (seenLast() &&
          (await metric(operator.registry, 'aiem_reconcile_total', 'DAIEngine')) > reconciled &&
          (await idle(operator.registry, 'DAIEngine'))) ||
        undefined,
      { what: 'the engine reconciled again' },
    );
    // No request at all (not even an apply that would change nothing), and nothing changed.
    expect(await apiserverCalls(operator.registry)).toBe(calls);
    expect(await versions()).toEqual(before);
  });
});

describe('an operator that may not act', () => {
  const FENCED = 'operator-fenced';
  const gate = { open: false };
  let fenced: Operator | undefined;
  afterAll(async () => {
    await fenced?.stop();
  });

  test('writes nothing while its leadership has lapsed, and runs the engine once it may act again', async () => {
    const kubeConfig = api().cluster.kubeConfig;
    await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: FENCED } } });
    fenced = await startOperator({
      kubeConfig,
      namespace: FENCED,
      settings: { publicUrl: 'http://127.0.0.1' },
      log: pino({ level: 'silent' }),
      mayAct: () => gate.open,
    });
    // An engine as the API stores it, written straight to the fenced operator's namespace.
    await writeInEarlierLayout(kubeConfig, FENCED, 'fenced');
    const registry = fenced.registry;
    // It reconciled the engine, and each attempt to write was refused before leaving the process.
    await waitFor(
      async () => (await metric(registry, 'aiem_reconcile_errors_total', 'DAIEngine')) >= 2 || undefined,
      { what: 'refused reconciles' },
    );
    const apps = kubeConfig.makeApiClient(AppsV1Api);
    const objects = kubeConfig.makeApiClient(CustomObjectsApi);
    const target = { group: 'engine.h2o.ai', version: 'v1', namespace: FENCED, plural: 'daiengines' };
    expect((await apps.listNamespacedStatefulSet({ namespace: FENCED })).items).toEqual([]);
    const untouched = (await objects.getNamespacedCustomObject({
      ...target,
      name: 'op.fenced',
    })) as EngineObject & {
      metadata: { finalizers?: string[] };
    };
    expect(untouched.metadata.finalizers ?? []).toEqual([]);
    expect((await registry.getSingleMetric('aiem_kube_requests_total')?.get())?.values ?? []).toEqual([]);
    gate.open = true;
    await watchUntil<EngineObject>(
      kubeConfig,
      `/apis/engine.h2o.ai/v1/namespaces/${FENCED}/daiengines`,
      (e) => e.object.status?.state === 'STATE_RUNNING',
      { what: 'the fenced engine running', timeoutMs: 60_000 },
    );
    await objects.deleteNamespacedCustomObject({ ...target, name: 'op.fenced' });
    await watchUntilGone(kubeConfig, `/apis/engine.h2o.ai/v1/namespaces/${FENCED}/daiengines`, 'op.fenced', {
      what: 'the fenced engine gone',
    });
  });
});

describe('the operator’s watched copies', () => {
  test('hold every object of a collection listed over several pages', async () => {
    const namespace = 'operator-copies';
    const kubeConfig = api().cluster.kubeConfig;
    const core = kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    // More than two list pages (500 each) of objects owned by one engine.
    const count = 1_100;
    const labels = { 'engine.h2o.ai/engine-kind': 'DAIEngine', 'engine.h2o.ai/engine-uid': 'u-many' };
    for (let start = 0; start < count; start += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, count - start) }, (_, i) =>
          core.createNamespacedConfigMap({
            namespace,
            body: {
              metadata: { name: `owned-${start + i}`, labels, annotations: { 'engine.h2o.ai/engine': 'e' } },
            },
          }),
        ),
      );
    const view = new ClusterView(
      { kubeConfig, namespace, log: pino({ level: 'silent' }), kinds: ENGINE_KINDS },
      () => undefined,
    );
    try {
      await view.start();
      expect(view.configMaps.of('u-many')).toHaveLength(count);
    } finally {
      await view.stop();
    }
  });
});

/**
 * Writes DAI engine `id` of workspace `op` straight to `namespace` as the API would store it,
 * but in the earlier layout (output fields in status, written second); answers the API's draft.
 */
async function writeInEarlierLayout(
  kubeConfig: KubeConfig,
  namespace: string,
  id: string,
): Promise<Record<string, unknown>> {
  // What the API answers for a create it only validates: the engine it would store.
  const draft = await rest('POST', `/v1/workspaces/op/daiEngines?daiEngineId=${id}&validateOnly=true`, DAI);
  const kind = RESOURCE_KINDS.DAIEngine;
  const message = fromJson(kind.message, draft['daiEngine'] as Json) as { name: string };
  const { status, ...object } = toCustomResource(kind, message, namespace, { paused: false });
  const objects = kubeConfig.makeApiClient(CustomObjectsApi);
  const target = { group: 'engine.h2o.ai', version: 'v1', namespace, plural: 'daiengines' };
  await objects.createNamespacedCustomObject({ ...target, body: object });
  await objects.patchNamespacedCustomObjectStatus(
    { ...target, name: `op.${id}`, body: { status } },
    mergePatch,
  );
  return draft;
}

/** A metric of the operator's registry for one controller; 0 before its first value. */
async function metric(registry: Registry, name: string, controller: string): Promise<number> {
  const found = registry.getSingleMetric(name);
  const values = found === undefined ? [] : (await found.get()).values;
  return values.find((v) => v.labels['controller'] === controller)?.value ?? 0;
}

/** Calls the operator has made to the apiserver (all of them writes: it reads its watches). */
async function apiserverCalls(registry: Registry): Promise<number> {
  const values = (await registry.getSingleMetric('aiem_kube_requests_total')?.get())?.values ?? [];
  return values.reduce((sum, v) => sum + v.value, 0);
}

/** Whether a controller has nothing queued and nothing running. */
async function idle(registry: Registry, controller: string): Promise<boolean> {
  return (
    (await metric(registry, 'aiem_queue_depth', controller)) === 0 &&
    (await metric(registry, 'aiem_reconciles_in_flight', controller)) === 0
  );
}
