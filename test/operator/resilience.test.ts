/**
 * Two operator replicas, the leader killed at random points — and twice paused (SIGSTOP) until
 * the other has taken over — while 100 engines are created, paused, terminated and deleted
 * through the API: once the operators run to the end, every engine is in the state its intent
 * asks for, no workload is orphaned or duplicated, no data volume of an engine that still exists
 * was ever deleted, and a paused leader that wakes up after the takeover writes nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  Watch,
  type KubernetesObject,
  type V1Lease,
} from '@kubernetes/client-node';
import { useApiServer } from '../helpers/api-server.ts';
import { watchUntil } from '../helpers/watch.ts';
import { GIB, numeric, ok, operatorLeaseHeldBy, PROFILE as BASE_PROFILE } from './fixtures.ts';
import { LEASE } from '../charts/permissions.ts';

const NAMESPACE = 'resilience';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const api = useApiServer({ namespace: NAMESPACE });
const enc = encodeURIComponent;
const KILLS = 12;
/** Leader kills after which the leader is paused instead, until the other replica has taken over. */
const STALLS = new Set([4, 8]);
/** How long the chaos may go without a leading replica to kill or stall before it gives up. */
const NO_LEADER_MS = 60_000;
/** How long, after the last kill, every engine has to reach the state its intent asks for. */
const SETTLE_MS = 180_000;

/** A small seeded generator, so that a failing run can be replayed with its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every engine the same small size, so that a hundred fit on the simulated nodes. */
const PROFILE = {
  ...BASE_PROFILE,
  memoryBytesConstraint: numeric(String(GIB), String(GIB)),
  storageBytesConstraint: numeric(String(GIB), String(GIB)),
  maxIdleDurationConstraint: { min: '0s', default: '0s' },
  maxRunningDurationConstraint: { min: '0s', default: '0s' },
};

interface Plan {
  kind: 'dai' | 'notebook' | 'h2o';
  id: string;
  /** What happens after creation. */
  then: 'run' | 'stop' | 'delete';
}

const COLLECTIONS = { dai: 'daiEngines', notebook: 'notebookEngines', h2o: 'h2oEngines' } as const;
const PLURALS = { dai: 'daiengines', notebook: 'notebookengines', h2o: 'h2oengines' } as const;
const BODIES = {
  dai: {
    profile: 'workspaces/global/daiEngineProfiles/p',
    daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6',
  },
  notebook: {
    profile: 'workspaces/global/notebookEngineProfiles/p',
    notebookImage: 'workspaces/global/notebookEngineImages/img',
  },
  h2o: {
    profile: 'workspaces/global/h2oEngineProfiles/p',
    h2oEngineVersion: 'workspaces/global/h2oEngineVersions/3.46.0.1',
  },
} as const;

function plans(): Plan[] {
  const kinds: Plan['kind'][] = ['dai', 'dai', 'notebook', 'dai', 'h2o'];
  const thens: Plan['then'][] = ['run', 'stop', 'delete', 'run', 'stop'];
  return Array.from({ length: 100 }, (_, i) => ({
    kind: kinds[i % kinds.length] ?? 'dai',
    id: `e${i}`,
    then: thens[Math.floor(i / 5) % thens.length] ?? 'run',
  }));
}

/** Runs `tasks` with at most `limit` in flight. */
async function inParallel<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const item = items[next++];
        if (item !== undefined) await task(item);
      }
    }),
  );
}

/** Whether a process has exited (its exit event may still be on its way). */
const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;

/** Resolves with the exit code once `child` has exited, at once if it already has. */
function exitOf(child: ChildProcess): Promise<number | null> {
  if (exited(child)) return Promise.resolve(child.exitCode);
  return new Promise((resolve) =>
    child.once('exit', (code: number | null) => {
      resolve(code);
    }),
  );
}

/** `promise`, or a rejection saying what did not happen within `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`${what} within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What happened to the replicas, in order, for a failure's message: each entry at its time of
 * day (UTC), to be read beside the replicas' logs.
 */
