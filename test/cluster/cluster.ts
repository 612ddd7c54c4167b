import { execFile } from 'node:child_process';
import { chmod, mkdtemp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { appendFileSync, existsSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  KubeConfig,
  type V1CustomResourceDefinition,
  type V1Node,
} from '@kubernetes/client-node';
import { pooled } from '../../shared/kube-transport.ts';
import { dump, load } from 'js-yaml';
import { ensureBinaries, type Binaries } from './binaries.ts';
import { DEFAULT_NODE_POOLS, simulatedNodes, type NodePoolOptions, KWOK_NODE_ANNOTATION } from './nodes.ts';
import { adminKubeconfig, createPki, type Pki } from './pki.ts';
import { criLog, DEFAULT_LOG_LINES, defaultClusterLogs, simulatePodLogs, type PodRef } from './pod-logs.ts';
import { freePort } from './ports.ts';
import { startProcess, startSupervised, type ManagedProcess } from './process.ts';
import { aggregationFlags, startMetricsServer } from './metrics-server.ts';
import { prepareKueue } from './kueue.ts';
import { SandboxSimulator } from './sandbox-simulator.ts';
import { startRealNode, type RealNode } from './real-node.ts';
import { StorageSimulator } from './storage-simulator.ts';
import { GiveUp, waitFor } from './wait.ts';

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  nodes?: NodePoolOptions;
  /** How long the simulated storage takes to grow a volume. */
  resizeDelayMs?: number;
  /**
   * Also run metrics-server, so that the `metrics.k8s.io` API serves pods' CPU and memory (kwok
   * simulates them; sandbox pods use SIMULATED_SANDBOX_USAGE of sandbox-simulator.ts). It adds a few seconds to
   * the start and a process, so only clusters that read metrics ask for it.
   */
  metrics?: boolean;
  /**
   * Also run a real node (real-node.ts: kubelet, containerd, CNI, kube-proxy, CoreDNS, volumes)
   * beside the simulated ones, with the engine images loaded. One per machine, root only; about
   * 20 s more per start once its binaries and images are built.
   */
  realNode?: boolean;
  /**
   * Also run Kueue (kueue.ts), managing the pods and StatefulSets of `namespaces` (created with
   * the cluster) that carry a queue label. Its manager is built once per machine (about 3
   * minutes) and adds about a second to the start.
   */
  kueue?: { namespaces: readonly string[] };
  /**
   * How long kwok's node Leases last (default 40 s; renewed every quarter of it). A kwok started
   * again after a crash takes the nodes over only once its predecessor's Leases have expired: a
   * test of that asks for a short one, at the cost of more frequent renewals.
   */
  nodeLeaseSeconds?: number;
  /**
   * Also install the product's CRDs (crds/) before the controllers start, as on a cluster where
   * the product is installed. The garbage collector learns of new kinds only at its next discovery
   * (every 30 s): until then, what a custom resource owns (a Port's Service, an engine's Ports)
   * outlives its owner's deletion.
   */
  crds?: boolean;
  /** Parent folder of the run folder (state and logs); default /dev/shm, a tmpfs. */
  baseDir?: string;
  /** Progress messages, e.g. `console.error`. */
  log?: (message: string) => void;
}

