/**
 * `make bench-api`: the gateway and the operator measured against the Kubernetes API they stand
 * on, in the same run on the same machine, so the figures are ratios that hold on any machine:
 *
 * - P3: creates of AIEM_BENCH_ENGINES engines (default 10,000) over REST, 32 at a time, against
 *   as many custom resources created straight at the apiserver, 32 at a time, each the object the
 *   API stored (recorded fields, finalizer), so that only what the API adds to a write counts;
 * - P1: GET of one engine over REST (token verified, permission checked, converted to JSON), 32
 *   at a time for a few seconds, against GET of its custom resource from the apiserver;
 * - P2: the first page of 50 of those engines (newest first), 32 at a time, against the
 *   apiserver's own page (`limit=50` with the workspace's label selector); P2n: the page after
 *   it, from its token, against the apiserver's continue; P2b: a filtered page (running engines
 *   with more than 1 CPU) against the apiserver's page by the closest label selector; P5g: the
 *   memory of the process serving them;
 * - P4: AIEM_BENCH_RUNNING DAI engines (default 1,000) created through the API until all are
 *   RUNNING under the operator (a process of its own, default settings), against as many
 *   StatefulSets applied straight to the cluster until all their pods are ready (the floor the
 *   cluster itself sets); P4b: the operator's writes per second while they are left alone;
 * - P5o: the operator's memory holding AIEM_BENCH_HELD engines (default 10,000), all but the
 *   running ones paused, as a cluster holds engines paused after they ran: each with its
 *   finalizer and its workload (a StatefulSet at 0 replicas, a Service, a ConfigMap), written
 *   straight to the apiserver, so that setting them up takes creates; P5g beside it: the
 *   gateway's memory holding the same engines (AIEM_BENCH_HEAP_SNAPSHOTS=1: both processes
 *   write heap snapshots there, to the working directory);
 * - P6: AIEM_BENCH_ADMITTED engines (default 1,000) written to the Kubernetes API as a user, as
 *   kubectl does, reviewed by the gateway's admission webhooks, against as many written by the
 *   cluster admin, whom the webhooks leave alone: what admission adds to a Kubernetes write;
 * - P4w: the operator's calls to the apiserver per engine P4 started, by verb (it reads through
 *   its watches, so every call is a write);
 * - P8: fairness between workspaces: the time to RUNNING of one engine in a quiet workspace
 *   (AIEM_BENCH_FAIR_TRIES tries, default 20, one after another; p95) while a busy workspace's
 *   AIEM_BENCH_FAIR engines (default 2,000) start.
 *
 * Prints a table; README records a run.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  KubernetesObjectApi,
  type KubernetesObject,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { pino } from 'pino';
import { customResources, WatchedCollection, type ListPage } from '../shared/watched-collection.ts';
import { pooled } from '../shared/kube-transport.ts';
import { RECORDED_ANNOTATION } from '../shared/recorded.ts';
import { withDigests } from '../operator/src/desired/digest.ts';
import { desiredObjects } from '../operator/src/desired/workload.ts';
import { daiEngineKind } from '../operator/src/kinds/dai-engine.ts';
import type { EngineResource } from '../operator/src/kinds/kind.ts';
import { engineView } from '../operator/src/kube/cluster-view.ts';
import { FINALIZER } from '../operator/src/reconcile/reconciler.ts';
import { startCluster, type Cluster } from '../test/cluster/cluster.ts';
import { applyConfigurations, webhookCertificate, webhookConfigurations } from '../test/cluster/webhooks.ts';
import { freePort } from '../test/cluster/ports.ts';
import { ProductProcess } from '../test/helpers/product-process.ts';
import { startLocalIdentity } from '../test/identity/local-identity.ts';

const NAMESPACE = 'bench';
const ENGINES_LISTED = Number(process.env['AIEM_BENCH_ENGINES'] ?? 10_000);
const CONCURRENCY = 32;
const LOAD_MS = 5_000;
/** P4: engines run at once (each asks for 1 CPU; the simulated nodes are sized for them). */
const ENGINES_STARTED = Number(process.env['AIEM_BENCH_RUNNING'] ?? 1_000);
/** P5o: engines the operator holds, most of them paused. */
const ENGINES_HELD = Number(process.env['AIEM_BENCH_HELD'] ?? 10_000);
/**
 * AIEM_BENCH_HEAP_SNAPSHOTS=1: heap snapshots of the operator and the gateway holding P5o's
 * engines, written to the working directory (Heap.*.heapsnapshot), to see what holds memory.
 */
const HEAP_SNAPSHOTS = process.env['AIEM_BENCH_HEAP_SNAPSHOTS'] === '1';
const SNAPSHOT_SIGNAL = '--heapsnapshot-signal=SIGUSR2';
/** P6: engines written through the admission webhooks. */
const ENGINES_ADMITTED = Number(process.env['AIEM_BENCH_ADMITTED'] ?? 1_000);
/** P8: engines a busy workspace starts, and the quiet workspace's engines timed meanwhile. */
const FAIR_BUSY = Number(process.env['AIEM_BENCH_FAIR'] ?? 2_000);
const FAIR_TRIES = Number(process.env['AIEM_BENCH_FAIR_TRIES'] ?? 20);
/** P4b: how long the running engines are left alone while the operator's writes are counted. */
const QUIET_MS = 30_000;

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
};

