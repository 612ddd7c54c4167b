/**
 * Activity probes on the real node: a notebook whose kernel runs a cell longer than the engine's
 * idle limit, with no request through the engine's address all the while, stays RUNNING past the
 * limit — at each idle deadline the operator asks Jupyter, finds the kernel busy, and records the
 * activity — and is paused once the kernel has been idle for the limit after the cell ended.
 *
 * The same for an H2O engine whose model trains longer than its idle limit: it terminates once
 * it has been idle for the limit after the job ended.
 *
 * The test plays a user's work without traffic by talking to Jupyter at the pod's address (this
 * host reaches the node's pod network), never through the gateway, whose access proxy would
 * record its own activity.
 */
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { waitFor } from '../cluster/wait.ts';
import { executeRequest, kernelMessage } from './jupyter-kernel.ts';
import type { ApiServer, RestResponse } from '../helpers/api-server.ts';
import type { TestIdentity } from '../helpers/use-identity.ts';
import { ownedBy, reaches as reachesState, type EngineObject } from '../operator/fixtures.ts';
import { useRealNodeProduct } from './real-product.ts';

const NAMESPACE = 'activity';
const W = 'workspaces/lab';
const ID = 'busy';
const OBJECT = `lab.${ID}`;
/** Short, so that the deadlines come quickly; long enough for a kernel to start within it. */
const IDLE_LIMIT_MS = 20_000;
/** Longer than the idle limit by far: without the probes the engine would be paused mid-cell. */
const CELL_MS = 60_000;
const LAST_ACTIVITY = 'engine.h2o.ai/last-activity-time';
/** How long the H2O model trains: longer than the idle limit by far. */
const JOB_MS = 60_000;

// Set in the describe block, which starts the product before its tests.
let identity: () => TestIdentity;
let api: () => ApiServer;

async function asUser(method: string, path: string, body?: unknown): Promise<RestResponse> {
  return api().rest(method, path, body, { Authorization: `Bearer ${await identity().token('user')}` });
}

type Engine = EngineObject & {
  metadata?: { annotations?: Record<string, string>; uid?: string };
  status?: { runningSince?: string };
};

async function engineObject(): Promise<Engine> {
  return (await api().cluster.kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: 'engine.h2o.ai',
    version: 'v1',
    namespace: NAMESPACE,
    plural: 'notebookengines',
    name: OBJECT,
  })) as Engine;
}

/** Where Jupyter serves in the engine's pod: its pod address, under the engine's path. */
async function jupyterAt(uid: string): Promise<string> {
  const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
  const pods = await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: ownedBy(uid) });
  const ip = pods.items.find((p) => p.metadata?.deletionTimestamp === undefined)?.status?.podIP;
  if (ip === undefined) throw new Error('The notebook pod has no address');
  return `http://${ip}:8888/${W}/notebookEngines/${ID}`;
}

/** A cell sent to a kernel over its WebSocket: when it started running, and when it ended. */
interface Cell {
  started: Promise<Date>;
  ended: Promise<Date>;
  /** Whether the kernel has finished the cell. */
  done(): boolean;
  close(): void;
}

/** Runs `code` in the kernel over its WebSocket at `jupyter` (the pod's address). */
function runCell(jupyter: string, kernelId: string, code: string): Cell {
  const socket = new WebSocket(`${jupyter.replace(/^http/, 'ws')}/api/kernels/${kernelId}/channels`);
  const msgId = `cell-${Date.now()}`;
  let finished = false;
  let onStart: (at: Date) => void = () => undefined;
  let onEnd: (at: Date) => void = () => undefined;
  let onFail: (error: Error) => void = () => undefined;
  const started = new Promise<Date>((resolve) => (onStart = resolve));
  const ended = new Promise<Date>((resolve, reject) => {
    onEnd = resolve;
    onFail = reject;
  });
  // A socket that fails after the test stopped waiting is no failure of its own.
  ended.catch(() => undefined);
  socket.onerror = () => {
    onFail(new Error('The kernel WebSocket failed'));
  };
  socket.onopen = () => {
    socket.send(executeRequest(msgId, code));
  };
  socket.onmessage = (event: MessageEvent) => {
    const message = kernelMessage(event);
    if (message.parent_header.msg_id !== msgId || message.msg_type !== 'status') return;
    if (message.content.execution_state === 'busy') onStart(new Date());
    if (message.content.execution_state === 'idle') {
      finished = true;
      onEnd(new Date());
    }
  };
  return {
    started,
    ended,
    done: () => finished,
    close: () => {
      socket.close();
    },
  };
}

/** The H2O engine's custom resource as the operator last wrote it. */
async function h2oObject(name: string): Promise<Engine> {
  return (await api().cluster.kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
    group: 'engine.h2o.ai',
    version: 'v1',
    namespace: NAMESPACE,
    plural: 'h2oengines',
    name,
  })) as Engine;
}