/** A running local control plane. */
export interface Cluster {
  /** The admin kubeconfig; it trusts the cluster's CA and carries a bearer token. */
  readonly kubeconfigPath: string;
  readonly kubeConfig: KubeConfig;
  /** The apiserver's URL, https on a loopback port. */
  readonly server: string;
  /** State and logs of every component. */
  readonly runDir: string;
  readonly binaries: Binaries;
  readonly storage: StorageSimulator;
  /**
   * Gives sandbox engines' pods a directory under `runDir` and runs their `pods/exec` commands
   * there, on this host (see sandbox-simulator.ts); `sandboxes.ready(pod)` awaits a pod's.
   */
  readonly sandboxes: SandboxSimulator;
  /** The real node, when the cluster was started with one. */
  readonly realNode: RealNode | undefined;
  /**
   * Makes the named containers of a pod log these lines in the pod log API (every other
   * container logs {@link DEFAULT_LOG_LINES}); `undefined` makes reading that container's log
   * fail. Resolves once the apiserver serves them.
   */
  simulateLogs(
    pod: PodRef,
    containers: Readonly<Record<string, readonly string[] | undefined>>,
  ): Promise<void>;
  /** Runs the cluster's own kubectl against it. */
  kubectl(args: readonly string[], input?: string): Promise<string>;
  /** The running components: name and process id. */
  components(): { name: string; pid: number | undefined; running: boolean }[];
  /** The last lines of every component's log, for a failure report. */
  logs(lines?: number): string;
  /**
   * Stops every component and waits for them to exit, clients of the apiserver first, then
   * kube-apiserver, then etcd, each given a few seconds before it is killed (7 s in all at most);
   * removes the run folder unless `keepRunDir`. `whileRealNodeHeld` runs once the real node has
   * stopped, before another start may take the machine's one real node.
   */
  stop(options?: { keepRunDir?: boolean; whileRealNodeHeld?: () => Promise<void> }): Promise<void>;
  /** Kills every component at once and removes the run folder; for a second Ctrl+C. */
  kill(): void;
  /**
   * Stops kube-apiserver (gracefully, as a rolling restart does), runs `whileDown`, then starts
   * it again on the same address; resolves once it is ready again.
   */
  restartApiserver(whileDown?: () => Promise<void>): Promise<void>;
}

/** How long each component may take to stop before it is killed; 7 s in all at most. */
const CLIENT_GRACE_MS = 2_000;
const APISERVER_GRACE_MS = 3_000;
const ETCD_GRACE_MS = 2_000;

const KWOK_STAGES = [
  'node/fast/node-initialize.yaml',
  'node/heartbeat-with-lease/node-heartbeat-with-lease.yaml',
  'pod/fast/pod-ready.yaml',
  'pod/fast/pod-complete.yaml',
  'pod/fast/pod-delete.yaml',
];

/** Stages of our own: simulated faults that tests trigger (see each file's header). */
const TEST_STAGES_DIR = join(dirname(fileURLToPath(import.meta.url)), 'stages');
const TEST_STAGES = ['pod-crash-loop.yaml', 'h2o-follower.yaml'];

