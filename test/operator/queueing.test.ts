/**
 * GPU queueing on the local control plane with Kueue and simulated GPU nodes, driven through the
 * public API: engines beyond their workspace's GPU quota wait in its queue with their positions
 * and are admitted as GPUs free, never over the quota; a higher queue priority preempts a lower
 * one, which ends PAUSED with its data and resumes into the queue; workspaces of a cohort borrow
 * each other's idle GPUs and get them back; and queue time is not running time.
 */
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type V1Pod,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { pino } from 'pino';
import { startOperator, type Operator } from '../../operator/src/operator.ts';
import { parseQueueingConfig, type QueueingConfig } from '../../operator/src/queueing/config.ts';
import { ENGINE_UID_LABEL } from '../../shared/resources.ts';
import { ADMISSION_GATE, QUEUE_LABEL } from '../cluster/kueue.ts';
import { waitFor } from '../cluster/wait.ts';
import { GATEWAY_POD, useApiServer } from '../helpers/api-server.ts';
import { numeric, ok, PROFILE } from './fixtures.ts';

const NAMESPACE = 'queueing-test';

/** The GPU class of the simulated nodes; Kueue adds their toleration to admitted engines' pods. */
const BASE_CONFIG = `
gpuClasses:
  - name: simulated-gpu
    nodeLabels: { nvidia.com/gpu.product: Simulated-GPU }
    tolerations: [{ key: nvidia.com/gpu, operator: Exists, effect: NoSchedule }]
workspaceQuota: { simulated-gpu: 4 }
workspaces:
  prio: { simulated-gpu: 1 }
  limits: { simulated-gpu: 1 }
  team-a: { simulated-gpu: 2 }
  team-b: { simulated-gpu: 2 }
`;

let operator: Operator | undefined;
// Declared before the API server's hooks so that the operator stops while the cluster still answers.
afterAll(async () => {
  await operator?.stop();
});
const api = useApiServer({ namespace: NAMESPACE, cluster: { kueue: { namespaces: [NAMESPACE] } } });

/** Runs the operator of the file with `config`, or with queueing off (stopping the one running). */
async function runOperator(config: QueueingConfig | undefined): Promise<void> {
  await operator?.stop();
  operator = await startOperator({
    kubeConfig: api().cluster.kubeConfig,
    namespace: NAMESPACE,
    settings: {
      publicUrl: api().gateway.restUrl,
      engineNetworkPeers: [{ podSelector: { matchLabels: GATEWAY_POD } }],
    },
    log: pino({ level: process.env['AIEM_LOG_LEVEL'] ?? 'silent' }),
    queueing: config,
  });
}

