/**
 * `make bench-queue`: engines contending for GPUs through the product's queues, against the same
 * number of bare StatefulSets queued in Kueue directly, in the same run on the same cluster.
 *
 * AIEM_BENCH_QUEUE_ENGINES (default 500) engines ask for one GPU each against a workspace quota of
 * AIEM_BENCH_QUEUE_GPUS (default 50) on simulated GPU nodes with more GPUs than the quota (the
 * quota binds, not the nodes). Each one holds its GPU for AIEM_BENCH_QUEUE_HOLD_MS (default
 * 2,000 ms) once it runs, and is then stopped: the product's engines paused through the API, the
 * bare StatefulSets deleted. Reported, for both sides:
 *
 * - Q1 admission throughput: GPUs handed over per second from the first to the last admission;
 * - Q2 hand-over time: from a GPU freeing (the pause or delete call answered) to the engine next
 *   in line running — the i-th run after the first full quota against the (i − quota)-th
 *   freeing, p50 and p95; an engine counts as running when the API says RUNNING (the product) or
 *   its pod is Running (Kueue alone);
 * - Q3 time in the queue: from creation to running, p95 (it depends on the hold time);
 * - Q4 admissions over quota: pods holding a GPU without Kueue's admission gate, beyond the
 *   quota, sampled every second (must be 0).
 *
 * Both sides are watched the same way: one list call every 250 ms (the API's engine list; the
 * pods of the namespace). Prints a table and writes .run/bench-queue.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type V1Pod,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { dump } from 'js-yaml';
import { pino } from 'pino';
import { startGateway } from '../gateway/src/gateway.ts';
import { apiHandlers } from '../gateway/src/services/api.ts';
import { ResourceStore } from '../gateway/src/store/store.ts';
import { readQueueingConfig } from '../operator/src/queueing/config.ts';
import { startOperator } from '../operator/src/operator.ts';
import { startCluster } from '../test/cluster/cluster.ts';
import { ADMISSION_GATE, QUEUE_LABEL } from '../test/cluster/kueue.ts';
import { GPU_TAINT } from '../test/cluster/nodes.ts';
import { waitFor } from '../test/cluster/wait.ts';
import { allowAll, developmentIdentity } from '../test/helpers/development-identity.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const NAMESPACE = 'bench-queue';
const ENGINES = Number(process.env['AIEM_BENCH_QUEUE_ENGINES'] ?? 500);
const QUOTA = Number(process.env['AIEM_BENCH_QUEUE_GPUS'] ?? 50);
const HOLD_MS = Number(process.env['AIEM_BENCH_QUEUE_HOLD_MS'] ?? 2_000);
const GPUS_PER_NODE = 8;
const POLL_MS = 250;
const CONCURRENCY = 16;
const GPU_CLASS = 'simulated-gpu';
const KUEUE = { group: 'kueue.x-k8s.io', version: 'v1beta2' };

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

/** Runs `work` for 0..count-1, `concurrency` at a time. */
async function inParallel(
  count: number,
  concurrency: number,
  work: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/** What one side of the run observed. */
interface Observed {
  created: Map<string, number>;
  running: Map<string, number>;
  freed: number[];
  overQuota: number;
  maxHeld: number;
}

interface Figures {
  throughput: number;
  handoverP50: number;
  handoverP95: number;
  queuedP95: number;
  overQuota: number;
  maxHeld: number;
}

function figures(observed: Observed): Figures {
  const runs = [...observed.running.values()].sort((a, b) => a - b);
  const freed = [...observed.freed].sort((a, b) => a - b);
  // With the quota full, the i-th run waits for the (i − quota)-th GPU to free.
  const handovers = runs.slice(QUOTA).flatMap((at, i) => {
    const free = freed[i];
    return free === undefined ? [] : [Math.max(0, at - free)];
  });
  const queued = [...observed.running].map(([name, at]) => at - (observed.created.get(name) ?? at));
  const first = runs[0] ?? 0;
  const last = runs[runs.length - 1] ?? 0;
  return {
    throughput: (runs.length - 1) / ((last - first) / 1000),
    handoverP50: percentile(handovers, 50),
    handoverP95: percentile(handovers, 95),
    queuedP95: percentile(queued, 95),
    overQuota: observed.overQuota,
    maxHeld: observed.maxHeld,
  };
}

/** GPUs held by pods Kueue has let through (no admission gate) that are not going away. */
function gpusHeld(pods: readonly V1Pod[]): number {
  return pods
    .filter((pod) => pod.metadata?.deletionTimestamp === undefined)
    .filter((pod) => !['Succeeded', 'Failed'].includes(pod.status?.phase ?? ''))
    .filter((pod) => !(pod.spec?.schedulingGates ?? []).some((gate) => gate.name === ADMISSION_GATE))
    .reduce(
      (sum, pod) =>
        sum +
        (pod.spec?.containers ?? []).reduce(
          (held, container) => held + Number(container.resources?.requests?.['nvidia.com/gpu'] ?? 0),
          0,
        ),
      0,
    );
}

const cluster = await startCluster({
  log: () => undefined,
  kueue: { namespaces: [NAMESPACE] },
  nodes: {
    cpuNodes: 1,
    gpuNodes: Math.ceil((QUOTA * 1.2) / GPUS_PER_NODE),
    gpusPerNode: GPUS_PER_NODE,
  },
});
const result: Partial<Record<'product' | 'kueue', Figures>> = {};
try {
  await cluster.kubectl(['apply', '-f', 'crds/']);
  await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  const apps = cluster.kubeConfig.makeApiClient(AppsV1Api);
  const custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);

  /**
   * One side of the run: creates ENGINES of what `side` makes, watches which run (a list every
   * POLL_MS), frees each one's GPU HOLD_MS after it runs, and samples the GPUs held every second.
   */
  const contend = async (side: {
    what: string;
    /** Creates the i-th one; its name as `running` reports it. */
    create: (i: number) => Promise<string>;
    /** The names of those running now. */
    running: () => Promise<string[]>;
    /** Stops one, freeing its GPU. */
    free: (name: string) => Promise<void>;
  }): Promise<Figures> => {
    const observed: Observed = {
      created: new Map(),
      running: new Map(),
      freed: [],
      overQuota: 0,
      maxHeld: 0,
    };
    const stopping = new AbortController();
    const every = async (ms: number, work: () => Promise<void>): Promise<void> => {
      while (!stopping.signal.aborted) {
        await work();
        await new Promise((done) => setTimeout(done, ms));
      }
    };
    const holds: Promise<void>[] = [];
    const sampling = every(1_000, async () => {
      const held = gpusHeld((await core.listNamespacedPod({ namespace: NAMESPACE })).items);
      observed.maxHeld = Math.max(observed.maxHeld, held);
      if (held > QUOTA) observed.overQuota++;
    });
    const watching = every(POLL_MS, async () => {
      const names = await side.running();
      const now = performance.now();
      for (const name of names.filter((n) => !observed.running.has(n))) {
        observed.running.set(name, now);
        holds.push(
          new Promise((done) => setTimeout(done, HOLD_MS)).then(async () => {
            await side.free(name);
            observed.freed.push(performance.now());
          }),
        );
      }
    });
    // A long run says how far it got, so a slow side shows its pace before it ends.
    const progress = every(30_000, () => {
      if (observed.running.size > 0)
        console.error(`${side.what}: ${observed.running.size} of ${ENGINES} have run`);
      return Promise.resolve();
    });
    await inParallel(ENGINES, CONCURRENCY, async (i) => {
      const started = performance.now();
      observed.created.set(await side.create(i), started);
    });
    await waitFor(() => Promise.resolve(observed.running.size >= ENGINES ? true : undefined), {
      what: `${ENGINES} ${side.what} to have run`,
      timeoutMs: 30 * 60_000,
      intervalMs: 1_000,
    });
    stopping.abort();
    await Promise.all([sampling, watching, progress]);
    await Promise.all(holds);
    return figures(observed);
  };

  // ---- Kueue alone: bare StatefulSets in a LocalQueue of the same quota.
  {
    const objects: [string, string, object][] = [
      [
        'resourceflavors',
        '',
        {
          kind: 'ResourceFlavor',
          metadata: { name: 'bare' },
          spec: { nodeLabels: { 'nvidia.com/gpu.product': 'Simulated-GPU' } },
        },
      ],
      [
        'clusterqueues',
        '',
        {
          kind: 'ClusterQueue',
          metadata: { name: 'bare' },
          spec: {
            namespaceSelector: {},
            resourceGroups: [
              {
                coveredResources: ['cpu', 'memory', 'nvidia.com/gpu'],
                flavors: [
                  {
                    name: 'bare',
                    resources: [
                      { name: 'cpu', nominalQuota: '100000' },
                      { name: 'memory', nominalQuota: '100000Gi' },
                      { name: 'nvidia.com/gpu', nominalQuota: String(QUOTA) },
                    ],
                  },
                ],
              },
            ],
          },
        },
      ],
      [
        'localqueues',
        NAMESPACE,
        {
          kind: 'LocalQueue',
          metadata: { name: 'bare', namespace: NAMESPACE },
          spec: { clusterQueue: 'bare' },
        },
      ],
    ];
    for (const [plural, namespace, body] of objects) {
      const typed = { apiVersion: `${KUEUE.group}/${KUEUE.version}`, ...body };
      if (namespace === '') await custom.createClusterCustomObject({ ...KUEUE, plural, body: typed });
      else await custom.createNamespacedCustomObject({ ...KUEUE, namespace, plural, body: typed });
    }
    const statefulSet = (name: string): V1StatefulSet => ({
      metadata: { name, namespace: NAMESPACE, labels: { [QUEUE_LABEL]: 'bare' } },
      spec: {
        replicas: 1,
        serviceName: name,
        selector: { matchLabels: { bare: name } },
        template: {
          metadata: { labels: { bare: name } },
          spec: {
            terminationGracePeriodSeconds: 0,
            tolerations: [{ ...GPU_TAINT, operator: 'Equal' }],
            containers: [
              {
                name: 'engine',
                image: 'engine:simulated',
                resources: {
                  requests: { cpu: '1', memory: '1Gi', 'nvidia.com/gpu': '1' },
                  limits: { 'nvidia.com/gpu': '1' },
                },
              },
            ],
          },
        },
      },
    });
    result.kueue = await contend({
      what: 'bare StatefulSets',
      create: async (i) => {
        const name = `bare-${i}`;
        await apps.createNamespacedStatefulSet({ namespace: NAMESPACE, body: statefulSet(name) });
        return name;
      },
      running: async () =>
        (await core.listNamespacedPod({ namespace: NAMESPACE })).items
          .filter((pod) => pod.status?.phase === 'Running')
          .flatMap((pod) => pod.metadata?.labels?.['bare'] ?? []),
      free: async (name) => {
        await apps.deleteNamespacedStatefulSet({ name, namespace: NAMESPACE });
      },
    });
    // Printed as soon as known: the product's side of a long run may be stopped.
    console.error(`measured: Kueue alone ${JSON.stringify(result.kueue)}`);
    await waitFor(
      async () =>
        (await core.listNamespacedPod({ namespace: NAMESPACE })).items.length === 0 ? true : undefined,
      { what: 'the bare pods to be gone', timeoutMs: 120_000 },
    );
  }

  // ---- The product: engines through the API, queued by the operator.
  const queueingFile = join(cluster.runDir, 'queueing.yaml');
  writeFileSync(
    queueingFile,
    dump({
      engines: 'gpu',
      gpuClasses: [{ name: GPU_CLASS, nodeLabels: { 'nvidia.com/gpu.product': 'Simulated-GPU' } }],
      workspaceQuota: { [GPU_CLASS]: QUOTA },
      cohort: '',
    }),
  );
  const store = new ResourceStore(cluster.kubeConfig, NAMESPACE);
  await store.startCaches();
  const gateway = await startGateway({
    host: '127.0.0.1',
    restPort: 0,
    grpcPort: 0,
    handlers: apiHandlers({ store, authorizer: allowAll }),
    authenticate: developmentIdentity,
    version: 'bench',
  });
  const operator = await startOperator({
    kubeConfig: cluster.kubeConfig,
    namespace: NAMESPACE,
    settings: { publicUrl: gateway.restUrl },
    log: pino({ level: 'silent' }),
    queueing: readQueueingConfig(queueingFile),
  });
  const rest = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${gateway.restUrl}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  const numeric = (min: string, def: string, max: string) => ({ min, default: def, max });
  const ws = '/v1/workspaces/bench';
  await rest('POST', `${ws}/daiEngineProfiles?daiEngineProfileId=gpu`, {
    enabled: true,
    cpuConstraint: numeric('1', '1', '1'),
    gpuConstraint: numeric('1', '1', '1'),
    memoryBytesConstraint: numeric('1', '1073741824', '1073741824'),
    storageBytesConstraint: numeric('1', '1073741824', '1073741824'),
    maxIdleDurationConstraint: { min: '0s', default: '0s' },
    maxRunningDurationConstraint: { min: '0s', default: '0s' },
    yamlGpuTolerations: `- key: ${GPU_TAINT.key}\n  operator: Exists\n  effect: ${GPU_TAINT.effect}\n`,
  });
  await rest('POST', `${ws}/daiEngineVersions?daiEngineVersionId=1.10.6`, { image: 'dai' });
  result.product = await contend({
    what: 'engines',
    create: async (i) => {
      await rest('POST', `${ws}/daiEngines?daiEngineId=e${i}`, {
        profile: 'workspaces/bench/daiEngineProfiles/gpu',
        daiEngineVersion: 'workspaces/bench/daiEngineVersions/1.10.6',
      });
      return `workspaces/bench/daiEngines/e${i}`;
    },
    running: async () =>
      (
        ((await rest('GET', `${ws}/daiEngines?pageSize=1000`))['daiEngines'] ?? []) as {
          name: string;
          state: string;
        }[]
      )
        .filter((engine) => engine.state === 'STATE_RUNNING')
        .map((engine) => engine.name),
    free: async (name) => {
      await rest('POST', `/v1/${name}:pause`, {});
    },
  });
  // What the operator asked of the apiserver for it, per engine: where its time goes.
  const requests = (await operator.registry.getSingleMetric('aiem_kube_requests_total')?.get())?.values ?? [];
  const byVerb = new Map<string, number>();
  for (const { labels, value } of requests) {
    const verb = String(labels['verb']);
    byVerb.set(verb, (byVerb.get(verb) ?? 0) + value);
  }
  console.error(
    `operator requests per engine: ${[...byVerb]
      .map(([verb, count]) => `${verb} ${(count / ENGINES).toFixed(1)}`)
      .join(', ')}`,
  );
  await operator.stop();
  await gateway.stop();
  await store.stopCaches();
} finally {
  await cluster.stop();
}