/**
 * Starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok from the
 * binaries that build-binaries.sh made, on free loopback ports, then creates the simulated CPU
 * and GPU nodes and the simulated storage, and resolves once all of it is ready.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const log = options.log ?? timingsLog();
  const binaries = await ensureBinaries();
  const base = options.baseDir ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
  const runDir = await mkdtemp(join(base, 'ai-engine-manager-cluster-'));
  const processes: ManagedProcess[] = [];
  const logs = (lines = 40): string =>
    processes.map((p) => `----- ${p.name} (${p.logPath}) -----\n${p.tail(lines)}`).join('\n');
  let storage: StorageSimulator | undefined;
  let sandboxes: SandboxSimulator | undefined;
  let realNode: RealNode | undefined;
  const stopAll = async (keepRunDir: boolean, whileRealNodeHeld?: () => Promise<void>): Promise<void> => {
    await Promise.all([storage?.stop(), sandboxes?.stop(), realNode?.stop(whileRealNodeHeld)]);
    // The apiserver's clients first and together, then the apiserver (whose graceful shutdown
    // drains requests and watches), then etcd, which the apiserver needs until it is gone.
    const [etcd, apiserver, ...clients] = processes;
    await Promise.all(clients.map((p) => p.stop(CLIENT_GRACE_MS)));
    await apiserver?.stop(APISERVER_GRACE_MS);
    await etcd?.stop(ETCD_GRACE_MS);
    if (!keepRunDir) await rm(runDir, { recursive: true, force: true });
  };

  try {
    const started = Date.now();
    const pki = await createPki(runDir);
    const etcdUrl = await startEtcd({ binaries, runDir, processes });
    const server = await startApiserver({ binaries, runDir, processes, pki, etcdUrl });
    const kubeconfigPath = join(runDir, 'kubeconfig');
    await writeFile(kubeconfigPath, adminKubeconfig(server, pki), { mode: 0o600 });
    // One connection pool for every client of the cluster (see shared/kube-transport.ts).
    const kubeConfig = pooled(new KubeConfig());
    kubeConfig.loadFromFile(kubeconfigPath);
    log(`kube-apiserver ready at ${server} after ${Date.now() - started} ms`);

    const common = { binaries, runDir, processes, kubeconfigPath, pki };
    await installProductCrds(options.crds, { ...common, kubeConfig });
    const startQueues = await prepareKueue(options.kueue, { ...common, kubeConfig });
    const [controllerManager, scheduler, kwok] = await Promise.all([
      startControllerManager(common),
      startScheduler(common),
      startKwok({ ...common, kubeConfig, leaseSeconds: options.nodeLeaseSeconds ?? 40 }),
    ]);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    for (const node of simulatedNodes(options.nodes ?? DEFAULT_NODE_POOLS)) {
      await core.createNode({ body: node });
    }
    storage = new StorageSimulator(kubeConfig, {
      resizeDelayMs: options.resizeDelayMs ?? 2_000,
      onError: (error) => {
        log(`storage simulator: ${String(error)}`);
      },
    });
    // Sandbox commands run as an unprivileged user, which must reach its folder in the run
    // folder: everyone may traverse it, no one else may list it.
    await chmod(runDir, 0o711);
    sandboxes = new SandboxSimulator(kubeConfig, join(runDir, 'sandboxes'), {
      onError: (error) => {
        log(`sandbox simulator: ${String(error)}`);
      },
    });
    await Promise.all([storage.start(), sandboxes.start()]);
    const metricsServer = whenAsked(options.metrics, () => startMetricsServer({ ...common, kubeConfig }));
    const queues = startQueues();
    const real = whenAsked(options.realNode, () =>
      startRealNode({ runDir, kubeconfigPath, kubeConfig, server, pki, log }).then((node) => {
        realNode = node;
      }),
    );
    await Promise.all([
      metricsServer,
      real,
      queues,
      waitForHealthz(controllerManager, logs),
      waitForHealthz(scheduler, logs),
      waitForNodesReady(core, kwok, logs),
      // The ServiceAccount admission plugin rejects pods until the controller-manager has
      // created the namespace's default service account.
      waitFor(() => core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' }), {
        what: 'the default service account',
        explain: logs,
      }),
    ]);
    log(`Cluster ready after ${Date.now() - started} ms; kubeconfig ${kubeconfigPath}`);

    const kubectl = join(binaries.kubernetes, 'kubectl');
    const readyStorage = storage;
    const readySandboxes = sandboxes;
    return {
      kubeconfigPath,
      kubeConfig,
      server,
      runDir,
      binaries,
      storage: readyStorage,
      sandboxes: readySandboxes,
      realNode,
      simulateLogs: (pod, containers) =>
        simulatePodLogs(kubeConfig, join(runDir, 'kwok', 'logs'), pod, containers),
      // A discovery cache per cluster: ports are recycled, and another cluster's cache under the same
      // host:port would describe the wrong API.
      kubectl: (args, input) =>
        runKubectl(
          kubectl,
          ['--kubeconfig', kubeconfigPath, '--cache-dir', join(runDir, 'kubectl-cache'), ...args],
          input,
        ),
      logs: (lines) => [logs(lines), realNode?.logs(lines)].filter((l) => l !== undefined).join('\n'),
      components: () => processes.map((p) => ({ name: p.name, pid: p.pid, running: p.running() })),
      stop: (stopOptions) => stopAll(stopOptions?.keepRunDir ?? false, stopOptions?.whileRealNodeHeld),
      kill: () => {
        // The simulators run in this process: a crash ends them too, or their watches would go on
        // retrying against the apiserver that is gone (while later tests of the file run).
        void storage?.stop();
        void sandboxes?.stop();
        realNode?.kill();
        for (const p of processes) p.kill();
        rmSync(runDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
      },
      restartApiserver: async (whileDown) => {
        await processes[1]?.stop(APISERVER_GRACE_MS);
        await whileDown?.();
        const relaunched: ManagedProcess[] = [];
        await startApiserver(
          { binaries, runDir, processes: relaunched, pki, etcdUrl },
          Number(new URL(server).port),
        );
        // The apiserver keeps its place: the stop order depends on it.
        if (relaunched[0] !== undefined) processes[1] = relaunched[0];
      },
    };
  } catch (error: unknown) {
    const report = logs();
    await stopAll(true);
    throw new Error(`Cluster failed to start (logs kept in ${runDir}): ${String(error)}\n${report}`, {
      cause: error,
    });
  }
}

/**
 * Without a log of the caller's, the start's progress goes to the file AIEM_TEST_TIMINGS names
 * (see test/helpers/environment.js), when it names one: where a test file's cluster start spends
 * its time. Nowhere otherwise.
 */