class Timeline {
  readonly entries: string[] = [];

  note(entry: string): void {
    this.entries.push(`${new Date().toISOString().slice(11, 23)} ${entry}`);
  }
}
const timeline = new Timeline();
/** Set once the test is over: no replica is started after. */
let ended = false;

/** How long a woken leader may take to notice it lost its lease and exit (its stop grace is 2 s). */
const WOKEN_EXIT_MS = 30_000;

class OperatorProcess {
  private child: ChildProcess | undefined;
  /** Where the current process's lines begin in the log file. */
  private logStart = 0;

  readonly identity: string;
  private readonly kubeconfig: string;
  readonly logFile: string;
  private readonly log: number;
  private readonly timeline: Timeline;

  constructor(identity: string, kubeconfig: string, logFile: string, timeline: Timeline) {
    this.identity = identity;
    this.kubeconfig = kubeconfig;
    this.logFile = logFile;
    this.log = openSync(logFile, 'a');
    this.timeline = timeline;
  }

  /** Set while this test stops the process itself (a kill, a stall it must exit from). */
  private stopping = false;

  start(): void {
    // A test that ran out of time leaves its chaos running: it starts nothing after the end.
    if (ended) return;
    this.stopping = false;
    this.logStart = statSync(this.logFile).size;
    const child = spawn(process.execPath, [resolve(ROOT, 'operator/src/main.ts')], {
      env: {
        ...process.env,
        KUBECONFIG: this.kubeconfig,
        AIEM_NAMESPACE: NAMESPACE,
        AIEM_OPERATOR_PORT: '0',
        AIEM_OPERATOR_HOST: '127.0.0.1',
        // The same identity after a restart takes its own lease back at once.
        AIEM_OPERATOR_ID: this.identity,
        AIEM_LEASE_DURATION_MS: '3000',
        AIEM_LEASE_RENEW_DEADLINE_MS: '2000',
        AIEM_LEASE_RETRY_PERIOD_MS: '500',
        // Every apiserver call is logged (debug), to prove a paused leader wrote nothing after.
        AIEM_LOG_LEVEL: 'debug',
      },
      // Kept with the cluster's component logs, which a failing test prints.
      stdio: ['ignore', this.log, this.log],
    });
    this.child = child;
    this.timeline.note(`${this.identity} started (pid ${String(child.pid)})`);
    // A replica that exits by itself (on a loaded machine, a leader that missed its renew
    // deadline fences itself off) is started again, as its Deployment's kubelet would.
    child.once('exit', (code, signal) => {
      if (this.stopping || this.child !== child) return;
      this.timeline.note(`${this.identity} exited by itself (${String(code ?? signal)})`);
      this.start();
    });
  }

  /**
   * Whether the current process leads: it is running, it has started its controllers, and it has
   * not said it lost its lease. The lease alone does not say so: a leader that missed its renew
   * deadline exits and is started again under the same name, as a standby until it wins the lease.
   */
  leading(): boolean {
    const child = this.child;
    if (child === undefined || exited(child)) return false;
    const lines = readFileSync(this.logFile).subarray(this.logStart).toString('utf8');
    return lines.includes('"leading; starting controllers"') && !lines.includes('within the renew deadline');
  }

