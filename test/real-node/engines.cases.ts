/**
 * Engines that run for real: real containers from the engine images on the local cluster's real
 * node, created through the API (and the unmodified official client) from the real-node
 * catalogue, as `make run` offers them.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubernetesObject,
  type V1Pod,
} from '@kubernetes/client-node';
import { dump, load } from 'js-yaml';
import { realCatalogue, realNodePlacement } from '../cluster/real-catalogue.ts';
import { REAL_NODE } from '../cluster/real-node.ts';
import { waitFor } from '../cluster/wait.ts';
import type { ApiServer, RestResponse } from '../helpers/api-server.ts';
import type { TestIdentity } from '../helpers/use-identity.ts';
import { ownedBy, reaches as reachesState } from '../operator/fixtures.ts';
import { useRealNodeProduct } from './real-product.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const CACHE = process.env['AIEM_CACHE'] ?? join(homedir(), '.cache', 'ai-engine-manager');
const CLIENT = '1.10.2';
/** The documentation's examples that open engines: they need engines that really run. */
const EXAMPLES = join(HERE, '..', '..', 'docs-site', 'examples', 'real');
const NAMESPACE = 'real';
const W = 'workspaces/lab';
const GIB = 1024 ** 3;

// Set in the describe block: its product runs only while its tests do (real-node.test.ts).
let identity: () => TestIdentity;
let api: () => ApiServer;

async function asUser(method: string, path: string, body?: unknown): Promise<RestResponse> {
  return api().rest(method, path, body, { Authorization: `Bearer ${await identity().token('user')}` });
}

async function ok(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const r = await asUser(method, path, body);
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

const reaches = (plural: string, name: string, state: string, timeoutMs = 240_000): Promise<unknown> =>
  reachesState(api(), { namespace: NAMESPACE, plural, name }, state, timeoutMs);

async function livePods(uid: string): Promise<V1Pod[]> {
  const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
  const pods = await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: ownedBy(uid) });
  return pods.items.filter((p) => p.metadata?.deletionTimestamp === undefined);
}

/** The names of every object the operator made for the engine that still exists. */
async function ownedObjects(uid: string): Promise<string[]> {
  const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
  const apps = api().cluster.kubeConfig.makeApiClient(AppsV1Api);
  const labelSelector = ownedBy(uid);
  const namespace = NAMESPACE;
  const lists: [string, KubernetesObject[]][] = [
    ['StatefulSet', (await apps.listNamespacedStatefulSet({ namespace, labelSelector })).items],
    ['Service', (await core.listNamespacedService({ namespace, labelSelector })).items],
    ['Pod', (await core.listNamespacedPod({ namespace, labelSelector })).items],
    ['PVC', (await core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector })).items],
  ];
  return lists.flatMap(([kind, items]) => items.map((i) => `${kind}/${i.metadata?.name ?? ''}`));
}

async function clientScript(script: string, args: readonly string[]): Promise<string> {
  const { provider } = identity();
  const python = join(CACHE, `python-client-${CLIENT}`, 'bin', 'python');
  const env = {
    ...process.env,
    AIEM_ISSUER_URL: provider.issuer,
    AIEM_CLIENT_ID: provider.clientId,
    AIEM_USER_REFRESH_TOKEN: await provider.refreshToken('user'),
  };
  const { stdout } = await promisify(execFile)(
    python,
    [join(HERE, '..', 'compat', script), api().gateway.restUrl, ...args],
    { env },
  ).catch((error: unknown) => {
    const out = typeof error === 'object' && error !== null && 'stdout' in error ? String(error.stdout) : '';
    throw new Error(`The client script failed:\n${out}\n${String(error)}`);
  });
  expect(stdout.trim().split('\n').at(-1)).toBe('all steps passed');
  return stdout;
}