function timingsLog(): (message: string) => void {
  const file = process.env['AIEM_TEST_TIMINGS'];
  if (file === undefined || file === '') return () => undefined;
  return (message) => {
    appendFileSync(file, `${new Date().toISOString()}\tcluster\t${message}\n`);
  };
}

/** Starts an optional component when the options ask for it. */
function whenAsked<T>(asked: boolean | undefined, start: () => Promise<T>): Promise<T> | undefined {
  return asked === true ? start() : undefined;
}

interface StartContext {
  binaries: Binaries;
  runDir: string;
  processes: ManagedProcess[];
}

interface ComponentContext extends StartContext {
  kubeconfigPath: string;
  pki: Pki;
}

/** A component that serves /healthz over https on a loopback port. */
interface ServingComponent {
  process: ManagedProcess;
  port: number;
}

function launch(context: StartContext, name: string, command: string, args: string[]): ManagedProcess {
  const child = startProcess({ name, command, args, logDir: context.runDir });
  context.processes.push(child);
  return child;
}

/** A probe step that fails the wait at once when the process has died. */
function alive(process: ManagedProcess): void {
  if (!process.running()) throw new GiveUp(`${process.name} exited during start-up`);
}

async function startEtcd(context: StartContext): Promise<string> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const etcd = launch(context, 'etcd', join(context.binaries.etcd, 'etcd'), [
    '--name=default',
    `--data-dir=${join(context.runDir, 'etcd')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=default=${peer}`,
    // The data lives on tmpfs and dies with the test; fsync would only slow every write.
    '--unsafe-no-fsync=true',
    '--quota-backend-bytes=8589934592',
    '--log-level=warn',
  ]);
  await waitFor(
    async () => {
      alive(etcd);
      return (await fetch(`${client}/readyz`)).ok || undefined;
    },
    { what: 'etcd /readyz', explain: () => etcd.tail() },
  );
  return client;
}