/** `call` from `concurrency` loops for `ms`: calls per second and latency percentiles. */
async function load(
  ms: number,
  concurrency: number,
  call: () => Promise<unknown>,
): Promise<{ calls: number; perSecond: number; p50: number; p99: number }> {
  for (let i = 0; i < 50; i++) await call(); // warm-up: connections, caches, JIT
  const times: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() - started < ms) {
        const start = performance.now();
        await call();
        times.push(performance.now() - start);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    calls: times.length,
    perSecond: times.length / seconds,
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
  };
}

/** Runs `count` calls, `concurrency` at a time; the elapsed milliseconds. */
async function batch(
  count: number,
  concurrency: number,
  call: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) await call(i);
    }),
  );
  return performance.now() - started;
}

/** A process's resident memory, from /proc. */
function rssBytes(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid ?? 0}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) * 1024;
}

/** The CPU time processes have used, in milliseconds, from /proc (utime + stime). */
function cpuMs(pids: readonly (number | undefined)[]): number {
  return pids.reduce<number>((total, pid) => {
    const stat = readFileSync(`/proc/${pid ?? 0}/stat`, 'utf8');
    // Fields after the command (which may hold spaces): state is the 3rd, utime the 14th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return total + (Number(fields[11]) + Number(fields[12])) * (1000 / CLOCK_TICKS);
  }, 0);
}
/** Linux's USER_HZ, which /proc's times count in. */
const CLOCK_TICKS = 100;

/**
 * {@link load}, and the CPU the serving processes spent per call: on a busy machine latency
 * waits for a core, while CPU per call is what the server itself costs.
 */
async function loadWithCpu(
  pids: readonly (number | undefined)[],
  call: () => Promise<unknown>,
): Promise<{ calls: number; perSecond: number; p50: number; p99: number; cpuPerCall: number }> {
  const before = cpuMs(pids);
  const result = await load(LOAD_MS, CONCURRENCY, call);
  // The warm-up's 50 calls are counted too.
  return { ...result, cpuPerCall: (cpuMs(pids) - before) / (result.calls + 50) };
}

/** Has the process write a heap snapshot (started with SNAPSHOT_SIGNAL); resolves once written. */
async function heapSnapshot(pid: number | undefined): Promise<string> {
  const ours = (): string[] => readdirSync('.').filter((f) => f.endsWith(`.${pid ?? 0}.0.001.heapsnapshot`));
  process.kill(pid ?? 0, 'SIGUSR2');
  let size = -1;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const file = ours()[0];
    if (file === undefined) continue;
    // Written in one go by the process's main thread: done when it stops growing.
    const now = statSync(file).size;
    if (now === size && now > 0) return file;
    size = now;
  }
}

/**
 * Resolves once `count` objects of a collection satisfy `done`, as a watched copy sees them: it
 * resumes a watch the apiserver ends and lists again after a 410, which a single long watch
 * over minutes of churn cannot promise.
 */
async function untilCount(
  collection: {
    kubeConfig: KubeConfig;
    path: string;
    listPage: (limit: number, token: string | undefined) => Promise<ListPage>;
  },
  done: (object: KubernetesObject) => boolean,
  count: number,
): Promise<void> {
  const { kubeConfig, path, listPage } = collection;
  const matching = new Set<string>();
  const reached = Promise.withResolvers<undefined>();
  // It keeps nothing but presence; each object is judged as it passes.
  const judged = new WatchedCollection<true>({
    kubeConfig,
    path,
    listPage,
    keep: (object) => {
      const name = object.metadata?.name ?? '';
      if (done(object)) matching.add(name);
      else matching.delete(name);
      if (matching.size >= count) reached.resolve(undefined);
      return true;
    },
    log: pino({ level: 'silent' }),
    what: path,
  });
  await judged.start();
  await reached.promise;
  await judged.stop();
}

/** A DAI engine custom resource written straight to the apiserver, not through the API. */
function engineObject(
  workspace: string,
  id: string,
  spec: Record<string, unknown>,
  { annotations, finalizers }: { annotations?: Record<string, string>; finalizers?: string[] } = {},
): object {
  return {
    apiVersion: 'engine.h2o.ai/v1',
    kind: 'DAIEngine',
    metadata: {
      name: `${workspace}.${id}`,
      labels: { 'engine.h2o.ai/workspace': workspace, 'engine.h2o.ai/id': id },
      ...(annotations === undefined ? {} : { annotations }),
      ...(finalizers === undefined ? {} : { finalizers }),
    },
    spec,
  };
}

/**
 * Custom resources as a user of the cluster: a ServiceAccount of the benchmark's namespace that
 * may create engines, signed in with its token through a pooled client like the admin's.
 */