/** The engine's custom resource as the operator last wrote it. */
async function watchOnce(
  name: string,
): Promise<{ status?: { state?: string; conditions?: { type: string; reason: string }[] } }> {
  return (await api().cluster.kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: 'engine.h2o.ai',
    version: 'v1',
    namespace: NAMESPACE,
    plural: 'notebookengines',
    name,
  })) as {
    status?: { state?: string; conditions?: { type: string; reason: string }[] };
  };
}

/** A process that serves nothing and waits, until it is asked to stop. */
const SERVES_NOTHING =
  'import signal, sys\nsignal.signal(signal.SIGTERM, lambda *_: sys.exit(0))\nwhile True: signal.pause()';

const engineUid = (json: Record<string, unknown>, field: string): string =>
  (json[field] as { uid: string }).uid;

/** Declares the cases (real-node.test.ts runs them on its one cluster with a real node). */
export function enginesCases(): void {
  describe('engines on the real node', () => {
    ({ identity, api } = useRealNodeProduct(NAMESPACE, [
      { id: 'user', name: 'Una User', roles: ['data-scientist'] },
    ]));
    // The node has two CPUs: each test's engines go before the next test's start, whatever its outcome.
    afterEach(async () => {
      for (const collection of ['h2oEngines', 'notebookEngines', 'sandboxEngines']) {
        const list = await asUser('GET', `/v1/${W}/${collection}`);
        const engines = (list.json[collection] ?? []) as { name: string }[];
        for (const engine of engines) await asUser('DELETE', `/v1/${engine.name}`);
      }
      await waitFor(
        async () => {
          const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
          const pods = await core.listNamespacedPod({ namespace: NAMESPACE });
          return pods.items.length === 0 ? true : undefined;
        },
        { what: 'every engine pod to be gone', timeoutMs: 120_000 },
      );
    }, 180_000);

    test('an H2O engine of two nodes runs once its cloud has formed, through the unmodified client', async () => {
      await clientScript('real_h2o.py', ['lab', 'create']);
      const engine = await ok('GET', `/v1/${W}/h2oEngines/cluster`);
      const uid = engineUid(engine, 'h2oEngine');
      const pods = await livePods(uid);
      expect(pods.map((p) => p.spec?.nodeName)).toEqual([REAL_NODE.name, REAL_NODE.name]);
      // H2O's Kubernetes mode: once the nodes have formed their cloud, only its leader answers its
      // readiness probe, and clients talk to it alone (the others refuse them). The leader's view of
      // the cloud can trail a follower's by a heartbeat: the agreement of two is awaited.
      const ready = (pod: V1Pod): boolean =>
        pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
      const cloudOf = async (
        pod: V1Pod,
      ): Promise<{ status: number; size?: unknown; consensus?: unknown }> => {
        const answer = await fetch(
          `http://${pod.status?.podIP ?? ''}:54321/workspaces/lab/h2oEngines/cluster/3/Cloud`,
        );
        if (!answer.ok) return { status: answer.status };
        const cloud = (await answer.json()) as Record<string, unknown>;
        return { status: answer.status, size: cloud['cloud_size'], consensus: cloud['consensus'] };
      };
      const [leader, follower] = [pods.find(ready), pods.find((p) => !ready(p))];
      if (leader === undefined || follower === undefined)
        throw new Error('The engine runs without one leader');
      expect(await cloudOf(follower)).toEqual({ status: 403 });
      await waitFor(
        async () => {
          const cloud = await cloudOf(leader);
          return cloud.consensus === true && cloud.size === 2 ? true : undefined;
        },
        { what: 'the leader to see the cloud of two agreed', timeoutMs: 15_000 },
      );

      await clientScript('real_h2o.py', ['lab', 'terminate']);
      await waitFor(async () => ((await ownedObjects(uid)).length === 0 ? true : undefined), {
        what: 'every object of the H2O engine to be gone',
        timeoutMs: 60_000,
      });
    }, 600_000);

    test("the docs' example opens an H2O engine with the H2O-3 package through its address: a CSV upload and a GBM", async () => {
      const engine = '/v1/workspaces/default/h2oEngines/credit-risk';
      await ok('POST', '/v1/workspaces/default/h2oEngines?h2oEngineId=credit-risk', {
        profile: 'workspaces/global/h2oEngineProfiles/real',
        h2oEngineVersion: 'workspaces/global/h2oEngineVersions/real',
        nodeCount: '2',
        cpu: '1',
        memoryBytes: String(GIB),
      });
      try {
        const { provider } = identity();
        const { stdout } = await promisify(execFile)(
          join(CACHE, `python-client-${CLIENT}`, 'bin', 'python'),
          [join(EXAMPLES, 'h2o_open.py')],
          {
            env: {
              PATH: process.env['PATH'] ?? '',
              AIEM_URL: api().gateway.restUrl,
              AIEM_ISSUER_URL: provider.issuer,
              AIEM_CLIENT_ID: provider.clientId,
              AIEM_REFRESH_TOKEN: await provider.refreshToken('user'),
            },
          },
        );
        // The H2O package warns on its own once its release is some months old: not the example's.
        const printed = stdout.replace(/^Warning: Your H2O cluster version is .*\nPlease download .*\n/m, '');
        const expected = join(EXAMPLES, 'h2o_open.out');
        if (process.env['UPDATE_EXAMPLE_OUTPUT'] === '1') writeFileSync(expected, printed);
        expect(printed).toBe(readFileSync(expected, 'utf8'));
      } finally {
        await asUser('DELETE', engine);
      }
    }, 600_000);

    test('a notebook engine serves JupyterLab on its path, and keeps its files across pause and resume', async () => {
      const created = await ok('POST', `/v1/${W}/notebookEngines?notebookEngineId=nb`, {
        profile: 'workspaces/global/notebookEngineProfiles/real',
        notebookImage: 'workspaces/global/notebookEngineImages/real',
      });
      const uid = engineUid(created, 'notebookEngine');
      await reaches('notebookengines', 'lab.nb', 'STATE_RUNNING');
      const jupyter = await jupyterOf(uid);
      expect((await fetch(`${jupyter.base}/api/status`)).status).toBe(200);
      expect((await fetch(`${jupyter.origin}/api/status`)).status).toBe(404);
      await jupyter.put('kept.txt', 'written before the pause');

      await ok('POST', `/v1/${W}/notebookEngines/nb:pause`);
      await reaches('notebookengines', 'lab.nb', 'STATE_PAUSED');
      expect(await livePods(uid)).toEqual([]);
      await ok('POST', `/v1/${W}/notebookEngines/nb:resume`);
      await reaches('notebookengines', 'lab.nb', 'STATE_RUNNING');
      const resumed = await jupyterOf(uid);
      expect(await resumed.get('kept.txt')).toBe('written before the pause');
      await ok('DELETE', `/v1/${W}/notebookEngines/nb`);
    }, 600_000);
    test('a sandbox engine runs processes and files in its real container, through the unmodified client', async () => {
      await clientScript('real_sandbox.py', ['lab']);
    }, 600_000);

    describe('an engine that cannot run says why', () => {
      /** A notebook profile of the real-node catalogue whose pod template runs `command` instead. */
      async function failingProfile(id: string, command: string[], memory = String(GIB / 4)): Promise<void> {
        const [profile] = realCatalogue(api().cluster.realNode?.images ?? []).filter(
          (entry) => entry.collection === 'notebookEngineProfiles',
        );
        const template = dump({
          spec: {
            ...(load(realNodePlacement()) as { spec: object }).spec,
            containers: [{ name: 'notebook', command }],
          },
        });
        const r = await api().rest(
          'POST',
          `/v1/workspaces/global/notebookEngineProfiles?notebookEngineProfileId=${id}`,
          {
            ...profile?.body,
            yamlPodTemplateSpec: template,
            memoryBytesConstraint: { min: memory, default: memory, max: null, cumulativeMax: null },
          },
          { Authorization: `Bearer ${await identity().token('admin')}` },
        );
        expect(r.status).toBe(200);
      }

      async function notebookFrom(profile: string, id: string): Promise<void> {
        await ok('POST', `/v1/${W}/notebookEngines?notebookEngineId=${id}`, {
          profile: `workspaces/global/notebookEngineProfiles/${profile}`,
          notebookImage: 'workspaces/global/notebookEngineImages/real',
        });
      }

      test('a process that exits: FAILED, the process failed', async () => {
        await failingProfile('exits', ['sh', '-c', 'echo bye; exit 3']);
        await notebookFrom('exits', 'exits');
        await reaches('notebookengines', 'lab.exits', 'STATE_FAILED');
        const engine = (await ok('GET', `/v1/${W}/notebookEngines/exits`))['notebookEngine'] as Record<
          string,
          unknown
        >;
        expect(engine['failureReason']).toBe('FAILURE_REASON_PROCESS_FAILED');
      }, 300_000);

      test('a process over its memory limit: FAILED, OOM killed', async () => {
        await failingProfile(
          'greedy',
          ['python3', '-c', 'b = bytearray(1 << 30); print(len(b))'],
          String(GIB / 8),
        );
        await notebookFrom('greedy', 'greedy');
        await reaches('notebookengines', 'lab.greedy', 'STATE_FAILED');
        const engine = (await ok('GET', `/v1/${W}/notebookEngines/greedy`))['notebookEngine'] as Record<
          string,
          unknown
        >;
        expect(engine['failureReason']).toBe('FAILURE_REASON_OOM_KILLED');
      }, 300_000);

      test('a server that never answers its probe: STARTING, and the engine says it waits for it', async () => {
        // It stops when asked: as a container's first process `sleep` ignores SIGTERM, and the
        // engine's deletion would wait out the pod's whole grace period (30 s).
        await failingProfile('silent', ['python3', '-c', SERVES_NOTHING]);
        await notebookFrom('silent', 'silent');
        const engine = await waitFor(
          async () => {
            const got = await watchOnce('lab.silent');
            const ready = got.status?.conditions?.find((c) => c.type === 'Ready');
            return ready?.reason === 'WaitingForReadiness' ? got : undefined;
          },
          { what: 'the engine to say it waits for its readiness', timeoutMs: 120_000 },
        );
        expect(engine.status?.state).toBe('STATE_STARTING');
      }, 300_000);
    });
  });
}