async function startApiserver(
  context: StartContext & { pki: Pki; etcdUrl: string },
  fixedPort?: number,
): Promise<string> {
  const port = fixedPort ?? (await freePort());
  const server = `https://127.0.0.1:${port}`;
  const { pki } = context;
  const apiserver = launch(context, 'kube-apiserver', join(context.binaries.kubernetes, 'kube-apiserver'), [
    `--etcd-servers=${context.etcdUrl}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    // Loopback only: the apiserver advertises itself there and keeps no Endpoints for it
    // (Endpoints may not hold loopback addresses).
    '--advertise-address=127.0.0.1',
    '--endpoint-reconciler-type=none',
    `--tls-cert-file=${pki.apiserverCert}`,
    `--tls-private-key-file=${pki.apiserverKey}`,
    `--client-ca-file=${pki.caCert}`,
    `--token-auth-file=${pki.tokenFile}`,
    `--service-account-issuer=${server}`,
    `--service-account-key-file=${pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    '--service-cluster-ip-range=10.96.0.0/16',
    '--allow-privileged=true',
    '--authorization-mode=Node,RBAC',
    '--profiling=false',
    // Pod logs, exec and port-forward go to the node's kubelet endpoint, which kwok serves: at
    // the node's InternalIP (the loopback address kwok reports for every node) and the port in
    // its status, verified against the cluster CA that signed kwok's certificate.
    '--kubelet-preferred-address-types=InternalIP',
    `--kubelet-certificate-authority=${pki.caCert}`,
    // A real node's kubelet (real-node.ts) authenticates the apiserver by this certificate.
    `--kubelet-client-certificate=${pki.kubeletClientCert}`,
    `--kubelet-client-key=${pki.kubeletClientKey}`,
    // Aggregated APIs (metrics-server's metrics.k8s.io, when the cluster runs it).
    ...aggregationFlags(pki),
  ]);
  await waitFor(
    async () => {
      alive(apiserver);
      return (
        (await httpsStatus(`${server}/readyz`, { ca: pki.caCert, token: pki.adminToken })) === 200 ||
        undefined
      );
    },
    { what: 'kube-apiserver /readyz', timeoutMs: 120_000, explain: () => apiserver.tail() },
  );
  return server;
}

async function startControllerManager(context: ComponentContext): Promise<ServingComponent> {
  const port = await freePort();
  const { pki, kubeconfigPath } = context;
  const process = launch(
    context,
    'kube-controller-manager',
    join(context.binaries.kubernetes, 'kube-controller-manager'),
    [
      `--kubeconfig=${kubeconfigPath}`,
      `--authentication-kubeconfig=${kubeconfigPath}`,
      `--authorization-kubeconfig=${kubeconfigPath}`,
      '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics',
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--cert-dir=${join(context.runDir, 'kube-controller-manager')}`,
      `--root-ca-file=${pki.caCert}`,
      `--service-account-private-key-file=${pki.serviceAccountKey}`,
      `--cluster-signing-cert-file=${pki.caCert}`,
      `--cluster-signing-key-file=${pki.caKey}`,
      '--use-service-account-credentials=false',
      '--leader-elect=false',
      // The defaults (20 qps) would make the controller-manager, not the product, the bottleneck
      // of every scale test.
      '--kube-api-qps=200',
      '--kube-api-burst=400',
    ],
  );
  return { process, port };
}

async function startScheduler(context: ComponentContext): Promise<ServingComponent> {
  const port = await freePort();
  const configPath = join(context.runDir, 'kube-scheduler.yaml');
  await writeFile(
    configPath,
    dump({
      apiVersion: 'kubescheduler.config.k8s.io/v1',
      kind: 'KubeSchedulerConfiguration',
      clientConnection: { kubeconfig: context.kubeconfigPath, qps: 200, burst: 400 },
      leaderElection: { leaderElect: false },
    }),
  );
  const process = launch(context, 'kube-scheduler', join(context.binaries.kubernetes, 'kube-scheduler'), [
    `--config=${configPath}`,
    `--authentication-kubeconfig=${context.kubeconfigPath}`,
    `--authorization-kubeconfig=${context.kubeconfigPath}`,
    '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics',
    '--authentication-skip-lookup=true',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${join(context.runDir, 'kube-scheduler')}`,
  ]);
  return { process, port };
}

async function startKwok(
  context: ComponentContext & { kubeConfig: KubeConfig; leaseSeconds: number },
): Promise<ManagedProcess> {
  const port = await freePort();
  const logsDir = join(context.runDir, 'kwok', 'logs');
  await mkdir(logsDir, { recursive: true });
  const defaultLog = join(logsDir, 'default.log');
  await writeFile(defaultLog, criLog(DEFAULT_LOG_LINES, new Date()));
  await installKwokCrds(context);
  const stagesDir = join(context.binaries.kwok, 'stages');
  const stages = await Promise.all([
    ...KWOK_STAGES.map((file) => readFile(join(stagesDir, file), 'utf8')),
    ...TEST_STAGES.map((file) => readFile(join(TEST_STAGES_DIR, file), 'utf8')),
  ]);
  const configPath = join(context.runDir, 'kwok.yaml');
  // The standalone binary applies none of its documented defaults to a configuration file.
  const header = dump({
    apiVersion: 'config.kwok.x-k8s.io/v1alpha1',
    kind: 'KwokConfiguration',
    options: {
      podPlayStageParallelism: 4,
      nodePlayStageParallelism: 4,
      nodeLeaseParallelism: 4,
      podsOnNodeSyncParallelism: 1,
      enablePodsOnNodeSyncListPager: true,
      // The kubelet endpoints that serve container logs (and exec, attach, port-forward).
      enableDebuggingHandlers: true,
    },
  });
  // kwok's Metric that serves each node's resource metrics (for metrics-server) from the usage
  // its ResourceUsage objects simulate.
  const resourceMetrics = await readFile(
    join(context.binaries.kwok, 'metrics', 'metrics-resource.yaml'),
    'utf8',
  );
  await writeFile(
    configPath,
    [header, ...stages, resourceMetrics, dump(defaultClusterLogs(defaultLog))].join('\n---\n'),
  );
  // Supervised: kwok keeps no state, and may crash on a race of its own (see startSupervised).
  const args = [
    `--kubeconfig=${context.kubeconfigPath}`,
    `--config=${configPath}`,
    '--manage-all-nodes=false',
    `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
    // With leases kwok renews one Lease per node instead of rewriting node status every few
    // seconds, which keeps the apiserver quiet.
    `--node-lease-duration-seconds=${context.leaseSeconds}`,
    '--node-ip=127.0.0.1',
    '--cidr=10.244.0.0/16',
    // kwok serves the nodes' kubelet endpoints (container logs) there and writes the port into
    // each Node's status (daemonEndpoints), where the apiserver looks for it.
    `--server-address=127.0.0.1:${port}`,
    `--node-port=${port}`,
    `--tls-cert-file=${context.pki.kwokCert}`,
    `--tls-private-key-file=${context.pki.kwokKey}`,
    // Logs objects (one pod's simulated logs) and Exec objects (where one pod's commands run,
    // sandbox-simulator.ts) come from the API, so tests and simulators can add them. A kind
    // listed here must not also be in --config.
    `--enable-crds=${KWOK_CRDS.map((crd) => crd.kind).join(',')}`,
  ];
  // A new kwok takes the nodes over once the node Leases its predecessor held have expired
  // (kwok instances share nodes through them): within --node-lease-duration-seconds.
  const kwok = startSupervised({
    name: 'kwok',
    command: join(context.binaries.kwok, 'kwok'),
    args,
    logDir: context.runDir,
  });
  context.processes.push(kwok);
  return kwok;
}

/** The product's CRDs, as `make generate` writes them. */
export const PRODUCT_CRDS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'crds');

/**
 * When asked for, creates the product's CRDs and resolves once the apiserver serves every one.
 * kubectl sends them as written (the client library's typed models would drop the schemas'
 * `x-kubernetes-*` extensions).
 */
async function installProductCrds(
  asked: boolean | undefined,
  context: ComponentContext & { kubeConfig: KubeConfig },
): Promise<void> {
  if (asked !== true) return;
  const kubectl = join(context.binaries.kubernetes, 'kubectl');
  await runKubectl(kubectl, ['--kubeconfig', context.kubeconfigPath, 'apply', '-f', PRODUCT_CRDS]);
  // engine.h2o.ai_ports.yaml holds ports.engine.h2o.ai.
  const names = (await readdir(PRODUCT_CRDS))
    .filter((file) => file.endsWith('.yaml'))
    .map((file) => file.replace(/^(.*?)_(.*)\.yaml$/, '$2.$1'));
  const extensions = context.kubeConfig.makeApiClient(ApiextensionsV1Api);
  await waitFor(
    async () => {
      for (const name of names) {
        const crd = await extensions.readCustomResourceDefinition({ name });
        if (!crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'))
          return undefined;
      }
      return true;
    },
    { what: "the product's CRDs to be served", intervalMs: 50 },
  );
}

/** kwok's CRDs that the cluster serves (shipped in its module, copied by build-binaries.sh). */
const KWOK_CRDS = [
  { kind: 'Logs', file: 'kwok.x-k8s.io_logs.yaml' },
  { kind: 'Exec', file: 'kwok.x-k8s.io_execs.yaml' },
  { kind: 'ClusterExec', file: 'kwok.x-k8s.io_clusterexecs.yaml' },
  { kind: 'ResourceUsage', file: 'kwok.x-k8s.io_resourceusages.yaml' },
] as const;

/**
 * Installs kwok's CRDs and waits until they are served: kwok watches their objects from its
 * start, and a watch of a missing kind would retry only after a backoff.
 */
async function installKwokCrds(context: ComponentContext & { kubeConfig: KubeConfig }): Promise<void> {
  const extensions = context.kubeConfig.makeApiClient(ApiextensionsV1Api);
  await Promise.all(
    KWOK_CRDS.map(async ({ kind, file }) => {
      const crd = load(
        await readFile(join(context.binaries.kwok, 'crds', file), 'utf8'),
      ) as V1CustomResourceDefinition;
      await extensions.createCustomResourceDefinition({ body: crd });
      await waitFor(
        async () => {
          const current = await extensions.readCustomResourceDefinition({ name: crd.metadata?.name ?? '' });
          const established = current.status?.conditions?.some(
            (c) => c.type === 'Established' && c.status === 'True',
          );
          return established === true ? true : undefined;
        },
        { what: `the kwok ${kind} CRD to be established`, intervalMs: 20 },
      );
    }),
  );
}

async function waitForHealthz(component: ServingComponent, explain: () => string): Promise<void> {
  await waitFor(
    async () => {
      alive(component.process);
      return (await httpsStatus(`https://127.0.0.1:${component.port}/healthz`, {})) === 200 || undefined;
    },
    { what: `${component.process.name} /healthz`, timeoutMs: 120_000, explain },
  );
}