const { product, kueue } = result;
const ms = (value: number): string => `${(value / 1000).toFixed(2)} s`;
const rows: [string, string, string, string][] = [
  [
    'Q1 admissions per second',
    product.throughput.toFixed(1),
    kueue.throughput.toFixed(1),
    (product.throughput / kueue.throughput).toFixed(2),
  ],
  [
    'Q2 hand-over p50 (GPU freed → next running)',
    ms(product.handoverP50),
    ms(kueue.handoverP50),
    (product.handoverP50 / kueue.handoverP50).toFixed(2),
  ],
  [
    'Q2 hand-over p95',
    ms(product.handoverP95),
    ms(kueue.handoverP95),
    (product.handoverP95 / kueue.handoverP95).toFixed(2),
  ],
  [
    'Q3 time in the queue p95 (created → running)',
    ms(product.queuedP95),
    ms(kueue.queuedP95),
    (product.queuedP95 / kueue.queuedP95).toFixed(2),
  ],
  [
    'Q4 samples over quota (max GPUs held)',
    `${product.overQuota} (${product.maxHeld})`,
    `${kueue.overQuota} (${kueue.maxHeld})`,
    '-',
  ],
];
console.log(
  `\n${ENGINES} engines, 1 GPU each, quota ${QUOTA} GPUs, each held ${HOLD_MS} ms (the product vs StatefulSets queued in Kueue alone)\n`,
);
console.log('| measure | product | Kueue alone | ratio |\n| --- | --- | --- | --- |');
for (const row of rows) console.log(`| ${row.join(' | ')} |`);
mkdirSync(join(ROOT, '.run'), { recursive: true });
writeFileSync(
  join(ROOT, '.run', 'bench-queue.json'),
  JSON.stringify({ engines: ENGINES, quota: QUOTA, holdMs: HOLD_MS, ...result }, null, 2),
);
if (product.overQuota > 0 || kueue.overQuota > 0) process.exitCode = 1;
