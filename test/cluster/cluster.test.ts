import { existsSync } from 'node:fs';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
  type V1ConfigMap,
  type V1Pod,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { useCluster } from '../helpers/use-cluster.ts';
import { watchUntil } from '../helpers/watch.ts';
import { waitFor } from './wait.ts';
import { startCluster } from './cluster.ts';
import { GPU_TAINT } from './nodes.ts';
import { DEFAULT_LOG_LINES } from './pod-logs.ts';
import { STORAGE_CLASS_NAME } from './storage-simulator.ts';

const RESIZE_DELAY_MS = 1_500;
/** Short node Leases: a kwok started again after a crash takes the nodes over once they expire. */
const NODE_LEASE_SECONDS = 8;
const cluster = useCluster({ resizeDelayMs: RESIZE_DELAY_MS, nodeLeaseSeconds: NODE_LEASE_SECONDS });
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
let namespaceCount = 0;

/** A fresh namespace per test keeps tests independent on one cluster. */
async function newNamespace(): Promise<string> {
  const name = `smoke-${++namespaceCount}`;
  await cluster()
    .kubeConfig.makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name } } });
  return name;
}

function core(): CoreV1Api {
  return cluster().kubeConfig.makeApiClient(CoreV1Api);
}

function isRunningAndReady(pod: V1Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
  );
}

function podLabelled(app: string): (event: { object: V1Pod }) => boolean {
  return ({ object }) => object.metadata?.labels?.['app'] === app && isRunningAndReady(object);
}

function pod(name: string, resources: Record<string, string>, gpuToleration: boolean): V1Pod {
  return {
    metadata: { name },
    spec: {
      containers: [{ name: 'main', image: 'example.invalid/engine:1', resources: { limits: resources } }],
      ...(gpuToleration ? { tolerations: [{ ...GPU_TAINT, operator: 'Equal' }] } : {}),
    },
  };
}