  /** SIGKILL: no chance to finish a step, release the lease or flush anything. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === undefined || exited(child)) return;
    this.stopping = true;
    const exit = exitOf(child);
    child.kill('SIGKILL');
    await exit;
    this.timeline.note(`${this.identity} killed`);
  }

  /**
   * Stalls the current process: SIGSTOP (it keeps its connections and its lease but does nothing,
   * as if starved) until `until` settles, then SIGCONT. Resolves once that same process, woken,
   * has exited by itself, with its exit code and the apiserver calls it logged after waking.
   */
  async stall(
    until: () => Promise<unknown>,
  ): Promise<{ exitCode: number | null; callsAfterWaking: string[] }> {
    const child = this.child;
    if (child === undefined) throw new Error(`${this.identity} has no process to stall`);
    // The stalled process ends with the stall: the test starts the next one itself.
    this.stopping = true;
    const exit = exitOf(child);
    child.kill('SIGSTOP');
    this.timeline.note(`${this.identity} paused`);
    try {
      await until();
    } finally {
      child.kill('SIGCONT');
    }
    const woken = Date.now();
    this.timeline.note(`${this.identity} woken`);
    const exitCode = await within(
      exit,
      WOKEN_EXIT_MS,
      `${this.identity}, woken after losing its lease, did not exit`,
    );
    this.timeline.note(`${this.identity} exited after waking (${String(exitCode)})`);
    return { exitCode, callsAfterWaking: this.callsSince(woken) };
  }

  /** The apiserver calls this process logged at or after `since` (ms since the epoch). */
  callsSince(since: number): string[] {
    return readFileSync(this.logFile, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"apiserver call"'))
      .map((line) => JSON.parse(line) as { time: number; verb: string; what: string })
      .filter((entry) => entry.time >= since)
      .map((entry) => `${entry.verb} ${entry.what}`);
  }
}

const leaseHolder = async (): Promise<string | undefined> =>
  (
    await api()
      .cluster.kubeConfig.makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: LEASE, namespace: NAMESPACE })
      .catch(() => undefined as V1Lease | undefined)
  )?.spec?.holderIdentity ?? undefined;

/** Resolves once the operator lease is held by `identity`. */
const heldBy = (identity: string): Promise<V1Lease> =>
  operatorLeaseHeldBy(api().cluster.kubeConfig, NAMESPACE, identity);
afterAll(async () => {
  ended = true;
  for (const operator of operators) await operator.kill();
  // Also when the test ran out of time, whatever it was waiting for.
  if ((globalThis.__failedTests ?? 0) > 0)
    console.error(`Operator replicas:\n${timeline.entries.join('\n')}`);
});
const operators: OperatorProcess[] = [];