const enc = encodeURIComponent;
const rest = (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> =>
  ok(api().rest(method, path, body));

/** Notebook profiles asking for one GPU: at queue priority 0, at 100, one running 6 s at most, and one tolerating the GPU nodes' taint. */
const GPU_PROFILE = { ...PROFILE, gpuConstraint: numeric('1', '1', '4') };
const PROFILES: Record<string, object> = {
  gpu: GPU_PROFILE,
  'gpu-high': { ...GPU_PROFILE, queuePriority: 100 },
  'gpu-short': { ...GPU_PROFILE, maxRunningDurationConstraint: { min: '0s', default: '6s' } },
  // Lets its engines on the GPU nodes by itself, as engines must when no queue's GPU class does.
  'gpu-tolerating': {
    ...GPU_PROFILE,
    yamlGpuTolerations: '- key: nvidia.com/gpu\n  operator: Exists\n  effect: NoSchedule\n',
  },
};

beforeAll(async () => {
  for (const [id, profile] of Object.entries(PROFILES))
    await rest('POST', `/v1/workspaces/global/notebookEngineProfiles?notebookEngineProfileId=${id}`, profile);
  await rest('POST', '/v1/workspaces/global/notebookEngineImages?notebookEngineImageId=jupyter', {
    image: 'jupyter:1',
    enabled: true,
  });
  await runOperator(parseQueueingConfig(BASE_CONFIG));
});

interface QueueStatus {
  state?: string;
  queue?: string;
  position?: number;
  message?: string;
  since?: string;
}

interface Notebook {
  name: string;
  uid: string;
  state: string;
  queueStatus?: QueueStatus;
  runningSince?: string;
}

const nameOf = (workspace: string, id: string): string => `workspaces/${workspace}/notebookEngines/${id}`;

async function createNotebook(workspace: string, id: string, profile = 'gpu'): Promise<Notebook> {
  const created = await rest('POST', `/v1/workspaces/${workspace}/notebookEngines?notebookEngineId=${id}`, {
    profile: `workspaces/global/notebookEngineProfiles/${profile}`,
    notebookImage: 'workspaces/global/notebookEngineImages/jupyter',
  });
  return created['notebookEngine'] as Notebook;
}

async function notebook(workspace: string, id: string): Promise<Notebook> {
  return (await rest('GET', `/v1/${enc(nameOf(workspace, id))}`))['notebookEngine'] as Notebook;
}

async function notebooks(workspace: string): Promise<Notebook[]> {
  const list = await rest('GET', `/v1/workspaces/${workspace}/notebookEngines?pageSize=1000`);
  return (list['notebookEngines'] as Notebook[] | undefined) ?? [];
}

const idOf = (engine: Notebook): string => engine.name.split('/').pop() ?? '';

/** The engine's status as the operator wrote it (kubectl's view). */
async function engineStatus(
  workspace: string,
  id: string,
): Promise<{ runningSince?: string; conditions?: { type: string; status: string; reason: string }[] }> {
  const cr = (await api()
    .cluster.kubeConfig.makeApiClient(CustomObjectsApi)
    .getNamespacedCustomObject({
      group: 'engine.h2o.ai',
      version: 'v1',
      namespace: NAMESPACE,
      plural: 'notebookengines',
      name: `${workspace}.${id}`,
    })) as {
    status?: { runningSince?: string; conditions?: { type: string; status: string; reason: string }[] };
  };
  return cr.status ?? {};
}

/** Resolves once the engine reads `predicate` through the API. */
function until(
  workspace: string,
  id: string,
  what: string,
  predicate: (engine: Notebook) => boolean,
  timeoutMs = 30_000,
): Promise<Notebook> {
  let last: Notebook | undefined;
  return waitFor(
    async () => {
      last = await notebook(workspace, id);
      return predicate(last) ? last : undefined;
    },
    { what: `${id} ${what}`, timeoutMs, intervalMs: 200, explain: () => JSON.stringify(last) },
  );
}

/** The uids of the engine's volume claims: the same uids, the same data. */
async function claimsOf(engineUid: string): Promise<string[]> {
  const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
  const claims = await core.listNamespacedPersistentVolumeClaim({
    namespace: NAMESPACE,
    labelSelector: `${ENGINE_UID_LABEL}=${engineUid}`,
  });
  return claims.items.map((c) => c.metadata?.uid ?? '');
}

/** Deletes every engine of the workspace and resolves once they are gone. */
async function deleteAll(workspace: string): Promise<void> {
  for (const engine of await notebooks(workspace)) await rest('DELETE', `/v1/${enc(engine.name)}`);
  await waitFor(async () => ((await notebooks(workspace)).length === 0 ? true : undefined), {
    what: `the engines of ${workspace} to be deleted`,
    timeoutMs: 30_000,
  });
}

const gated = (pod: V1Pod): boolean =>
  pod.spec?.schedulingGates?.some((g) => g.name === ADMISSION_GATE) === true;
const asksForGpu = (pod: V1Pod): boolean =>
  pod.spec?.containers.some((c) => c.resources?.requests?.['nvidia.com/gpu'] !== undefined) === true;

/**
 * The engines' pods that hold GPUs now: let through by Kueue (no admission gate), not being
 * deleted, not finished.
 */
async function gpuHolders(): Promise<V1Pod[]> {
  const pods = await api()
    .cluster.kubeConfig.makeApiClient(CoreV1Api)
    .listNamespacedPod({ namespace: NAMESPACE, labelSelector: ENGINE_UID_LABEL });
  return pods.items.filter(
    (pod) =>
      asksForGpu(pod) &&
      !gated(pod) &&
      pod.metadata?.deletionTimestamp === undefined &&
      !['Succeeded', 'Failed'].includes(pod.status?.phase ?? ''),
  );
}

/** Samples the GPU-holding pods every second while `body` runs; the most seen at once. */
async function mostHoldersWhile(body: () => Promise<void>): Promise<{ most: number; samples: number }> {
  let most = 0;
  let samples = 0;
  const run = { sampling: true };
  const sampler = (async () => {
    while (run.sampling) {
      most = Math.max(most, (await gpuHolders()).length);
      samples += 1;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  })();
  try {
    await body();
  } finally {
    run.sampling = false;
    await sampler;
  }
  return { most, samples };
}

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

describe('GPU queueing', () => {
  test('20 one-GPU engines in a workspace with 4 GPUs: 4 run, the rest wait in order, and each freed GPU admits the next', async () => {
    const workspace = 'q20';
    const ids = Array.from({ length: 20 }, (_, i) => `n${String(i).padStart(2, '0')}`);
    const { most, samples } = await mostHoldersWhile(async () => {
      for (const id of ids) await createNotebook(workspace, id);
      let seen: Notebook[] = [];
      await waitFor(
        async () => {
          seen = await notebooks(workspace);
          const running = seen.filter((e) => e.state === 'STATE_RUNNING');
          const queued = seen.filter((e) => e.queueStatus?.state === 'STATE_QUEUED');
          const positions = queued.map((e) => e.queueStatus?.position);
          return running.length === 4 &&
            queued.length === 16 &&
            new Set(positions).size === 16 &&
            positions.every((p) => p !== undefined)
            ? true
            : undefined;
        },
        {
          what: '4 engines running and 16 queued with distinct positions',
          timeoutMs: 60_000,
          intervalMs: 250,
          explain: () => JSON.stringify(seen.map((e) => [idOf(e), e.state, e.queueStatus])),
        },
      );
      const waiting = seen.filter((e) => e.queueStatus?.state === 'STATE_QUEUED');
      for (const engine of waiting) {
        expect(engine.state).toBe('STATE_STARTING');
        expect(engine.queueStatus).toMatchObject({
          queue: 'workspaces/q20',
          message: expect.any(String) as unknown,
        });
      }
      // Those Kueue has tried say what they wait for in its words.
      expect(waiting.map((e) => e.queueStatus?.message)).toContainEqual(
        expect.stringMatching(/insufficient unused quota for nvidia\.com\/gpu/),
      );
      expect(waiting.map((e) => e.queueStatus?.position).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(
        Array.from({ length: 16 }, (_, i) => i),
      );
      // The Ready condition says why, for kubectl users.
      const status = await engineStatus(workspace, idOf(waiting[0] as Notebook));
      expect(status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
        status: 'False',
        reason: 'Queued',
      });

      // Free one GPU at a time (pause or delete a running engine): the next in line is admitted.
      const latencies: number[] = [];
      for (let round = 0; round < 16; round++) {
        const holders = new Set((await gpuHolders()).map((p) => p.metadata?.uid));
        const running = (await notebooks(workspace)).find((e) => e.state === 'STATE_RUNNING');
        if (running === undefined) throw new Error('no engine runs');
        const freedAt = Date.now();
        await rest(
          round % 2 === 0 ? 'POST' : 'DELETE',
          `/v1/${enc(running.name)}${round % 2 === 0 ? ':pause' : ''}`,
        );
        await waitFor(
          async () => ((await gpuHolders()).some((p) => !holders.has(p.metadata?.uid)) ? true : undefined),
          { what: `the next engine to be admitted (round ${round})`, timeoutMs: 30_000, intervalMs: 100 },
        );
        latencies.push(Date.now() - freedAt);
      }
      console.log(
        `queueing: admission after a freed GPU p50 ${percentile(latencies, 50)} ms, p95 ${percentile(latencies, 95)} ms, max ${Math.max(...latencies)} ms`,
      );
      expect(percentile(latencies, 95)).toBeLessThan(10_000);
      // Every engine has run by now; the last 4 run, none waits.
      const left = await notebooks(workspace);
      expect(left.filter((e) => e.queueStatus?.state === 'STATE_QUEUED')).toEqual([]);
    });
    console.log(`queueing: at most ${most} GPU pods held at once over ${samples} samples`);
    expect(most).toBeLessThanOrEqual(4);
    expect(samples).toBeGreaterThan(5);
    // A paused queued engine keeps its data volume though its StatefulSet is gone.
    const paused = (await notebooks(workspace)).filter((e) => e.state === 'STATE_PAUSED');
    expect(paused.length).toBe(8);
    const claims = await api()
      .cluster.kubeConfig.makeApiClient(CoreV1Api)
      .listNamespacedPersistentVolumeClaim({
        namespace: NAMESPACE,
        labelSelector: `${ENGINE_UID_LABEL}=${paused[0]?.uid ?? ''}`,
      });
    expect(claims.items).toHaveLength(1);
    await deleteAll(workspace);
  }, 240_000);

  test('an engine of a higher queue priority preempts a lower one, which is PAUSED with its data and queues again on resume', async () => {
    const workspace = 'prio';
    const low = await createNotebook(workspace, 'low');
    await until(workspace, 'low', 'running', (e) => e.state === 'STATE_RUNNING');
    expect((await notebook(workspace, 'low')).queueStatus).toMatchObject({
      state: 'STATE_ADMITTED',
      queue: 'workspaces/prio',
    });
    const claims = await claimsOf(low.uid);
    expect(claims).toHaveLength(1);

    await createNotebook(workspace, 'high', 'gpu-high');
    const preempted = await until(
      workspace,
      'low',
      'paused by preemption',
      (e) => e.state === 'STATE_PAUSED',
    );
    expect(preempted.queueStatus).toMatchObject({
      state: 'STATE_PREEMPTED',
      queue: 'workspaces/prio',
      message: expect.stringMatching(/Preempted/) as unknown,
    });
    await until(workspace, 'high', 'running', (e) => e.state === 'STATE_RUNNING');
    expect(await claimsOf(low.uid)).toEqual(claims);

    // Resumed, it queues behind the higher one; once that one goes, it runs on its own volume.
    await rest('POST', `/v1/${enc(nameOf(workspace, 'low'))}:resume`);
    const queued = await until(
      workspace,
      'low',
      'queued again',
      (e) => e.queueStatus?.state === 'STATE_QUEUED',
    );
    expect(queued.state).toBe('STATE_STARTING');
    await rest('DELETE', `/v1/${enc(nameOf(workspace, 'high'))}`);
    await until(workspace, 'low', 'running again', (e) => e.state === 'STATE_RUNNING');
    expect(await claimsOf(low.uid)).toEqual(claims);
    await deleteAll(workspace);
  }, 120_000);

  test('queue time does not count as running time: an engine queued past its maximum running duration runs its full duration once admitted', async () => {
    const workspace = 'limits';
    await createNotebook(workspace, 'holder');
    await until(workspace, 'holder', 'running', (e) => e.state === 'STATE_RUNNING');
    await createNotebook(workspace, 'short', 'gpu-short');
    // Queued for longer than its 6 s limit.
    const queued = await until(
      workspace,
      'short',
      'queued for longer than its maximum running duration',
      (e) =>
        e.queueStatus?.state === 'STATE_QUEUED' && Date.now() - Date.parse(e.queueStatus.since ?? '') > 7_000,
      20_000,
    );
    expect(queued.state).toBe('STATE_STARTING');
    expect((await engineStatus(workspace, 'short')).runningSince).toBeUndefined();
    await rest('DELETE', `/v1/${enc(nameOf(workspace, 'holder'))}`);
    await until(workspace, 'short', 'running', (e) => e.state === 'STATE_RUNNING');
    const since = Date.parse((await engineStatus(workspace, 'short')).runningSince ?? '');
    expect(since).toBeGreaterThan(Date.parse(queued.queueStatus?.since ?? '') + 7_000);
    // Stopped by its limit, counted from when it began to run.
    await until(workspace, 'short', 'paused by its limit', (e) => e.state === 'STATE_PAUSED', 30_000);
    expect(Date.now() - since).toBeGreaterThanOrEqual(6_000);
    await deleteAll(workspace);
  }, 120_000);

  test('an engine started before queueing was on runs on, and joins its queue at its next start with its data', async () => {
    const workspace = 'before';
    await runOperator(undefined);
    try {
      const engine = await createNotebook(workspace, 'early', 'gpu-tolerating');
      await until(workspace, 'early', 'running without queueing', (e) => e.state === 'STATE_RUNNING');
      const claims = await claimsOf(engine.uid);
      expect(claims).toHaveLength(1);
      const apps = api().cluster.kubeConfig.makeApiClient(AppsV1Api);
      const setOf = async (): Promise<V1StatefulSet | undefined> =>
        (
          await apps.listNamespacedStatefulSet({
            namespace: NAMESPACE,
            labelSelector: `${ENGINE_UID_LABEL}=${engine.uid}`,
          })
        ).items[0];
      expect((await setOf())?.metadata?.labels).not.toHaveProperty([QUEUE_LABEL]);

      await runOperator(parseQueueingConfig(BASE_CONFIG));
      await rest('POST', `/v1/${enc(nameOf(workspace, 'early'))}:pause`);
      await until(workspace, 'early', 'paused', (e) => e.state === 'STATE_PAUSED');
      await waitFor(async () => ((await setOf()) === undefined ? true : undefined), {
        what: "the engine's StatefulSet made before queueing to be gone",
        timeoutMs: 30_000,
      });
      expect(await claimsOf(engine.uid)).toEqual(claims);

      await rest('POST', `/v1/${enc(nameOf(workspace, 'early'))}:resume`);
      const running = await until(
        workspace,
        'early',
        'running in its queue',
        (e) => e.state === 'STATE_RUNNING',
      );
      expect(running.queueStatus).toMatchObject({ state: 'STATE_ADMITTED', queue: 'workspaces/before' });
      expect((await setOf())?.metadata?.labels?.[QUEUE_LABEL]).toBe('workspace-before');
      expect(await claimsOf(engine.uid)).toEqual(claims);
    } finally {
      // Left running, it would hold a GPU outside every queue in the tests after it.
      await deleteAll(workspace);
    }
  }, 120_000);

  test("workspaces of a cohort borrow each other's idle GPUs, and a lender takes its GPUs back by preempting the borrower", async () => {
    // The same installation with the workspaces' queues in one cohort (the operator restarted).
    await runOperator(parseQueueingConfig(`${BASE_CONFIG}\ncohort: engines\n`));
    // team-b has a queue (it ran an engine, now paused) and leaves its 2 GPUs idle.
    await createNotebook('team-b', 'b1');
    await until('team-b', 'b1', 'running', (e) => e.state === 'STATE_RUNNING');
    await rest('POST', `/v1/${enc(nameOf('team-b', 'b1'))}:pause`);
    await until('team-b', 'b1', 'paused', (e) => e.state === 'STATE_PAUSED');
    // team-a's quota is 2; team-b's idle 2 are lent to it.
    for (const id of ['a1', 'a2', 'a3', 'a4']) await createNotebook('team-a', id);
    for (const id of ['a1', 'a2', 'a3', 'a4'])
      await until('team-a', id, 'running on borrowed GPUs', (e) => e.state === 'STATE_RUNNING');
    // team-b wants its GPUs back: b1 resumed, b2 new.
    await rest('POST', `/v1/${enc(nameOf('team-b', 'b1'))}:resume`);
    await createNotebook('team-b', 'b2');
    for (const id of ['b1', 'b2'])
      await until('team-b', id, 'running on its reclaimed GPUs', (e) => e.state === 'STATE_RUNNING');
    let teamA: Notebook[] = [];
    await waitFor(
      async () => {
        teamA = await notebooks('team-a');
        return teamA.filter((e) => e.state === 'STATE_PAUSED').length === 2 ? true : undefined;
      },
      { what: 'two of team-a preempted', timeoutMs: 30_000, explain: () => JSON.stringify(teamA) },
    );
    expect(teamA.filter((e) => e.state === 'STATE_RUNNING')).toHaveLength(2);
    for (const engine of teamA.filter((e) => e.state === 'STATE_PAUSED'))
      expect(engine.queueStatus).toMatchObject({ state: 'STATE_PREEMPTED', queue: 'workspaces/team-a' });
    expect((await gpuHolders()).length).toBe(4);
    await deleteAll('team-a');
    await deleteAll('team-b');
  }, 120_000);
});