describe('the local control plane', () => {
  test('kubectl lists three CPU nodes and two GPU nodes with nvidia.com/gpu and the GPU taint', async () => {
    const nodes = JSON.parse(await cluster().kubectl(['get', 'nodes', '-o', 'json'])) as {
      items: {
        metadata: { name: string };
        spec: { taints?: { key: string }[] };
        status: { allocatable: Record<string, string> };
      }[];
    };
    const gpu = nodes.items.filter((n) => n.status.allocatable['nvidia.com/gpu'] !== undefined);
    const cpu = nodes.items.filter((n) => n.status.allocatable['nvidia.com/gpu'] === undefined);
    expect(cpu).toHaveLength(3);
    expect(gpu).toHaveLength(2);
    for (const node of gpu) {
      expect(node.status.allocatable['nvidia.com/gpu']).toBe('4');
      expect(node.spec.taints?.map((t) => t.key)).toContain(GPU_TAINT.key);
    }
    for (const node of cpu) expect(node.spec.taints ?? []).toEqual([]);
  });

  test('kubectl version reports the same release for client and server', async () => {
    const version = JSON.parse(await cluster().kubectl(['version', '-o', 'json'])) as {
      clientVersion: { gitVersion: string };
      serverVersion: { gitVersion: string };
    };
    expect(version.serverVersion.gitVersion).toMatch(/^v1\.\d+\.\d+$/);
    expect(version.clientVersion.gitVersion).toBe(version.serverVersion.gitVersion);
  });

  test('a CRD applied with kubectl serves custom resources whose status is a separate subresource', async () => {
    const namespace = await newNamespace();
    await cluster().kubectl(['apply', '-f', '-'], WIDGET_CRD);
    await cluster().kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/widgets.smoke.test',
    ]);
    const custom = cluster().kubeConfig.makeApiClient(CustomObjectsApi);
    const resource = { group: 'smoke.test', version: 'v1', namespace, plural: 'widgets' };
    await custom.createNamespacedCustomObject({
      ...resource,
      body: {
        apiVersion: 'smoke.test/v1',
        kind: 'Widget',
        metadata: { name: 'w1' },
        spec: { size: 3 },
        status: { phase: 'Ignored' },
      },
    });
    await custom.patchNamespacedCustomObjectStatus(
      { ...resource, name: 'w1', body: { status: { phase: 'Ready' }, spec: { size: 99 } } },
      mergePatch,
    );
    const widget = (await custom.getNamespacedCustomObject({ ...resource, name: 'w1' })) as {
      spec: { size: number };
      status: { phase: string };
      metadata: { generation: number };
    };
    // Status sent with the object is dropped; spec sent to the status subresource is ignored.
    expect(widget.spec.size).toBe(3);
    expect(widget.status.phase).toBe('Ready');
    expect(widget.metadata.generation).toBe(1);
    await expect(
      custom.createNamespacedCustomObject({
        ...resource,
        body: { apiVersion: 'smoke.test/v1', kind: 'Widget', metadata: { name: 'w2' }, spec: { size: -1 } },
      }),
    ).rejects.toMatchObject({ code: 422 });
  });

  test('a Deployment pod is scheduled onto a simulated node and becomes Running and Ready', async () => {
    const namespace = await newNamespace();
    await cluster()
      .kubeConfig.makeApiClient(AppsV1Api)
      .createNamespacedDeployment({
        namespace,
        body: {
          metadata: { name: 'web' },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: 'web' } },
            template: {
              metadata: { labels: { app: 'web' } },
              spec: {
                containers: [
                  { name: 'web', image: 'example.invalid/web:1', resources: { requests: { cpu: '1' } } },
                ],
              },
            },
          },
        },
      });
    const running = await watchUntil<V1Pod>(
      cluster().kubeConfig,
      `/api/v1/namespaces/${namespace}/pods`,
      podLabelled('web'),
      {
        what: 'a Running and Ready pod of the Deployment',
      },
    );
    expect(running.spec?.nodeName).toMatch(/^cpu-node-\d$/);
    await watchUntil(
      cluster().kubeConfig,
      `/apis/apps/v1/namespaces/${namespace}/deployments`,
      ({ object }: { object: { status?: { readyReplicas?: number } } & KubernetesObject }) =>
        object.status?.readyReplicas === 2,
      { what: 'the Deployment to report 2 ready replicas' },
    );
  });

  test('kwok, killed, is started again and pods go on becoming Running', async () => {
    const kwok = (): { pid: number | undefined; running: boolean } | undefined =>
      cluster()
        .components()
        .find((c) => c.name === 'kwok');
    const before = kwok()?.pid;
    if (before === undefined) throw new Error('kwok is not running');
    process.kill(before, 'SIGKILL');
    await waitFor(() => Promise.resolve(kwok()?.pid !== before || undefined), { what: 'kwok started again' });
    // The new process runs (the supervisor reports "running" between restarts too).
    expect(processExists(kwok()?.pid)).toBe(true);
    const namespace = await newNamespace();
    await core().createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'after-restart', labels: { app: 'after-restart' } },
        spec: { containers: [{ name: 'c', image: 'example.invalid/c:1' }] },
      },
    });
    await watchUntil<V1Pod>(
      cluster().kubeConfig,
      `/api/v1/namespaces/${namespace}/pods`,
      podLabelled('after-restart'),
      // The new kwok takes the nodes over once its predecessor's node Leases expire.
      { what: 'the pod Running after kwok restarted', timeoutMs: 30_000 + 2 * NODE_LEASE_SECONDS * 1000 },
    );
  }, 120_000);

  test('a GPU pod with the toleration lands on a GPU node; without it, it stays Pending', async () => {
    const namespace = await newNamespace();
    await core().createNamespacedPod({ namespace, body: pod('tolerant', { 'nvidia.com/gpu': '2' }, true) });
    await core().createNamespacedPod({
      namespace,
      body: pod('intolerant', { 'nvidia.com/gpu': '1' }, false),
    });
    const path = `/api/v1/namespaces/${namespace}/pods`;
    const tolerant = await watchUntil<V1Pod>(
      cluster().kubeConfig,
      path,
      ({ object }) => object.metadata?.name === 'tolerant' && isRunningAndReady(object),
      { what: 'the tolerating GPU pod to run' },
    );
    expect(tolerant.spec?.nodeName).toMatch(/^gpu-node-\d$/);
    const intolerant = await watchUntil<V1Pod>(
      cluster().kubeConfig,
      path,
      ({ object }) =>
        object.metadata?.name === 'intolerant' &&
        object.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable') ===
          true,
      { what: 'the scheduler to mark the GPU pod without toleration unschedulable' },
    );
    expect(intolerant.status?.phase).toBe('Pending');
    expect(intolerant.spec?.nodeName).toBeUndefined();
    const message = intolerant.status?.conditions?.find((c) => c.type === 'PodScheduled')?.message ?? '';
    expect(message).toContain('untolerated taint');
    expect(message).toContain('Insufficient nvidia.com/gpu');
  });

  test('a pod deleted gracefully disappears, as kubelet would report it', async () => {
    const namespace = await newNamespace();
    await core().createNamespacedPod({ namespace, body: pod('short-lived', { cpu: '100m' }, false) });
    const path = `/api/v1/namespaces/${namespace}/pods`;
    await watchUntil<V1Pod>(cluster().kubeConfig, path, ({ object }) => isRunningAndReady(object), {
      what: 'the pod to run',
    });
    await watchUntil<V1Pod>(cluster().kubeConfig, path, ({ type }) => type === 'DELETED', {
      what: 'the pod to be removed after graceful deletion',
      trigger: () => core().deleteNamespacedPod({ namespace, name: 'short-lived' }),
    });
  });

  test('a simulated pod’s container logs are read through the apiserver, from kwok over verified TLS', async () => {
    const namespace = await newNamespace();
    const body = pod('logger', { cpu: '100m' }, false);
    body.spec?.containers.push({ name: 'sidecar', image: 'example.invalid/sidecar:1' });
    await core().createNamespacedPod({ namespace, body });
    await watchUntil<V1Pod>(
      cluster().kubeConfig,
      `/api/v1/namespaces/${namespace}/pods`,
      ({ object }) => isRunningAndReady(object),
      { what: 'the pod to run' },
    );
    // Every container logs kwok's default line until a test gives it its own.
    expect(await cluster().kubectl(['logs', '-n', namespace, 'logger', '-c', 'sidecar'])).toBe(
      `${DEFAULT_LOG_LINES.join('\n')}\n`,
    );

    await cluster().simulateLogs({ namespace, name: 'logger' }, { main: ['starting', 'listening on :8080'] });
    expect(await cluster().kubectl(['logs', '-n', namespace, 'logger', '-c', 'main'])).toBe(
      'starting\nlistening on :8080\n',
    );
    const read = (options: { container: string; tailLines?: number; limitBytes?: number }): Promise<string> =>
      core().readNamespacedPodLog({ namespace, name: 'logger', ...options });
    expect(await read({ container: 'main', tailLines: 1 })).toBe('listening on :8080\n');
    expect(await read({ container: 'main', limitBytes: 5 })).toBe('start');

    // A container the simulation gives no log file fails as a kubelet fails for a container
    // that has not started.
    await cluster().simulateLogs({ namespace, name: 'logger' }, { main: ['again'], sidecar: undefined });
    await expect(read({ container: 'sidecar' })).rejects.toMatchObject({ code: 400 });
    expect(await read({ container: 'main' })).toBe('again\n');
  });

  test('a PVC is bound by the simulated provisioner and later expanded by the simulated resizer', async () => {
    const namespace = await newNamespace();
    await core().createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    });
    const path = `/api/v1/namespaces/${namespace}/persistentvolumeclaims`;
    const bound = await watchUntil<V1PersistentVolumeClaim>(
      cluster().kubeConfig,
      path,
      ({ object }) => object.status?.phase === 'Bound',
      { what: 'the PVC to be bound' },
    );
    expect(bound.spec?.storageClassName).toBe(STORAGE_CLASS_NAME);
    expect(bound.status?.capacity?.['storage']).toBe('1Gi');

    const requested = Date.now();
    const resizing = await watchUntil<V1PersistentVolumeClaim>(
      cluster().kubeConfig,
      path,
      ({ object }) =>
        object.status?.conditions?.some((c) => c.type === 'Resizing' && c.status === 'True') === true,
      {
        what: 'the PVC to report Resizing',
        trigger: () =>
          core().patchNamespacedPersistentVolumeClaim(
            { namespace, name: 'data', body: { spec: { resources: { requests: { storage: '3Gi' } } } } },
            mergePatch,
          ),
      },
    );
    expect(resizing.status?.capacity?.['storage']).toBe('1Gi');
    const grown = await watchUntil<V1PersistentVolumeClaim>(
      cluster().kubeConfig,
      path,
      ({ object }) => object.status?.capacity?.['storage'] === '3221225472',
      { what: 'the PVC capacity to grow to 3Gi' },
    );
    expect(Date.now() - requested).toBeGreaterThanOrEqual(RESIZE_DELAY_MS);
    expect(grown.status?.conditions ?? []).toEqual([]);
    const volume = await core().readPersistentVolume({ name: bound.spec?.volumeName ?? '' });
    expect(volume.spec?.capacity?.['storage']).toBe('3221225472');
  });

  test('a StatefulSet gets a bound PVC per replica from its volume claim template', async () => {
    const namespace = await newNamespace();
    const body: V1StatefulSet = {
      metadata: { name: 'db' },
      spec: {
        serviceName: 'db',
        replicas: 1,
        selector: { matchLabels: { app: 'db' } },
        template: {
          metadata: { labels: { app: 'db' } },
          spec: {
            containers: [
              {
                name: 'db',
                image: 'example.invalid/db:1',
                volumeMounts: [{ name: 'data', mountPath: '/data' }],
              },
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } },
          },
        ],
      },
    };
    await cluster().kubeConfig.makeApiClient(AppsV1Api).createNamespacedStatefulSet({ namespace, body });
    const claim = await watchUntil<V1PersistentVolumeClaim>(
      cluster().kubeConfig,
      `/api/v1/namespaces/${namespace}/persistentvolumeclaims`,
      ({ object }) => object.metadata?.name === 'data-db-0' && object.status?.phase === 'Bound',
      { what: 'the StatefulSet PVC to be bound' },
    );
    expect(claim.status?.capacity?.['storage']).toBe('2Gi');
    await watchUntil<V1Pod>(cluster().kubeConfig, `/api/v1/namespaces/${namespace}/pods`, podLabelled('db'), {
      what: 'the StatefulSet pod to run with its volume',
    });
  });

  test('deleting a PVC releases its volume, which the simulated provisioner deletes', async () => {
    const namespace = await newNamespace();
    await core().createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'scratch' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    });
    const bound = await watchUntil<V1PersistentVolumeClaim>(
      cluster().kubeConfig,
      `/api/v1/namespaces/${namespace}/persistentvolumeclaims`,
      ({ object }) => object.status?.phase === 'Bound',
      { what: 'the PVC to be bound' },
    );
    const volumeName = bound.spec?.volumeName ?? '';
    await watchUntil<V1PersistentVolume>(
      cluster().kubeConfig,
      '/api/v1/persistentvolumes',
      ({ type, object }) => type === 'DELETED' && object.metadata?.name === volumeName,
      {
        what: `volume ${volumeName} to be deleted`,
        trigger: () => core().deleteNamespacedPersistentVolumeClaim({ namespace, name: 'scratch' }),
      },
    );
  });

  test('deleting an owner garbage-collects the objects it owns', async () => {
    const namespace = await newNamespace();
    const owner = await core().createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'owner' } },
    });
    await core().createNamespacedConfigMap({
      namespace,
      body: {
        metadata: {
          name: 'owned',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid ?? '' },
          ],
        },
      },
    });
    await watchUntil<V1ConfigMap>(
      cluster().kubeConfig,
      `/api/v1/namespaces/${namespace}/configmaps`,
      ({ type, object }) => type === 'DELETED' && object.metadata?.name === 'owned',
      {
        what: 'the garbage collector to delete the owned ConfigMap',
        trigger: () => core().deleteNamespacedConfigMap({ namespace, name: 'owner' }),
      },
    );
  });

  test('a watch sees objects being added, modified and deleted, in order', async () => {
    const namespace = await newNamespace();
    const seen: string[] = [];
    await watchUntil<V1ConfigMap>(
      cluster().kubeConfig,
      `/api/v1/namespaces/${namespace}/configmaps`,
      ({ type, object }) => {
        if (object.metadata?.name === 'watched') seen.push(`${type} ${object.data?.['v'] ?? '-'}`);
        return type === 'DELETED' && object.metadata?.name === 'watched';
      },
      {
        what: 'the watched ConfigMap to be deleted',
        trigger: async () => {
          const name = 'watched';
          await core().createNamespacedConfigMap({
            namespace,
            body: { metadata: { name }, data: { v: '1' } },
          });
          await core().patchNamespacedConfigMap({ namespace, name, body: { data: { v: '2' } } }, mergePatch);
          await core().deleteNamespacedConfigMap({ namespace, name });
        },
      },
    );
    expect(seen).toEqual(['ADDED 1', 'MODIFIED 2', 'DELETED 2']);
  });

  test('a second cluster runs beside the first on other ports and leaves nothing behind when stopped', async () => {
    const second = await startCluster({ nodes: { cpuNodes: 1, gpuNodes: 0, gpusPerNode: 0 } });
    const pids = second.components().map((c) => c.pid);
    try {
      expect(second.server).not.toBe(cluster().server);
      const nodes = await second.kubeConfig.makeApiClient(CoreV1Api).listNode();
      expect(nodes.items.map((n) => n.metadata?.name)).toEqual(['cpu-node-0']);
    } finally {
      await second.stop();
    }
    expect(second.components().every((c) => !c.running)).toBe(true);
    for (const pid of pids) expect(processExists(pid)).toBe(false);
    expect(existsSync(second.runDir)).toBe(false);
    // The first cluster is untouched.
    expect((await core().listNode()).items).toHaveLength(5);
  }, 120_000);
});

function processExists(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const WIDGET_CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.smoke.test
spec:
  group: smoke.test
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 0}
          status:
            type: object
            properties:
              phase: {type: string}
`;