/** A form POST to H2O's REST API at `url`; the answer's JSON. */
async function h2oPost(url: string, form: Record<string, string>): Promise<Record<string, unknown>> {
  const answer = await fetch(url, { method: 'POST', body: new URLSearchParams(form) });
  const body = (await answer.json()) as Record<string, unknown>;
  if (!answer.ok)
    throw new Error(`H2O answered ${answer.status} at ${url}: ${JSON.stringify(body).slice(0, 500)}`);
  return body;
}

/** The key of the job an H2O call started. */
const jobKey = (answer: Record<string, unknown>): string =>
  ((answer['job'] ?? answer) as { key: { name: string } }).key.name;

/** Declares the cases (real-node.test.ts runs them on its one cluster with a real node). */
export function activityCases(): void {
  describe('activity probes on the real node', () => {
    afterAll(async () => {
      for (const collection of ['notebookEngines', 'h2oEngines']) {
        const list = await asUser('GET', `/v1/${W}/${collection}`);
        for (const engine of (list.json[collection] ?? []) as { name: string }[])
          await asUser('DELETE', `/v1/${engine.name}`);
      }
      await waitFor(
        async () => {
          const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
          return (await core.listNamespacedPod({ namespace: NAMESPACE })).items.length === 0
            ? true
            : undefined;
        },
        { what: 'every engine pod to be gone', timeoutMs: 120_000 },
      );
    }, 180_000);
    // After the clean-up above, which deletes the engines through it: after-all hooks run in order.
    ({ identity, api } = useRealNodeProduct(NAMESPACE, [
      { id: 'user', name: 'Una User', roles: ['data-scientist'] },
    ]));

    // The two engines work at the same time (their deadlines mostly wait), each on its own.
    test.concurrent(
      'a notebook whose kernel runs a cell longer than its idle limit stays RUNNING, and pauses once idle after it',
      async () => {
        const created = await asUser('POST', `/v1/${W}/notebookEngines?notebookEngineId=${ID}`, {
          profile: 'workspaces/global/notebookEngineProfiles/real',
          notebookImage: 'workspaces/global/notebookEngineImages/real',
          maxIdleDuration: `${IDLE_LIMIT_MS / 1000}s`,
        });
        expect(created.status).toBe(200);
        const uid = (created.json['notebookEngine'] as { uid: string }).uid;
        await reachesState(
          api(),
          { namespace: NAMESPACE, plural: 'notebookengines', name: OBJECT },
          'STATE_RUNNING',
          240_000,
        );

        // A kernel, started and given a long cell at the pod's own address: Jupyter's XSRF cookie
        // from its page, then the kernel's WebSocket.
        const jupyter = await jupyterAt(uid);
        const page = await waitFor(
          async () => {
            const r = await fetch(`${jupyter}/lab`);
            return r.status === 200 ? r : undefined;
          },
          { what: 'JupyterLab to answer at the pod’s address', timeoutMs: 60_000 },
        );
        const xsrf = /_xsrf=([^;]+)/.exec(page.headers.get('set-cookie') ?? '')?.[1] ?? '';
        const kernel = await fetch(`${jupyter}/api/kernels`, {
          method: 'POST',
          headers: { cookie: `_xsrf=${xsrf}`, 'x-xsrftoken': xsrf, 'content-type': 'application/json' },
          body: '{}',
        });
        expect(kernel.status).toBe(201);
        const { id: kernelId } = (await kernel.json()) as { id: string };
        const cell = runCell(jupyter, kernelId, `import time; time.sleep(${CELL_MS / 1000})`);
        try {
          const cellStarted = await cell.started;

          // Nothing reaches the engine's address, and Jupyter's own last activity stays at the cell's
          // start while it runs: only a probe that found the kernel busy can record activity a whole
          // idle limit after it. The engine is still RUNNING then, the cell still running.
          const kept = await waitFor(
            async () => {
              const engine = await engineObject();
              const at = Date.parse(engine.metadata?.annotations?.[LAST_ACTIVITY] ?? '');
              return at >= cellStarted.getTime() + IDLE_LIMIT_MS ? engine : undefined;
            },
            {
              what: 'a probe to find the kernel busy past the idle limit',
              timeoutMs: CELL_MS,
              intervalMs: 500,
            },
          );
          expect(kept.status?.state).toBe('STATE_RUNNING');
          expect(cell.done()).toBe(false);

          // Once the cell ends the kernel is idle: the engine is paused a full idle limit after that
          // (the probe records the kernel's last activity, the end of the cell, and finds nothing newer
          // at the next deadline).
          const cellEnded = await cell.ended;
          const paused = await reachesState(
            api(),
            { namespace: NAMESPACE, plural: 'notebookengines', name: OBJECT },
            'STATE_PAUSED',
            3 * IDLE_LIMIT_MS + 60_000,
          );
          const stopped = paused.status?.conditions?.find((c) => c.type === 'Stopped') as
            { reason: string; lastTransitionTime: string } | undefined;
          expect(stopped?.reason).toBe('MaxIdleDurationExceeded');
          const recorded = Date.parse(paused.metadata?.annotations?.[LAST_ACTIVITY] ?? '');
          // Jupyter's clock is this machine's: the kernel's last activity is the cell's end.
          expect(Math.abs(recorded - cellEnded.getTime())).toBeLessThan(2000);
          expect(Date.parse(stopped?.lastTransitionTime ?? '') - recorded).toBeGreaterThanOrEqual(
            IDLE_LIMIT_MS,
          );
        } finally {
          cell.close();
        }
      },
      600_000,
    );

    test.concurrent(
      'an H2O engine whose job runs past its idle limit stays RUNNING, and terminates once idle after it',
      async () => {
        const id = 'training';
        const created = await asUser('POST', `/v1/${W}/h2oEngines?h2oEngineId=${id}`, {
          profile: 'workspaces/global/h2oEngineProfiles/real',
          h2oEngineVersion: 'workspaces/global/h2oEngineVersions/real',
          nodeCount: '1',
          cpu: '1',
          memoryBytes: String(1024 ** 3),
          maxIdleDuration: `${IDLE_LIMIT_MS / 1000}s`,
        });
        expect(created.status).toBe(200);
        const uid = (created.json['h2oEngine'] as { uid: string }).uid;
        await reachesState(
          api(),
          { namespace: NAMESPACE, plural: 'h2oengines', name: `lab.${id}` },
          'STATE_RUNNING',
          240_000,
        );
        const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
        const pods = await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: ownedBy(uid) });
        const ip = pods.items.find((p) => p.metadata?.deletionTimestamp === undefined)?.status?.podIP ?? '';
        const h2o = `http://${ip}:54321/${W}/h2oEngines/${id}/3`;

        // Work without traffic through the engine's address: a frame made in the cloud, then a model
        // trained on it for longer than the idle limit, asked of H2O at the pod's own address.
        const frame = jobKey(
          await h2oPost(`${h2o}/CreateFrame`, {
            dest: 'loans',
            rows: '20000',
            cols: '10',
            seed: '1',
            has_response: 'true',
          }),
        );
        await waitFor(
          async () => {
            const jobs = (await (await fetch(`${h2o}/Jobs/${frame}`)).json()) as {
              jobs: { status: string }[];
            };
            return jobs.jobs[0]?.status === 'DONE' ? true : undefined;
          },
          { what: 'H2O to make the frame' },
        );
        const started = new Date();
        let lastSeen: unknown;
        let lastJob: unknown;
        const training = jobKey(
          await h2oPost(`${h2o}/ModelBuilders/gbm`, {
            training_frame: 'loans',
            response_column: 'response',
            // More trees than a minute allows, each small enough for the node's memory.
            ntrees: '20000',
            max_depth: '5',
            seed: '1',
            max_runtime_secs: String(JOB_MS / 1000),
          }),
        );

        // Only a probe that found the job running can record activity a whole idle limit after it
        // started; the engine is still RUNNING then, the job still running.
        const kept = await waitFor(
          async () => {
            const engine = await h2oObject(`lab.${id}`);
            lastSeen = {
              state: engine.status?.state,
              annotation: engine.metadata?.annotations?.[LAST_ACTIVITY],
            };
            lastJob = await (await fetch(`${h2o}/Jobs/${training}`)).json().catch(() => 'gone');
            const at = Date.parse(engine.metadata?.annotations?.[LAST_ACTIVITY] ?? '');
            return at >= started.getTime() + IDLE_LIMIT_MS ? engine : undefined;
          },
          {
            what: 'a probe to find the job running past the idle limit',
            timeoutMs: JOB_MS,
            intervalMs: 500,
            explain: () =>
              `started ${started.toISOString()}, ${JSON.stringify(lastSeen)}, ${JSON.stringify(lastJob)}`,
          },
        );
        expect(kept.status?.state).toBe('STATE_RUNNING');
        const job = (await (await fetch(`${h2o}/Jobs/${training}`)).json()) as { jobs: { status: string }[] };
        expect(job.jobs[0]?.status).toBe('RUNNING');

        // After the job, the engine terminates a full idle limit after its end.
        const terminated = await reachesState(
          api(),
          { namespace: NAMESPACE, plural: 'h2oengines', name: `lab.${id}` },
          'STATE_TERMINATED',
          JOB_MS + 3 * IDLE_LIMIT_MS + 60_000,
        );
        const stopped = terminated.status?.conditions?.find((c) => c.type === 'Stopped') as
          { reason: string; lastTransitionTime: string } | undefined;
        expect(stopped?.reason).toBe('MaxIdleDurationExceeded');
        expect(Date.parse(stopped?.lastTransitionTime ?? '')).toBeGreaterThanOrEqual(
          started.getTime() + JOB_MS,
        );
      },
      600_000,
    );
  });
}