async function userKubeConfig(cluster: Cluster): Promise<CustomObjectsApi> {
  const name = 'bench-user';
  await cluster.kubectl(['create', 'serviceaccount', name, '-n', NAMESPACE]);
  await cluster.kubectl([
    'create',
    'role',
    name,
    '-n',
    NAMESPACE,
    '--verb=create,get',
    '--resource=daiengines.engine.h2o.ai',
  ]);
  await cluster.kubectl([
    'create',
    'rolebinding',
    name,
    '-n',
    NAMESPACE,
    `--role=${name}`,
    `--serviceaccount=${NAMESPACE}:${name}`,
  ]);
  const token = (await cluster.kubectl(['create', 'token', name, '-n', NAMESPACE, '--duration=2h'])).trim();
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'local', server: cluster.server, caFile: join(cluster.runDir, 'ca.crt') }],
    users: [{ name, token }],
    contexts: [{ name, cluster: 'local', user: name }],
    currentContext: name,
  });
  return pooled(config).makeApiClient(CustomObjectsApi);
}

/** An operator process and what its /metrics say. */
interface OperatorProcess {
  pid: number | undefined;
  /** Calls it has made to the apiserver (all writes: it reads through its watches). */
  /** Its V8 heap's size and use and its external memory (MiB), which its RSS holds. */
  heap(): Promise<string>;
  calls(): Promise<number>;
  /** The same calls by verb. */
  callsByVerb(): Promise<Map<string, number>>;
  /** Resolves once it holds at least `objects` objects and has nothing left to do. */
  idle(objects?: number): Promise<void>;
  stop(): Promise<void>;
}