/** JupyterLab of a running notebook engine, reached at its pod's address under its path. */
async function jupyterOf(uid: string): Promise<{
  origin: string;
  base: string;
  put(path: string, text: string): Promise<void>;
  get(path: string): Promise<string>;
}> {
  const [pod] = await livePods(uid);
  const origin = `http://${pod?.status?.podIP ?? ''}:8888`;
  const base = `${origin}/workspaces/lab/notebookEngines/nb`;
  await waitFor(
    async () => ((await fetch(`${base}/api/status`).catch(() => undefined))?.ok === true ? true : undefined),
    {
      what: 'JupyterLab to answer',
    },
  );
  // Jupyter's XSRF check: the cookie it sets, sent back with the same value as a header.
  const page = await fetch(`${base}/lab`);
  const xsrf = /_xsrf=([^;]+)/.exec(page.headers.get('set-cookie') ?? '')?.[1] ?? '';
  const headers = { cookie: `_xsrf=${xsrf}`, 'x-xsrftoken': xsrf, 'content-type': 'application/json' };
  return {
    origin,
    base,
    async put(path, text) {
      const r = await fetch(`${base}/api/contents/${path}`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ type: 'file', format: 'text', content: text }),
      });
      expect(r.status).toBe(201);
    },
    async get(path) {
      const r = await fetch(`${base}/api/contents/${path}?content=1`, { headers });
      expect(r.status).toBe(200);
      return ((await r.json()) as { content: string }).content;
    },
  };
}
