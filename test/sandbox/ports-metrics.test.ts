/**
 * PortService and MetricsService over REST against a real gateway, operator and cluster, where
 * metrics-server is not running: a sandbox engine from an image and a template, its ports as
 * Kubernetes objects, and its metrics with the disk measured in the sandbox. The Python client
 * test (test/compat/sandbox_ports_metrics.py) covers the same services with metrics-server.
 */
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { useApiServer, type ApiServer } from '../helpers/api-server.ts';
import { waitFor } from '../cluster/wait.ts';
import { SANDBOX_KIND } from '../cluster/sandbox-simulator.ts';
import { ENGINE_KIND_LABEL } from '../../shared/resources.ts';

const NAMESPACE = 'sbx-ports';
const api = useApiServer({ namespace: NAMESPACE, operator: true });
const W = 'workspaces/w1';
const ENGINE = `${W}/sandboxEngines/e1`;
const enc = encodeURIComponent;
const rest = (...args: Parameters<ApiServer['rest']>): ReturnType<ApiServer['rest']> => api().rest(...args);

/** The Port objects in the namespace, by name. */
async function portObjects(): Promise<string[]> {
  const custom = api().cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  // Retried: right after start-up the apiserver may still answer 429 while its storage initialises.
  const list = (await waitFor(
    () =>
      custom
        .listNamespacedCustomObject({
          group: 'engine.h2o.ai',
          version: 'v1',
          namespace: NAMESPACE,
          plural: 'ports',
        })
        .catch(() => undefined),
    { what: 'the Port objects', intervalMs: 500 },
  )) as { items: { metadata: { name: string } }[] };
  return list.items.map((i) => i.metadata.name);
}

beforeAll(async () => {
  const image = await rest('POST', `/v1/${enc(W)}/sandboxEngineImages?sandboxEngineImageId=py`, {
    image: 'python:3.12-slim',
    enabled: true,
  });
  const template = await rest('POST', `/v1/${enc(W)}/sandboxEngineTemplates?sandboxEngineTemplateId=small`, {
    memoryBytesLimit: '1073741824',
    enabled: true,
    milliCpuLimit: 500,
    maxIdleDuration: '3600s',
    maxRunningDuration: '0s',
  });
  expect([image, template]).toMatchObject([{ status: 200 }, { status: 200 }]);
  expect([image, template]).toMatchObject([{ status: 200 }, { status: 200 }]);
  const created = await rest('POST', `/v1/${enc(W)}/sandboxEngines?sandboxEngineId=e1`, {
    sandboxEngineImage: `${W}/sandboxEngineImages/py`,
    sandboxEngineTemplate: `${W}/sandboxEngineTemplates/small`,
  });
  if (created.status !== 200) throw new Error(JSON.stringify(created.json));
  await waitFor(
    async () => {
      const got = await rest('GET', `/v1/${enc(ENGINE)}`);
      return (
        (got.json['sandboxEngine'] as { state?: string } | undefined)?.state === 'STATE_RUNNING' || undefined
      );
    },
    { what: 'the sandbox engine to run', timeoutMs: 90_000, intervalMs: 500 },
  );
  // On a simulated node the sandbox's commands run once the simulator has given kwok its exec
  // rule, which may come moments after the engine runs (a real kubelet serves exec with the
  // container): the disk is measured by a command.
  const pods = await api()
    .cluster.kubeConfig.makeApiClient(CoreV1Api)
    .listNamespacedPod({ namespace: NAMESPACE, labelSelector: `${ENGINE_KIND_LABEL}=${SANDBOX_KIND}` });
  expect(pods.items).toHaveLength(1);
  for (const pod of pods.items)
    await api().cluster.sandboxes.ready({ namespace: NAMESPACE, name: pod.metadata?.name ?? '' });
}, 150_000);