async function startOperatorProcess(env: Record<string, string>): Promise<OperatorProcess> {
  const port = await freePort();
  const child = new ProductProcess('operator', 'operator/src/main.ts', {
    ...env,
    AIEM_OPERATOR_PORT: String(port),
  });
  await child.waitForLog('leading; starting controllers');
  const sum = (text: string, name: string): number =>
    text
      .split('\n')
      .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  const metrics = async (): Promise<string> => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const calls = async (): Promise<number> => sum(await metrics(), 'aiem_kube_requests_total');
  const callsByVerb = async (): Promise<Map<string, number>> => {
    const byVerb = new Map<string, number>();
    for (const line of (await metrics()).split('\n')) {
      const verb = /^aiem_kube_requests_total\{.*verb="([^"]+)"/.exec(line)?.[1];
      if (verb === undefined) continue;
      byVerb.set(verb, (byVerb.get(verb) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
    }
    return byVerb;
  };
  return {
    pid: child.pid,
    calls,
    callsByVerb,
    async heap(): Promise<string> {
      const text = await metrics();
      const mib = (name: string): string => (sum(text, name) / 2 ** 20).toFixed(0);
      const bySpace = [...text.matchAll(/^nodejs_heap_space_size_total_bytes\{space="(\w+)"\} (\d+)$/gm)].map(
        ([, space, bytes]) => `${space ?? ''} ${(Number(bytes) / 2 ** 20).toFixed(0)}`,
      );
      return `heap ${mib('nodejs_heap_size_total_bytes')} MiB (${mib('nodejs_heap_size_used_bytes')} used; ${bySpace.join(', ')}), external ${mib('nodejs_external_memory_bytes')} MiB`;
    },
    async idle(objects = 0): Promise<void> {
      let previous = -1;
      for (;;) {
        const text = await metrics().catch(() => '');
        const busy = sum(text, 'aiem_queue_depth') + sum(text, 'aiem_reconciles_in_flight');
        const made = sum(text, 'aiem_kube_requests_total');
        if (text !== '' && busy === 0 && made === previous && sum(text, 'aiem_cached_objects') >= objects)
          return;
        previous = made;
        await new Promise((resolve) => setTimeout(resolve, 2_000));
      }
    },
    stop: () => child.stop(),
  };
}

const cluster = await startCluster({
  log: () => undefined,
  // Room for the engines (1 CPU each) and as many bare StatefulSets on a few large nodes: every
  // simulated node adds its own heartbeats to the apiserver's load.
  nodes: {
    cpuNodes: Math.ceil((2 * ENGINES_STARTED + FAIR_BUSY + FAIR_TRIES) / 450) + 1,
    cpuNodeCapacity: { cpu: '256', memory: '1Ti', pods: '500' },
    gpuNodes: 1,
    gpusPerNode: 4,
  },
});
const rows: [string, string, string, string][] = [];
const report = (row: [string, string, string, string]): void => {
  rows.push(row);
  console.error(`measured: ${row.join(' | ')}`);
};
try {
  await cluster.kubectl(['apply', '-f', 'crds']);
  await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  const identity = await startLocalIdentity({ host: '127.0.0.1', port: 0, accessTokenTtlSeconds: 3600 });
  // The admission webhooks' certificate, where the gateway reads it (a Secret's files in a cluster).
  const certificate = await webhookCertificate(cluster);
  const certDir = join(cluster.runDir, 'webhook-tls');
  mkdirSync(certDir);
  copyFileSync(certificate.certFile, join(certDir, 'tls.crt'));
  copyFileSync(certificate.keyFile, join(certDir, 'tls.key'));
  // The gateway in a process of its own, as deployed: its memory is its own (P5g), and the
  // benchmark's clients do not share its event loop.
  const gatewayProcess = new ProductProcess('gateway', 'gateway/src/main.ts', {
    PATH: process.env['PATH'] ?? '',
    KUBECONFIG: cluster.kubeconfigPath,
    AIEM_NAMESPACE: NAMESPACE,
    AIEM_HOST: '127.0.0.1',
    AIEM_REST_PORT: '0',
    AIEM_GRPC_PORT: '0',
    AIEM_WEBHOOK_PORT: '0',
    AIEM_WEBHOOK_CERT_DIR: certDir,
    AIEM_LOG_LEVEL: 'info',
    // V8 settings to try on the gateway, e.g. a heap limit (`--max-old-space-size=192`).
    NODE_OPTIONS: `${process.env['AIEM_GATEWAY_NODE_OPTIONS'] ?? ''} ${HEAP_SNAPSHOTS ? SNAPSHOT_SIGNAL : ''}`,
    ...identity.environment,
  });
  const started = await gatewayProcess.waitForLog('Started gateway');
  const restUrl = String(started['restUrl']);
  await gatewayProcess.waitForLog('caches in sync');
  // The chart's webhook configurations, calling this gateway; the benchmark's own writes (and the
  // gateway's and operator's) are the cluster admin's, which they leave alone.
  await applyConfigurations(
    cluster,
    await webhookConfigurations(cluster, {
      namespace: NAMESPACE,
      url: String(started['webhookUrl']),
      caBundle: certificate.caBundle,
      exemptUsers: ['cluster-admin'],
    }),
  );
  const gateway = { restUrl, stop: () => gatewayProcess.stop() };
  const as = (who: string) => ({
    authorization: `Bearer ${identity.users[who]?.accessToken ?? ''}`,
    'content-type': 'application/json',
  });
  const rest = async (method: string, path: string, who: string, body?: unknown): Promise<unknown> => {
    const response = await fetch(`${gateway.restUrl}${path}`, {
      method,
      headers: as(who),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const numeric = (min: string, def: string, max: string | null = null) => ({ min, default: def, max });
  await rest('POST', '/v1/workspaces/global/daiEngineProfiles?daiEngineProfileId=p', 'admin', {
    enabled: true,
    cpuConstraint: numeric('1', '1', '8'),
    gpuConstraint: numeric('0', '0'),
    memoryBytesConstraint: numeric('1', '1073741824'),
    storageBytesConstraint: numeric('1', '1073741824'),
    maxIdleDurationConstraint: { min: '0s', default: '0s' },
    maxRunningDurationConstraint: { min: '0s', default: '0s' },
  });
  await rest('POST', '/v1/workspaces/global/daiEngineVersions?daiEngineVersionId=1.10.6', 'admin', {
    image: 'dai',
  });
  const body = {
    profile: 'workspaces/global/daiEngineProfiles/p',
    daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6',
  };
  // Engines recorded but not started (no operator yet): what the read benchmarks read. Their
  // cpu varies, so that a filter keeps half of them.
  const custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  const target = { group: 'engine.h2o.ai', version: 'v1', namespace: NAMESPACE, plural: 'daiengines' };
  const apiCreateMs = await batch(ENGINES_LISTED, CONCURRENCY, (i) =>
    rest('POST', `/v1/workspaces/w/daiEngines?daiEngineId=e${i}`, 'alice', { ...body, cpu: 1 + (i % 4) }),
  );
  // The same object as the API stores (its recorded fields and the operator's finalizer), so that
  // the ratio is what the API adds to the write, not the size of what it writes.
  const apiObject = (await custom.getNamespacedCustomObject({ ...target, name: 'w.e0' })) as {
    metadata: { annotations?: Record<string, string>; finalizers?: string[] };
  };
  const rawCreateMs = await batch(ENGINES_LISTED, CONCURRENCY, (i) =>
    custom.createNamespacedCustomObject({
      ...target,
      body: engineObject('raw', `c${i}`, { ...body, cpu: 1 + (i % 4), paused: true }, apiObject.metadata),
    }),
  );
  const perSecond = (ms: number): number => ENGINES_LISTED / (ms / 1000);
  report([
    `P3 ${ENGINES_LISTED} creates, ${CONCURRENCY} at a time (creates/s)`,
    perSecond(apiCreateMs).toFixed(0),
    perSecond(rawCreateMs).toFixed(0),
    (perSecond(apiCreateMs) / perSecond(rawCreateMs)).toFixed(2),
  ]);

  const restGet = await load(LOAD_MS, CONCURRENCY, () =>
    rest('GET', `/v1/${encodeURIComponent('workspaces/w/daiEngines/e7')}`, 'alice'),
  );
  const kubeGet = await load(LOAD_MS, CONCURRENCY, () =>
    custom.getNamespacedCustomObject({ ...target, name: 'w.e7' }),
  );
  report([
    `P1 GET one engine, ${CONCURRENCY} at a time (calls/s; p99)`,
    `${restGet.perSecond.toFixed(0)}; p99 ${restGet.p99.toFixed(1)} ms`,
    `${kubeGet.perSecond.toFixed(0)}; p99 ${kubeGet.p99.toFixed(1)} ms`,
    (restGet.perSecond / kubeGet.perSecond).toFixed(2),
  ]);

  // P2: pages of 50, each side's own: the gateway's first page (newest first, its default order)
  // against the apiserver's first page of the same workspace (`limit=50` with the workspace's
  // label selector, in the apiserver's own order), 32 at a time over keep-alive connections
  // (one per caller: fetch's pool for the gateway, the pooled client for the apiserver).
  const pageOf = (query: string) => () =>
    rest('GET', `/v1/workspaces/w/daiEngines?pageSize=50${query}`, 'alice');
  const kubePage = (labelSelector: string) => () =>
    custom.listNamespacedCustomObject({ ...target, labelSelector, limit: 50 });
  // The gateway's CPU per page, and the apiserver's and etcd's (the first two of the cluster).
  const gatewayPids = [gatewayProcess.pid];
  const kubePids = cluster
    .components()
    .slice(0, 2)
    .map((c) => c.pid);
  const compared = (
    measure: string,
    ours: Awaited<ReturnType<typeof loadWithCpu>>,
    theirs: Awaited<ReturnType<typeof loadWithCpu>>,
  ): void => {
    const figures = (r: typeof ours): string =>
      `${r.perSecond.toFixed(0)} pages/s; p50 ${r.p50.toFixed(1)} ms; p99 ${r.p99.toFixed(1)} ms; ${r.cpuPerCall.toFixed(2)} ms CPU/page`;
    report([measure, figures(ours), figures(theirs), (ours.perSecond / theirs.perSecond).toFixed(2)]);
  };
  compared(
    `P2 first page of 50 of ${ENGINES_LISTED} engines, ${CONCURRENCY} at a time, vs the apiserver's limit=50 page`,
    await loadWithCpu(gatewayPids, pageOf(`&orderBy=${encodeURIComponent('create_time desc')}`)),
    await loadWithCpu(kubePids, kubePage('engine.h2o.ai/workspace=w')),
  );
  // The page after the first, from its token: where a page starts is found, not counted.
  const first = (await rest('GET', '/v1/workspaces/w/daiEngines?pageSize=50', 'alice')) as {
    nextPageToken: string;
  };
  const kubeFirst = (await kubePage('engine.h2o.ai/workspace=w')()) as { metadata?: { continue?: string } };
  compared(
    `P2n next page of 50 (from the first page's token), ${CONCURRENCY} at a time, vs the apiserver's continue`,
    await loadWithCpu(gatewayPids, pageOf(`&pageToken=${encodeURIComponent(first.nextPageToken)}`)),
    await loadWithCpu(kubePids, () =>
      custom.listNamespacedCustomObject({
        ...target,
        labelSelector: 'engine.h2o.ai/workspace=w',
        limit: 50,
        _continue: kubeFirst.metadata?.continue ?? '',
      }),
    ),
  );

  // P2b: a filtered page. A quarter of the engines are made RUNNING (as the operator reports it,
  // in status), and labelled so for the apiserver, whose closest selector is that label: it has
  // no `cpu > 1`, so its page holds running engines of any cpu.
  const running = Array.from({ length: ENGINES_LISTED }, (_, i) => i).filter((i) => i % 8 < 2);
  await batch(running.length, CONCURRENCY, async (n) => {
    const name = `w.e${running[n] ?? 0}`;
    await custom.patchNamespacedCustomObjectStatus(
      { ...target, name, body: { status: { state: 'STATE_RUNNING' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await custom.patchNamespacedCustomObject(
      { ...target, name, body: { metadata: { labels: { 'bench-state': 'running' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  });
  const filtered = `&filter=${encodeURIComponent('state = STATE_RUNNING AND cpu > 1')}`;
  // The gateway has seen every status once its count says so.
  for (;;) {
    const { totalSize } = (await pageOf(`&filter=${encodeURIComponent('state = STATE_RUNNING')}`)()) as {
      totalSize: number;
    };
    if (totalSize === running.length) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  compared(
    `P2b filtered page of 50 (state = STATE_RUNNING AND cpu > 1: ${running.length / 2} of ${ENGINES_LISTED}), ${CONCURRENCY} at a time, vs the apiserver's limit=50 page by label`,
    await loadWithCpu(gatewayPids, pageOf(filtered)),
    await loadWithCpu(kubePids, kubePage('engine.h2o.ai/workspace=w,bench-state=running')),
  );
  report([
    `P5g gateway memory (RSS) with ${ENGINES_LISTED * 2} engines cached, after P2`,
    `${(rssBytes(gatewayProcess.pid) / 2 ** 20).toFixed(0)} MiB`,
    '',
    '',
  ]);

  // What admission adds to a Kubernetes write: the same kind written by a user (a ServiceAccount
  // allowed to create engines), whose writes the webhooks review and complete, and by the admin.
  const user = await userKubeConfig(cluster);
  const manifest = (workspace: string, i: number, spec: object): object => ({
    apiVersion: 'engine.h2o.ai/v1',
    kind: 'DAIEngine',
    metadata: { name: `${workspace}.k${i}` },
    spec,
  });
  const admittedMs = await batch(ENGINES_ADMITTED, CONCURRENCY, (i) =>
    user.createNamespacedCustomObject({ ...target, body: manifest('admitted', i, body) }),
  );
  const unreviewedMs = await batch(ENGINES_ADMITTED, CONCURRENCY, (i) =>
    custom.createNamespacedCustomObject({
      ...target,
      body: manifest('unreviewed', i, { ...body, paused: true }),
    }),
  );
  const admittedPerSecond = ENGINES_ADMITTED / (admittedMs / 1000);
  const unreviewedPerSecond = ENGINES_ADMITTED / (unreviewedMs / 1000);
  report([
    `P6 ${ENGINES_ADMITTED} engines written to Kubernetes as a user through the admission webhooks vs by the admin without review, ${CONCURRENCY} at a time (creates/s)`,
    admittedPerSecond.toFixed(0),
    unreviewedPerSecond.toFixed(0),
    (admittedPerSecond / unreviewedPerSecond).toFixed(2),
  ]);

  // The cluster's own floor: bare StatefulSets of one pod and one claim, applied directly.
  const apps = cluster.kubeConfig.makeApiClient(AppsV1Api);
  const bare = (i: number): V1StatefulSet => ({
    metadata: { name: `bare-${i}`, namespace: NAMESPACE, labels: { bench: 'bare' } },
    spec: {
      replicas: 1,
      serviceName: `bare-${i}`,
      selector: { matchLabels: { bare: String(i) } },
      template: {
        metadata: { labels: { bare: String(i) } },
        spec: { containers: [{ name: 'c', image: 'dai' }] },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
    },
  });
  const allReady = (count: number): Promise<void> =>
    untilCount(
      {
        kubeConfig: cluster.kubeConfig,
        path: `/apis/apps/v1/namespaces/${NAMESPACE}/statefulsets`,
        listPage: (limit, token) =>
          apps.listNamespacedStatefulSet({
            namespace: NAMESPACE,
            labelSelector: 'bench=bare',
            limit,
            ...(token === undefined ? {} : { _continue: token }),
          }),
      },
      (set) =>
        ((set as V1StatefulSet).status?.readyReplicas ?? 0) >= 1 &&
        set.metadata?.labels?.['bench'] === 'bare',
      count,
    );
  let start = performance.now();
  const bareReady = allReady(ENGINES_STARTED);
  await batch(ENGINES_STARTED, CONCURRENCY, (i) =>
    apps.createNamespacedStatefulSet({ namespace: NAMESPACE, body: bare(i) }),
  );
  await bareReady;
  const bareMs = performance.now() - start;

  // Clear the read benchmarks' engines before the operator starts (it would run them all). The
  // apiserver may time out deleting thousands at once (504) while it goes on: repeat until none.
  // Engines written through the API carry the operator's cleanup finalizer, which no operator
  // runs yet to release: the benchmark takes it off those marked for deletion, as an uninstall
  // that keeps engines' workloads does.
  for (;;) {
    await custom.deleteCollectionNamespacedCustomObject({ ...target }).catch((error: unknown) => {
      if ((error as { code?: number }).code !== 504) throw error;
    });
    const left = (await custom.listNamespacedCustomObject({ ...target, limit: 1 })) as { items: unknown[] };
    if (left.items.length === 0) break;
    const held = (
      (await custom.listNamespacedCustomObject({ ...target })) as { items: KubernetesObject[] }
    ).items
      .map((engine) => engine.metadata?.name ?? '')
      .filter((name) => name !== '');
    await batch(held.length, CONCURRENCY, (i) =>
      custom
        .patchNamespacedCustomObject(
          { ...target, name: held[i] ?? '', body: { metadata: { finalizers: null } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        )
        .catch((error: unknown) => {
          if ((error as { code?: number }).code !== 404) throw error;
        }),
    );
  }
  // The operator in a process of its own, as deployed, with its default throughput settings.
  const operatorEnv = {
    PATH: process.env['PATH'] ?? '',
    KUBECONFIG: cluster.kubeconfigPath,
    AIEM_NAMESPACE: NAMESPACE,
    AIEM_OPERATOR_HOST: '127.0.0.1',
    AIEM_PUBLIC_URL: 'http://127.0.0.1',
    AIEM_LOG_LEVEL: 'info',
    // V8 settings to try on the operator, e.g. a heap limit (`--max-old-space-size=128`).
    NODE_OPTIONS: `${process.env['AIEM_OPERATOR_NODE_OPTIONS'] ?? ''} ${HEAP_SNAPSHOTS ? SNAPSHOT_SIGNAL : ''}`,
    // Throughput settings to try (workers, rate limit); the defaults otherwise.
    ...Object.fromEntries(
      ['AIEM_OPERATOR_WORKERS', 'AIEM_OPERATOR_QPS', 'AIEM_OPERATOR_BURST'].flatMap((name) => {
        const value = process.env[name];
        return value === undefined ? [] : [[name, value]];
      }),
    ),
  };
  let operator = await startOperatorProcess(operatorEnv);
  const allRunning = untilCount(
    { kubeConfig: cluster.kubeConfig, ...customResources(cluster.kubeConfig, NAMESPACE, 'daiengines') },
    (engine) => (engine as { status?: { state?: string } }).status?.state === 'STATE_RUNNING',
    ENGINES_STARTED,
  );
  await operator.idle();
  const callsAtStart = await operator.callsByVerb();
  start = performance.now();
  await batch(ENGINES_STARTED, CONCURRENCY, (i) =>
    rest('POST', `/v1/workspaces/run/daiEngines?daiEngineId=r${i}`, 'alice', body),
  );
  const createdMs = performance.now() - start;
  await allRunning;
  const engineMs = performance.now() - start;
  // The same number of engine objects written straight to the apiserver, for the creates alone.
  start = performance.now();
  await batch(ENGINES_STARTED, CONCURRENCY, (i) =>
    custom.createNamespacedCustomObject({
      ...target,
      body: engineObject('raw', `r${i}`, { ...body, paused: true }),
    }),
  );
  const rawCreatedMs = performance.now() - start;
  // They have no snapshots the operator could run them with: gone before the quiet measure.
  await custom.deleteCollectionNamespacedCustomObject({
    ...target,
    labelSelector: 'engine.h2o.ai/workspace=raw',
  });
  report([
    `${ENGINES_STARTED} engine creates, ${CONCURRENCY} at a time`,
    `${createdMs.toFixed(0)} ms`,
    `${rawCreatedMs.toFixed(0)} ms`,
    (createdMs / rawCreatedMs).toFixed(2),
  ]);
  report([
    `P4 ${ENGINES_STARTED} DAI engines to RUNNING vs one-replica StatefulSets to Ready`,
    `${(engineMs / 1000).toFixed(1)} s`,
    `${(bareMs / 1000).toFixed(1)} s`,
    (engineMs / bareMs).toFixed(2),
  ]);

  // P4b: the running engines left alone; what the operator writes meanwhile.
  await operator.idle();
  const callsStarted = await operator.callsByVerb();
  report([
    `P4w operator calls per engine started in P4, by verb`,
    [...callsStarted]
      .map(([verb, n]) => [verb, (n - (callsAtStart.get(verb) ?? 0)) / ENGINES_STARTED] as const)
      .filter(([, perEngine]) => perEngine > 0)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([verb, perEngine]) => `${verb} ${perEngine.toFixed(2)}`)
      .join(', '),
    '',
    '',
  ]);
  const callsBefore = await operator.calls();
  await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
  const callsPerSecond = ((await operator.calls()) - callsBefore) / (QUIET_MS / 1000);
  report([
    `P4b operator writes/s with ${ENGINES_STARTED} running engines left alone (${QUIET_MS / 1000} s)`,
    callsPerSecond.toFixed(2),
    '',
    '',
  ]);

  // P5o: ENGINES_HELD engines, all but the running ones paused, as a cluster holds engines
  // paused after they ran: each with the operator's finalizer, the output fields the API records,
  // and its workload (a StatefulSet at 0 replicas, a Service, a ConfigMap) as the operator would
  // write it, written straight to the apiserver with plain creates: a paused engine's memory is
  // what is measured, not its first start. A fresh operator process lists them all and settles.
  const template = (await custom.getNamespacedCustomObject({ ...target, name: 'run.r0' })) as {
    metadata: { annotations?: Record<string, string> };
    spec: Record<string, unknown>;
  };
  const recorded = template.metadata.annotations?.[RECORDED_ANNOTATION] ?? '{}';
  await operator.stop();
  const objects = KubernetesObjectApi.makeApiClient(cluster.kubeConfig);
  const settings = { publicUrl: operatorEnv.AIEM_PUBLIC_URL };
  const heldMs = await batch(ENGINES_HELD - ENGINES_STARTED, CONCURRENCY, async (i) => {
    const written = (await custom.createNamespacedCustomObject({
      ...target,
      body: engineObject(
        'held',
        `h${i}`,
        { ...template.spec, paused: true },
        { annotations: { [RECORDED_ANNOTATION]: recorded }, finalizers: [FINALIZER] },
      ),
    })) as EngineResource<'DAIEngine'>;
    const desired = desiredObjects(daiEngineKind, engineView(written), { ...settings });
    for (const object of [desired.configMap, desired.service, desired.statefulSet])
      if (object !== undefined) await objects.create(withDigests(object, object));
  });
  console.error(
    `held: ${ENGINES_HELD - ENGINES_STARTED} paused engines and their workloads written in ${(heldMs / 1000).toFixed(0)} s`,
  );
  // Without a rate limit, so that the setting-up is quick: memory is what is measured.
  operator = await startOperatorProcess({ ...operatorEnv, AIEM_OPERATOR_QPS: '0' });
  const settling = performance.now();
  // Each engine: itself, its StatefulSet, Service and ConfigMap; a running one a pod and a claim.
  await operator.idle(ENGINES_HELD * 4 + ENGINES_STARTED * 2);
  console.error(
    `held: the operator listed and settled them in ${((performance.now() - settling) / 1000).toFixed(0)} s; ${await operator.heap()}`,
  );
  report([
    `P5o operator memory (RSS) with ${ENGINES_HELD} engines (${ENGINES_STARTED} running)`,
    `${(rssBytes(operator.pid) / 2 ** 20).toFixed(0)} MiB`,
    '',
    '',
  ]);
  report([
    `P5g gateway memory (RSS) holding the same ${ENGINES_HELD} engines`,
    `${(rssBytes(gatewayProcess.pid) / 2 ** 20).toFixed(0)} MiB`,
    '',
    '',
  ]);
  if (HEAP_SNAPSHOTS) {
    console.error(`heap snapshot of the operator: ${await heapSnapshot(operator.pid)}`);
    console.error(`heap snapshot of the gateway: ${await heapSnapshot(gatewayProcess.pid)}`);
  }
  await operator.stop();

  // P8: a quiet workspace's engines, one at a time, while a busy workspace starts many.
  operator = await startOperatorProcess(operatorEnv);
  await operator.idle();
  const states = new Map<string, PromiseWithResolvers<undefined>>();
  const runningIn = (name: string): PromiseWithResolvers<undefined> => {
    const known = states.get(name) ?? Promise.withResolvers<undefined>();
    states.set(name, known);
    return known;
  };
  let busyRunning = 0;
  // When the operator first reconciled each engine: its first status write adds the conditions.
  const reconciledAt = new Map<string, number>();
  const watched = new WatchedCollection<true>({
    kubeConfig: cluster.kubeConfig,
    ...customResources(cluster.kubeConfig, NAMESPACE, 'daiengines'),
    keep: (object) => {
      const name = object.metadata?.name ?? '';
      const status = (object as { status?: { state?: string; conditions?: unknown[] } }).status;
      if (status?.conditions !== undefined && !reconciledAt.has(name))
        reconciledAt.set(name, performance.now());
      if (status?.state !== 'STATE_RUNNING') return true;
      if (name.startsWith('busy.') && !states.has(name)) busyRunning += 1;
      runningIn(name).resolve(undefined);
      return true;
    },
    log: pino({ level: 'silent' }),
    what: 'daiengines',
  });
  await watched.start();
  // When each engine's StatefulSet first reported a ready pod: the cluster's part of a start.
  const podReadyAt = new Map<string, number>();
  const sets = new WatchedCollection<true>({
    kubeConfig: cluster.kubeConfig,
    path: `/apis/apps/v1/namespaces/${NAMESPACE}/statefulsets`,
    listPage: (limit, token) =>
      apps.listNamespacedStatefulSet({
        namespace: NAMESPACE,
        limit,
        ...(token === undefined ? {} : { _continue: token }),
      }),
    keep: (object) => {
      const engine = object.metadata?.annotations?.['engine.h2o.ai/engine'];
      const ready = ((object as V1StatefulSet).status?.readyReplicas ?? 0) >= 1;
      if (engine !== undefined && ready && !podReadyAt.has(engine)) podReadyAt.set(engine, performance.now());
      return true;
    },
    log: pino({ level: 'silent' }),
    what: 'statefulsets',
  });
  await sets.start();
  let busyCreated = 0;
  const busy = batch(FAIR_BUSY, CONCURRENCY, async (i) => {
    await rest('POST', `/v1/workspaces/busy/daiEngines?daiEngineId=b${i}`, 'alice', body);
    busyCreated += 1;
  });
  // The busy workspace has a backlog before the first try.
  while (busyCreated < Math.min(FAIR_BUSY, 200)) await new Promise((resolve) => setTimeout(resolve, 50));
  const tries: number[] = [];
  const firstReconciles: number[] = [];
  const triedAt: number[] = [];
  let duringBusy = 0;
  for (let i = 0; i < FAIR_TRIES; i++) {
    const tried = performance.now();
    await rest('POST', `/v1/workspaces/quiet/daiEngines?daiEngineId=q${i}`, 'alice', body);
    await runningIn(`quiet.q${i}`).promise;
    tries.push(performance.now() - tried);
    firstReconciles.push((reconciledAt.get(`quiet.q${i}`) ?? Number.NaN) - tried);
    triedAt.push(tried);
    if (busyRunning < FAIR_BUSY) duringBusy += 1;
  }
  await busy;
  // A StatefulSet's readyReplicas may trail the pod the operator saw ready: read once all are in.
  const podsReady = triedAt.map((tried, i) => (podReadyAt.get(`quiet.q${i}`) ?? Number.NaN) - tried);
  await watched.stop();
  await sets.stop();
  report([
    `P8 one engine of a quiet workspace to RUNNING while a busy one starts ${FAIR_BUSY} (p95 of ${FAIR_TRIES} tries, ${duringBusy} of them while the busy were starting; median)`,
    `${(percentile(tries, 0.95) / 1000).toFixed(1)} s; median ${(percentile(tries, 0.5) / 1000).toFixed(1)} s; operator's first reconcile p95 ${(percentile(firstReconciles, 0.95) / 1000).toFixed(1)} s; pod ready p95 ${(percentile(podsReady, 0.95) / 1000).toFixed(1)} s`,
    '',
    '',
  ]);
  await operator.stop();
  await gateway.stop();
  await identity.provider.stop();
} finally {
  await cluster.stop();
}

console.log('\n| measure | AI Engine Manager | Kubernetes alone | ratio |\n| --- | --- | --- | --- |');
for (const row of rows) console.log(`| ${row.join(' | ')} |`);
// The same figures as JSON, for comparing runs.
const out = join(process.env['AIEM_RUN_DIR'] ?? '.run', 'bench-api.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify({ at: new Date().toISOString(), engines: ENGINES_LISTED, rows: rows.map(([measure, product, kubernetes, ratio]) => ({ measure, product, kubernetes, ratio })) }, null, 2)}\n`,
);
console.log(`written to ${out}`);