test('every engine ends as its intent asks, with no orphaned, duplicated or lost workloads, across 12 leader kills and 2 stalls of two replicas', async () => {
  const rest = (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> =>
    ok(api().rest(method, path, body));
  for (const c of ['daiEngineProfiles', 'h2oEngineProfiles', 'notebookEngineProfiles'])
    await rest('POST', `/v1/workspaces/global/${c}?${c.replace(/s$/, '')}Id=p`, PROFILE);
  await rest('POST', '/v1/workspaces/global/daiEngineVersions?daiEngineVersionId=1.10.6', {
    image: 'dai:1.10.6',
  });
  await rest('POST', '/v1/workspaces/global/h2oEngineVersions?h2oEngineVersionId=3.46.0.1', {
    image: 'h2o:3',
  });
  await rest('POST', '/v1/workspaces/global/notebookEngineImages?notebookEngineImageId=img', {
    image: 'nb:1',
    enabled: true,
  });

  const kubeConfig = api().cluster.kubeConfig;
  // Every claim deletion during the run, to prove no kept engine lost its data.
  const deletedClaims: string[] = [];
  const claimWatch = await new Watch(kubeConfig).watch(
    `/api/v1/namespaces/${NAMESPACE}/persistentvolumeclaims`,
    {},
    (type: string, object: KubernetesObject) => {
      if (type === 'DELETED')
        deletedClaims.push(object.metadata?.annotations?.['engine.h2o.ai/engine'] ?? '?');
    },
    () => undefined,
  );

  const seed = Number(process.env['AIEM_CHAOS_SEED'] ?? Date.now() % 100_000);
  const next = random(seed);
  timeline.note(`chaos seed ${seed}`);
  const replicas = ['resilience-a', 'resilience-b'].map(
    (identity) =>
      new OperatorProcess(
        identity,
        api().cluster.kubeconfigPath,
        join(api().cluster.runDir, `${identity}.log`),
        timeline,
      ),
  );
  operators.push(...replicas);
  const [first, second] = replicas as [OperatorProcess, OperatorProcess];
  first.start();
  await heldBy(first.identity);
  second.start();
  const progress = { working: true };
  const stalls: { identity: string; exitCode: number | null; callsAfterWaking: string[] }[] = [];
  let kills = 0;
  const stalledAt = new Set<number>();
  let leaderSeen = Date.now();
  const chaos = (async (): Promise<void> => {
    while (progress.working || kills < KILLS) {
      // Long enough for a new process to start its controllers and get into the work.
      await new Promise((r) => setTimeout(r, 1000 + next() * 3000));
      // Only a leading process is killed or stalled. The lease may still name a replica whose
      // process has since exited by itself and been started again, a standby until it wins the
      // lease back: stalled, it would never exit; killed, it would count as a leader killed.
      const holder = await leaseHolder();
      const leader = replicas.find((r) => r.identity === holder && r.leading());
      if (leader === undefined) {
        if (Date.now() - leaderSeen > NO_LEADER_MS) throw new Error(`no replica led for ${NO_LEADER_MS} ms`);
        continue;
      }
      leaderSeen = Date.now();
      const other = leader === first ? second : first;
      if (STALLS.has(kills) && !stalledAt.has(kills)) {
        stalledAt.add(kills);
        const stall = await leader.stall(() => heldBy(other.identity));
        stalls.push({ identity: `${leader.identity}@${kills}`, ...stall });
        leader.start();
        continue;
      }
      await leader.kill();
      leader.start();
      kills++;
    }
  })().then(
    () => undefined,
    (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
  );
  /** What happened to the replicas, for a failure's message. */
  const history = (): string => `seed ${seed}; ${kills} kills; replicas: ${timeline.entries.join(', ')}`;

  const all = plans();
  const path = (p: Plan): string => `/v1/${enc(`workspaces/chaos/${COLLECTIONS[p.kind]}/${p.id}`)}`;
  await inParallel(all, 8, async (p) => {
    await rest(
      'POST',
      `/v1/workspaces/chaos/${COLLECTIONS[p.kind]}?${COLLECTIONS[p.kind].replace(/s$/, '')}Id=${p.id}`,
      BODIES[p.kind],
    );
  });
  await inParallel(all, 8, async (p) => {
    if (p.then === 'stop') await rest('POST', `${path(p)}:${p.kind === 'h2o' ? 'terminate' : 'pause'}`);
    if (p.then === 'delete') await rest('DELETE', path(p));
  });
  progress.working = false;
  const chaosFailed = await chaos;
  if (chaosFailed !== undefined) throw new Error(`${chaosFailed.message}; ${history()}`);
  expect(kills).toBeGreaterThanOrEqual(KILLS);
  // Each paused leader, once woken after the other took over, exited (lost leadership) having
  // sent the apiserver nothing: no moment in which both acted.
  expect(stalls.map((s) => s.exitCode)).toEqual([1, 1]);
  expect(stalls.flatMap((s) => s.callsAfterWaking)).toEqual([]);

  // The last operator runs to the end: wait until every engine reports what its intent asks.
  const wanted = new Map(
    all
      .filter((p) => p.then !== 'delete')
      .map((p) => [
        `${PLURALS[p.kind]}/chaos.${p.id}`,
        p.then === 'run' ? 'STATE_RUNNING' : p.kind === 'h2o' ? 'STATE_TERMINATED' : 'STATE_PAUSED',
      ]),
  );
  const deadline = Date.now() + SETTLE_MS;
  for (const plural of new Set(Object.values(PLURALS))) {
    const states = new Map<string, string | undefined>();
    const why = new Map<string, string>();
    const mine = [...wanted].filter(([key]) => key.startsWith(`${plural}/`));
    const deleted = all
      .filter((p) => p.then === 'delete' && PLURALS[p.kind] === plural)
      .map((p) => `chaos.${p.id}`);
    await watchUntil<
      KubernetesObject & {
        status?: { state?: string; conditions?: { type: string; status: string; message?: string }[] };
      }
    >(
      kubeConfig,
      `/apis/engine.h2o.ai/v1/namespaces/${NAMESPACE}/${plural}`,
      (event) => {
        const name = event.object.metadata?.name ?? '';
        states.set(name, event.type === 'DELETED' ? undefined : event.object.status?.state);
        const failed = event.object.status?.conditions?.find(
          (c) => c.type === 'Failed' && c.status === 'True',
        );
        if (failed) why.set(name, failed.message ?? '');
        return (
          mine.every(([key, state]) => states.get(key.slice(plural.length + 1)) === state) &&
          deleted.every((name) => states.get(name) === undefined)
        );
      },
      {
        what: `every ${plural} as intended (seed ${seed})`,
        timeoutMs: Math.max(1, deadline - Date.now()),
        trigger: () => Promise.resolve(),
      },
    ).catch((error: unknown) => {
      const off = [
        ...mine.filter(([key, state]) => states.get(key.slice(plural.length + 1)) !== state),
        ...deleted.filter((name) => states.get(name) !== undefined).map((name) => [name, 'gone']),
      ].map(
        ([key, state]) =>
          `${key ?? ''} is ${String(states.get((key ?? '').split('/').pop() ?? ''))}, not ${state ?? ''}`,
      );
      const reasons = [...why].map(([name, message]) => `${name} failed: ${message}`);
      throw new Error(
        `${error instanceof Error ? error.message.slice(0, 200) : JSON.stringify(error)}; ${[...off, ...reasons].join('; ')}; ${history()}`,
      );
    });
  }
  claimWatch.abort();

  // What exists now, by engine.
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const engineOf = (o: KubernetesObject): string => o.metadata?.annotations?.['engine.h2o.ai/engine'] ?? '?';
  const live = (o: KubernetesObject): boolean => o.metadata?.deletionTimestamp === undefined;
  const count = (objects: KubernetesObject[]): Map<string, number> => {
    const counts = new Map<string, number>();
    for (const o of objects.filter(live)) counts.set(engineOf(o), (counts.get(engineOf(o)) ?? 0) + 1);
    return counts;
  };
  const sets = count((await apps.listNamespacedStatefulSet({ namespace: NAMESPACE })).items);
  const pods = count((await core.listNamespacedPod({ namespace: NAMESPACE })).items);
  const claims = count((await core.listNamespacedPersistentVolumeClaim({ namespace: NAMESPACE })).items);

  const expected = {
    sets: new Map<string, number>(),
    pods: new Map<string, number>(),
    claims: new Map<string, number>(),
  };
  for (const p of all.filter((x) => x.then !== 'delete')) {
    const name = `chaos.${p.id}`;
    // A running engine has its one workload; a paused one keeps the one it ran with, and one
    // paused before it ever ran has none yet (its workload is made when it first starts).
    if (p.then === 'run' || sets.has(name) || claims.has(name)) expected.sets.set(name, 1);
    if (p.then === 'run') expected.pods.set(name, 1);
    // An engine paused before it ever ran has no data yet; one that ran keeps its one claim.
    if (p.kind !== 'h2o' && (p.then === 'run' || claims.has(name))) expected.claims.set(name, 1);
  }
  expect(Object.fromEntries(sets)).toEqual(Object.fromEntries(expected.sets));
  expect(Object.fromEntries(pods)).toEqual(Object.fromEntries(expected.pods));
  expect(Object.fromEntries(claims)).toEqual(Object.fromEntries(expected.claims));
  // Claims were deleted only with their engines.
  const kept = new Set(expected.sets.keys());
  expect(deletedClaims.filter((engine) => kept.has(engine))).toEqual([]);
}, 600_000);