describe('MetricsService without metrics-server', () => {
  test('strict mode is UNAVAILABLE, naming what is missing', async () => {
    const answer = await api().rest('GET', `/v1/${enc(ENGINE)}/metrics:read?strictMode=True`);
    expect(answer.status).toBe(503);
    expect(answer.json['message']).toContain('CPU and memory');
  });

  test('otherwise zeros for CPU and memory, the real disk of the sandbox and the template limit', async () => {
    const answer = await api().rest('GET', `/v1/${enc(ENGINE)}/metrics:read`);
    expect(answer.status).toBe(200);
    const metrics = answer.json['metrics'] as {
      memory: { currentBytes: string; limitBytes: string };
      disk: { totalBytes: string; availableBytes: string };
      cpu: { usageRatio: number };
      collectTime: string;
    };
    expect(metrics.memory).toEqual({ currentBytes: '0', limitBytes: '1073741824' });
    expect(BigInt(metrics.disk.totalBytes)).toBeGreaterThan(0n);
    expect(BigInt(metrics.disk.availableBytes)).toBeLessThanOrEqual(BigInt(metrics.disk.totalBytes));
    expect(metrics.cpu.usageRatio).toBe(0);
  });

  test("1.4.0's diskPath is confined to the sandbox", async () => {
    const escape = await api().rest('GET', `/v1/${enc(ENGINE)}/metrics:read?diskPath=..%2F..`);
    expect(escape.status).toBe(400);
    const missing = await api().rest(
      'GET',
      `/v1/${enc(ENGINE)}/metrics:read?diskPath=%2Fnope&strictMode=True`,
    );
    expect(missing.status).toBe(503);
  });
});

describe('PortService', () => {
  test('refusals write nothing: a bad port id, a public port without a public base URL', async () => {
    const low = await api().rest('POST', `/v1/${enc(ENGINE)}/ports?portId=80`, {});
    expect(low.status).toBe(400);
    expect(low.json['message']).toContain('port_id');
    const open = await api().rest('POST', `/v1/${enc(ENGINE)}/ports?portId=8080`, { public: true });
    expect(open.status).toBe(400);
    expect(open.json['message']).toContain('AIEM_SANDBOX_PORTS_URL');
    expect(await portObjects()).toEqual([]);
  });

  test('a port is a Port object owned by the engine, with a Service owned by the Port; READY, then gone', async () => {
    const { cluster } = api();
    const created = await rest('POST', `/v1/${enc(ENGINE)}/ports?portId=8080`, { displayName: 'web' });
    expect(created.status).toBe(200);
    const port = created.json['port'] as { name: string; internalUrl: string };
    expect(port.name).toBe(`${ENGINE}/ports/8080`);
    const service = port.internalUrl.replace(/^http:\/\//, '').split('.')[0] ?? '';
    expect(port.internalUrl).toBe(`http://${service}.${NAMESPACE}.svc.cluster.local:8080`);
    const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
    const object = await core.readNamespacedService({ namespace: NAMESPACE, name: service });
    expect(object.metadata?.ownerReferences?.[0]?.kind).toBe('Port');
    expect(object.spec?.ports?.[0]?.port).toBe(8080);
    expect((await rest('POST', `/v1/${enc(ENGINE)}/ports?portId=8080`, {})).status).toBe(409);
    await waitFor(
      async () => {
        const got = await rest('GET', `/v1/${enc(port.name)}`);
        return (got.json['port'] as { state: string }).state === 'STATE_READY' || undefined;
      },
      { what: 'the port to be READY', timeoutMs: 30_000, intervalMs: 300 },
    );
    const patched = await rest('PATCH', `/v1/${enc(port.name)}?updateMask=display_name`, {
      displayName: 'site',
    });
    const renamed = patched.json['port'] as { displayName: string; updater: string };
    expect(renamed.displayName).toBe('site');
    expect(renamed.updater).not.toBe('');
    const listed = await rest('GET', `/v1/${enc(ENGINE)}/ports?pageSize=0&pageToken=`);
    expect((listed.json['ports'] as { name: string }[]).map((p) => p.name)).toEqual([port.name]);

    expect((await rest('DELETE', `/v1/${enc(port.name)}`)).status).toBe(200);
    await waitFor(
      async () => ((await rest('GET', `/v1/${enc(port.name)}`)).status === 404 ? true : undefined),
      {
        what: 'the port to be gone',
        timeoutMs: 30_000,
        intervalMs: 300,
      },
    );
    await waitFor(
      () =>
        core.readNamespacedService({ namespace: NAMESPACE, name: service }).then(
          () => undefined,
          () => true,
        ),
      { what: 'its Service to be gone', timeoutMs: 30_000, intervalMs: 300 },
    );
  });

  test('a terminated engine refuses port calls as a failed precondition', async () => {
    await rest('POST', `/v1/${enc(ENGINE)}:terminate`);
    const answer = await rest('GET', `/v1/${enc(ENGINE)}/ports?pageSize=0&pageToken=`);
    expect(answer.status).toBe(400);
    expect(answer.json['message']).toContain('not running');
  });
});