/**
 * Waits until kwok reports every node Ready and the node lifecycle controller has lifted the
 * `node.kubernetes.io/not-ready` taints it puts on new nodes; until then nothing schedules.
 */
async function waitForNodesReady(
  core: CoreV1Api,
  kwok: ManagedProcess,
  explain: () => string,
): Promise<void> {
  const usable = (node: V1Node): boolean =>
    node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true &&
    !(node.spec?.taints ?? []).some((t) => t.key.startsWith('node.kubernetes.io/'));
  await waitFor(
    async () => {
      alive(kwok);
      const nodes = (await core.listNode()).items;
      return nodes.length > 0 && nodes.every(usable) ? true : undefined;
    },
    { what: 'every simulated node to be Ready and untainted', timeoutMs: 120_000, explain },
  );
}

/**
 * The HTTP status of a GET over https. Without `ca` the server's certificate is not verified:
 * the controller-manager and scheduler serve with certificates they made themselves.
 */
async function httpsStatus(url: string, options: { ca?: string; token?: string }): Promise<number> {
  const ca = options.ca === undefined ? undefined : await readFile(options.ca);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        ...(ca === undefined ? { rejectUnauthorized: false } : { ca }),
        headers: options.token ? { Authorization: `Bearer ${options.token}` } : {},
        timeout: 5_000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

async function runKubectl(kubectl: string, args: string[], input?: string): Promise<string> {
  const child = promisify(execFile)(kubectl, args, { maxBuffer: 64 * 1024 * 1024 });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  try {
    return (await child).stdout;
  } catch (error: unknown) {
    const stderr =
      typeof error === 'object' && error !== null && 'stderr' in error ? String(error.stderr) : '';
    throw new Error(`kubectl ${args.join(' ')} failed: ${stderr || String(error)}`, { cause: error });
  }
}
