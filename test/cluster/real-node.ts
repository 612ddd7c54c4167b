/**
 * A real Kubernetes node beside the simulated ones: containerd with runc, a kubelet, CNI's
 * bridge, kube-proxy, CoreDNS and a local-path volume provisioner, all on this machine. Engines
 * placed there (by the node's label and taint) run as real containers from the engine images.
 *
 * One per machine (a fixed bridge, runtime paths containerd hard-codes), root only. Whatever a
 * run leaves behind, the next start sweeps away first (node-host.ts).
 */
import { execFile } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, StorageV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { dump } from 'js-yaml';
import { ensureNodeBinaries, type NodeBinaries } from './binaries.ts';
import { ensureEngineImages, type EngineImage } from './engine-images.ts';
import { startNetworkPolicyAgent } from './network-policy-agent.ts';
import { applySysctls, BRIDGE, NODE_PATHS, recordPid, sweepNode } from './node-host.ts';
import { ensureNodeImages } from './node-images.ts';
import { issueCertificate, type Pki } from './pki.ts';
import { freePort } from './ports.ts';
import { processAlive, startProcess, type ManagedProcess } from './process.ts';
import { GiveUp, waitFor } from './wait.ts';

const run = promisify(execFile);

/** The real node's name, label and taint: engines that should run for real select and tolerate them. */
export const REAL_NODE = {
  name: 'real-node',
  label: { key: 'ai-engine-manager/real-node', value: 'true' },
  taint: { key: 'ai-engine-manager/real-node', value: 'true', effect: 'NoSchedule' },
  /** The StorageClass whose volumes live on the real node (local-path-provisioner). */
  storageClass: 'local-path',
} as const;

/**
 * The pod network: one bridge, host-local addresses; the gateway address serves cluster DNS. Apart
 * from podman's default network (10.88.0.0/16), whose port mappings would catch traffic meant for
 * pods of the same addresses, and from the simulated pods' 10.244.0.0/16.
 */
const POD_SUBNET = '10.111.0.0/24';
const BRIDGE_ADDRESS = '10.111.0.1';
const LOCAL_PATH_NAMESPACE = 'local-path-storage';

/** A running real node. */
export interface RealNode {
  readonly name: string;
  /** The machine address the kubelet registers (the apiserver reaches it there). */
  readonly ip: string;
  /** The engine images loaded into its runtime. */
  readonly images: readonly EngineImage[];
  /**
   * Stops every component and takes away everything the node left on the machine. `whileHeld`
   * runs after that, before the machine's node lock is released: what it sees of the machine is
   * this node's doing alone (another waiting start may take the lock at once).
   */
  stop(whileHeld?: () => Promise<void>): Promise<void>;
  /** Kills the components now; the next start's sweep cleans up. */
  kill(): void;
  logs(lines?: number): string;
}

interface NodeContext {
  runDir: string;
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  server: string;
  pki: Pki;
  log: (message: string) => void;
}

/** Why this machine cannot run the real node, or undefined when it can. */
export function realNodeUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'the real node needs Linux';
  if (process.getuid?.() !== 0) return 'the real node needs root (a kubelet and a container runtime)';
  if (!existsSync('/usr/sbin/runc') && !existsSync('/usr/bin/runc')) return 'runc is not installed';
  return undefined;
}

/**
 * Starts the real node and resolves once it is Ready, its images are loaded, cluster DNS answers
 * and its StorageClass exists.
 */
export async function startRealNode(context: NodeContext): Promise<RealNode> {
  const unavailable = realNodeUnavailable();
  if (unavailable !== undefined) throw new Error(unavailable);
  const started = Date.now();
  const [binaries, engineImages, nodeImages] = await Promise.all([
    ensureNodeBinaries(),
    ensureEngineImages(),
    ensureNodeImages(),
  ]);
  const releaseLock = await takeMachineLock(context.log);
  const processes: ManagedProcess[] = [];
  const binaryDirs = [
    binaries.kubelet,
    binaries.containerd,
    binaries.cni,
    binaries.coredns,
    binaries.localPath,
    binaries.networkPolicies,
  ];
  const kubeProxy = join(binaries.kubelet, 'kube-proxy');
  const logDir = join(context.runDir, 'real-node');
  const logs = (lines = 40): string =>
    processes.map((p) => `----- ${p.name} (${p.logPath}) -----\n${p.tail(lines)}`).join('\n');
  const stop = async (whileHeld?: () => Promise<void>): Promise<void> => {
    try {
      // The kubelet first, so that it restarts nothing while the runtime goes.
      for (const name of ['kubelet', 'local-path-provisioner', 'kube-proxy', 'coredns', 'containerd']) {
        await processes.find((p) => p.name === name)?.stop(2_000);
      }
      await sweepNode({ binaryDirs, kubeProxy });
      await whileHeld?.();
    } finally {
      releaseLock();
    }
  };

  try {
    await sweepNode({ binaryDirs, kubeProxy });
    const dirs = await prepareDirs(logDir);
    applySysctls();
    await createBridge();
    const ip = machineAddress();
    const certs = await nodeCertificates(context, ip);
    const launch = (name: string, command: string, args: string[]): ManagedProcess => {
      const child = startProcess({ name, command, args, logDir });
      recordPid(name, child.pid);
      processes.push(child);
      return child;
    };

    const containerdSocket = join(NODE_PATHS.state, 'containerd', 'containerd.sock');
    const containerd = launch('containerd', join(binaries.containerd, 'containerd'), [
      `--config=${await writeContainerdConfig(binaries, dirs, containerdSocket, nodeImages.pause)}`,
    ]);
    await waitFor(
      () => {
        if (!containerd.running()) throw new GiveUp('containerd exited during start-up');
        return Promise.resolve(existsSync(containerdSocket) || undefined);
      },
      { what: 'containerd', explain: () => containerd.tail() },
    );
    const ctr = (args: readonly string[]): Promise<{ stdout: string }> =>
      run(join(binaries.containerd, 'ctr'), ['--address', containerdSocket, '-n', 'k8s.io', ...args], {
        maxBuffer: 16 * 1024 * 1024,
      });
    const imported = Date.now();
    await importImages(ctr, dirs.containerdRoot, [nodeImages.pause, nodeImages.helper, ...engineImages]);
    context.log(`real node: images loaded in ${Date.now() - imported} ms`);

    const kubeletKubeconfig = join(dirs.config, 'kubelet.kubeconfig');
    await writeFile(
      kubeletKubeconfig,
      clientKubeconfig(context.server, context.pki.caCert, certs.kubeletClient),
    );
    const kubelet = launch('kubelet', join(binaries.kubelet, 'kubelet'), [
      `--config=${await writeKubeletConfig(context, dirs, containerdSocket, certs.kubeletServing)}`,
      `--kubeconfig=${kubeletKubeconfig}`,
      `--hostname-override=${REAL_NODE.name}`,
      `--node-ip=${ip}`,
      `--root-dir=${dirs.kubelet}`,
      `--cert-dir=${join(dirs.kubelet, 'pki')}`,
      `--node-labels=${REAL_NODE.label.key}=${REAL_NODE.label.value}`,
      '--v=1',
    ]);
    const proxy = launch('kube-proxy', kubeProxy, [
      `--config=${await writeKubeProxyConfig(context, dirs)}`,
      `--hostname-override=${REAL_NODE.name}`,
    ]);
    const dnsHealth = await freePort();
    const coredns = launch('coredns', join(binaries.coredns, 'coredns'), [
      '-conf',
      await writeCorefile(context, dirs, dnsHealth),
    ]);
    const provisioner = await startLocalPath(context, {
      dirs,
      binaries,
      helperImage: nodeImages.helper.ref,
      launch,
    });

    const core = context.kubeConfig.makeApiClient(CoreV1Api);
    await Promise.all([
      waitFor(
        async () => {
          for (const p of [kubelet, proxy, coredns, provisioner]) {
            if (!p.running()) throw new GiveUp(`${p.name} exited during start-up`);
          }
          const node = await core.readNode({ name: REAL_NODE.name }).catch(() => undefined);
          return node !== undefined && nodeReady(node) ? true : undefined;
        },
        { what: 'the real node to be Ready', timeoutMs: 120_000, explain: () => logs() },
      ),
      waitFor(
        async () => {
          if (!coredns.running()) throw new GiveUp('coredns exited during start-up');
          const res = await fetch(`http://127.0.0.1:${dnsHealth}/health`).catch(() => undefined);
          return res?.ok === true || undefined;
        },
        { what: 'cluster DNS', explain: () => coredns.tail() },
      ),
      // NetworkPolicies are enforced before the first pod can start (network-policy-agent.ts).
      startNetworkPolicyAgent({
        binaryDir: binaries.networkPolicies,
        kubeconfigPath: context.kubeconfigPath,
        nodeName: REAL_NODE.name,
        podSubnet: POD_SUBNET,
        launch,
        log: context.log,
      }),
    ]);
    context.log(`real node ${REAL_NODE.name} (${ip}) Ready after ${Date.now() - started} ms`);
    return {
      name: REAL_NODE.name,
      ip,
      images: engineImages,
      stop,
      kill: () => {
        for (const p of processes) p.kill();
      },
      logs,
    };
  } catch (error: unknown) {
    const report = logs();
    await stop().catch(() => undefined);
    throw new Error(`The real node failed to start: ${String(error)}\n${report}`, { cause: error });
  }
}

/**
 * One real node per machine: the lock names the process that holds it. A start waits for a live
 * holder to let go (test files that want the node take turns), and takes over the lock of a
 * holder that died. Returns its release.
 */
async function takeMachineLock(log: (message: string) => void): Promise<() => void> {
  const path = `${NODE_PATHS.state}.lock`;
  let told = false;
  for (;;) {
    if (createLock(path)) {
      return () => {
        rmSync(path, { force: true });
      };
    }
    const holder = Number(readFileSync(path, 'utf8'));
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder)) {
      if (!told) log(`real node: waiting for process ${holder}, whose real node runs on this machine`);
      told = true;
      await new Promise((resolve) => setTimeout(resolve, 500));
    } else {
      // A stale lock: its holder is gone.
      rmSync(path, { force: true });
    }
  }
}

/** Creates the lock file with this process's pid, or returns false when it exists. */
function createLock(path: string): boolean {
  try {
    const fd = openSync(path, 'wx');
    writeFileSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch {
    return false;
  }
}

interface NodeDirs {
  config: string;
  kubelet: string;
  podLogs: string;
  cniConf: string;
  cniData: string;
  volumes: string;
  containerdRoot: string;
  containerdState: string;
}

async function prepareDirs(logDir: string): Promise<NodeDirs> {
  const dirs: NodeDirs = {
    config: join(NODE_PATHS.state, 'config'),
    kubelet: join(NODE_PATHS.data, 'kubelet'),
    podLogs: join(NODE_PATHS.data, 'pod-logs'),
    cniConf: join(NODE_PATHS.state, 'cni', 'net.d'),
    cniData: join(NODE_PATHS.data, 'cni'),
    volumes: join(NODE_PATHS.data, 'volumes'),
    // Images stay between runs (importing them is most of a start); containers never do.
    containerdRoot: join(
      process.env['AIEM_CACHE'] ?? join(process.env['HOME'] ?? '/root', '.cache/ai-engine-manager'),
      'containerd',
    ),
    containerdState: join(NODE_PATHS.state, 'containerd'),
  };
  const all: string[] = [logDir, dirs.config, dirs.kubelet, dirs.podLogs, dirs.cniConf, dirs.cniData];
  all.push(dirs.volumes, dirs.containerdRoot, dirs.containerdState);
  await Promise.all(all.map((dir) => mkdir(dir, { recursive: true })));
  return dirs;
}

/** The bridge exists before any pod, so that cluster DNS can listen on its address from the start. */
async function createBridge(): Promise<void> {
  await run('ip', ['link', 'add', BRIDGE, 'type', 'bridge']);
  await run('ip', ['addr', 'add', `${BRIDGE_ADDRESS}/24`, 'dev', BRIDGE]);
  await run('ip', ['link', 'set', BRIDGE, 'up']);
}

/**
 * The machine's own address: the kubelet refuses loopback, and calls from the apiserver to it
 * stay on the machine this way.
 */
export function machineAddress(): string {
  for (const [name, addresses] of Object.entries(networkInterfaces())) {
    if (name === BRIDGE || name.startsWith('veth') || name.startsWith('cni')) continue;
    const v4 = addresses?.find((a) => a.family === 'IPv4' && !a.internal);
    if (v4 !== undefined) return v4.address;
  }
  throw new Error('No non-loopback IPv4 address on this machine for the real node');
}

async function nodeCertificates(
  context: NodeContext,
  ip: string,
): Promise<{ kubeletServing: CertPair; kubeletClient: CertPair }> {
  const dir = join(context.runDir, 'real-node-pki');
  await mkdir(dir, { recursive: true });
  const [kubeletServing, kubeletClient] = await Promise.all([
    issueCertificate(context.pki, dir, {
      name: 'kubelet-serving',
      subject: `/CN=system:node:${REAL_NODE.name}/O=system:nodes`,
      altNames: [`IP:${ip}`, 'IP:127.0.0.1', `DNS:${REAL_NODE.name}`],
    }),
    issueCertificate(context.pki, dir, {
      name: 'kubelet-client',
      subject: `/CN=system:node:${REAL_NODE.name}/O=system:nodes`,
    }),
  ]);
  return { kubeletServing, kubeletClient };
}

interface CertPair {
  cert: string;
  key: string;
}

function clientKubeconfig(server: string, ca: string, client: CertPair): string {
  return dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'local', cluster: { server, 'certificate-authority': ca } }],
    users: [{ name: 'node', user: { 'client-certificate': client.cert, 'client-key': client.key } }],
    contexts: [{ name: 'local', context: { cluster: 'local', user: 'node' } }],
    'current-context': 'local',
  });
}

async function writeContainerdConfig(
  binaries: NodeBinaries,
  dirs: NodeDirs,
  socket: string,
  pause: { ref: string },
): Promise<string> {
  const path = join(dirs.config, 'containerd.toml');
  const runc = existsSync('/usr/sbin/runc') ? '/usr/sbin/runc' : '/usr/bin/runc';
  await writeFile(
    path,
    `version = 3
root = ${JSON.stringify(dirs.containerdRoot)}
state = ${JSON.stringify(dirs.containerdState)}
# Nothing from the machine's own containerd configuration, if it has one.
imports = []

[grpc]
  address = ${JSON.stringify(socket)}

[ttrpc]
  address = ${JSON.stringify(`${socket}.ttrpc`)}

[plugins]
  [plugins.'io.containerd.internal.v1.opt']
    path = ${JSON.stringify(join(dirs.containerdState, 'opt'))}
  [plugins.'io.containerd.nri.v1.nri']
    disable = true
  [plugins.'io.containerd.cri.v1.images']
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = ${JSON.stringify(pause.ref)}
  [plugins.'io.containerd.cri.v1.runtime']
    # This machine's capability bounding set lacks CAP_SYS_RESOURCE: runc cannot lower a
    # sandbox's oom_score_adj below containerd's own, and every pod would fail without this.
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = ${JSON.stringify(runc)}
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [${JSON.stringify(binaries.cni)}]
      conf_dir = ${JSON.stringify(dirs.cniConf)}
`,
  );
  await writeFile(
    join(dirs.cniConf, '10-aiem.conflist'),
    JSON.stringify({
      cniVersion: '1.0.0',
      name: BRIDGE,
      plugins: [
        {
          type: 'bridge',
          bridge: BRIDGE,
          isGateway: true,
          // Services' virtual addresses lie outside the pod subnet: they are reached through the bridge.
          isDefaultGateway: true,
          // Nothing lies beyond the machine: no masquerading, so pods see each other's real addresses.
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: POD_SUBNET, gateway: BRIDGE_ADDRESS }]],
            dataDir: join(dirs.cniData, 'ipam'),
          },
        },
      ],
    }),
  );
  return path;
}

/**
 * Imports each archive the runtime has not imported yet. Images persist between runs; an archive
 * is named by its content, so a rebuilt image (same reference, new archive) is imported again.
 */
async function importImages(
  ctr: (args: readonly string[]) => Promise<{ stdout: string }>,
  containerdRoot: string,
  images: readonly { ref: string; archive: string }[],
): Promise<void> {
  const recordPath = join(containerdRoot, 'imported-archives.json');
  const record = existsSync(recordPath)
    ? (JSON.parse(readFileSync(recordPath, 'utf8')) as Record<string, string>)
    : {};
  const present = new Set((await ctr(['images', 'ls', '-q'])).stdout.split('\n'));
  for (const image of images) {
    if (present.has(image.ref) && record[image.ref] === image.archive) continue;
    await ctr(['images', 'import', '--local', image.archive]);
    record[image.ref] = image.archive;
    writeFileSync(recordPath, JSON.stringify(record));
  }
}

async function writeKubeletConfig(
  context: NodeContext,
  dirs: NodeDirs,
  containerdSocket: string,
  serving: CertPair,
): Promise<string> {
  const path = join(dirs.config, 'kubelet.yaml');
  const resolvConf = join(dirs.config, 'resolv.conf');
  // Pods resolve only cluster names: nothing outside the machine resolves anyway.
  await writeFile(resolvConf, '');
  await writeFile(
    path,
    dump({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      // This machine mounts cgroup v1 (hybrid); the kubelet refuses it unless told.
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      containerRuntimeEndpoint: `unix://${containerdSocket}`,
      address: '0.0.0.0',
      port: await freePort(),
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort: await freePort(),
      tlsCertFile: serving.cert,
      tlsPrivateKeyFile: serving.key,
      authentication: {
        x509: { clientCAFile: context.pki.caCert },
        webhook: { enabled: false },
        anonymous: { enabled: false },
      },
      // Only holders of the cluster CA's certificates (the apiserver) pass authentication.
      authorization: { mode: 'AlwaysAllow' },
      clusterDomain: 'cluster.local',
      clusterDNS: [BRIDGE_ADDRESS],
      resolvConf,
      podLogsDir: dirs.podLogs,
      // kube-proxy keeps the chains it needs; the kubelet's own would only be left behind.
      makeIPTablesUtilChains: false,
      failSwapOn: false,
      registerWithTaints: [{ ...REAL_NODE.taint }],
      // A development machine's disk may be nearly full; engines must not be evicted for it.
      evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      // Status updates often enough that tests see changes quickly.
      nodeStatusUpdateFrequency: '5s',
      serializeImagePulls: false,
      staticPodPath: '',
      logging: { format: 'text' },
    }),
  );
  return path;
}

async function writeKubeProxyConfig(context: NodeContext, dirs: NodeDirs): Promise<string> {
  const path = join(dirs.config, 'kube-proxy.yaml');
  await writeFile(
    path,
    dump({
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      clientConnection: { kubeconfig: context.kubeconfigPath, qps: 50, burst: 100 },
      hostnameOverride: REAL_NODE.name,
      mode: 'iptables',
      clusterCIDR: POD_SUBNET,
      healthzBindAddress: `127.0.0.1:${await freePort()}`,
      metricsBindAddress: `127.0.0.1:${await freePort()}`,
      // Leave the machine's conntrack table settings as they are.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
      iptables: { localhostNodePorts: false },
    }),
  );
  return path;
}

async function writeCorefile(context: NodeContext, dirs: NodeDirs, healthPort: number): Promise<string> {
  const path = join(dirs.config, 'Corefile');
  await writeFile(
    path,
    `.:53 {
    bind ${BRIDGE_ADDRESS}
    errors
    health 127.0.0.1:${healthPort}
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ${context.kubeconfigPath}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
`,
  );
  return path;
}

/**
 * local-path-provisioner, out of cluster: claims of the `local-path` class get a folder on the
 * real node, made and removed by a helper pod. Volumes cannot grow (it never expands them).
 */
async function startLocalPath(
  context: NodeContext,
  {
    dirs,
    binaries,
    helperImage,
    launch,
  }: {
    dirs: NodeDirs;
    binaries: NodeBinaries;
    helperImage: string;
    launch: (name: string, command: string, args: string[]) => ManagedProcess;
  },
): Promise<ManagedProcess> {
  const core = context.kubeConfig.makeApiClient(CoreV1Api);
  const storage = context.kubeConfig.makeApiClient(StorageV1Api);
  await core.createNamespace({ body: { metadata: { name: LOCAL_PATH_NAMESPACE } } });
  await core.createNamespacedServiceAccount({
    namespace: LOCAL_PATH_NAMESPACE,
    body: { metadata: { name: 'local-path-provisioner' } },
  });
  const helperPod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'helper-pod' },
    spec: {
      tolerations: [{ operator: 'Exists' }],
      containers: [{ name: 'helper-pod', image: helperImage, imagePullPolicy: 'Never' }],
    },
  };
  await core.createNamespacedConfigMap({
    namespace: LOCAL_PATH_NAMESPACE,
    body: {
      metadata: { name: 'local-path-config' },
      data: {
        'config.json': JSON.stringify({
          nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [dirs.volumes] }],
        }),
        setup: '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n',
        teardown: '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n',
        'helperPod.yaml': dump(helperPod),
      },
    },
  });
  await storage.createStorageClass({
    body: {
      metadata: { name: REAL_NODE.storageClass },
      provisioner: 'rancher.io/local-path',
      reclaimPolicy: 'Delete',
      // The volume is made on the node the pod lands on, once it lands.
      volumeBindingMode: 'WaitForFirstConsumer',
    },
  });
  return launch('local-path-provisioner', join(binaries.localPath, 'local-path-provisioner'), [
    'start',
    `--kubeconfig=${context.kubeconfigPath}`,
    `--namespace=${LOCAL_PATH_NAMESPACE}`,
    '--configmap-name=local-path-config',
    '--service-account-name=local-path-provisioner',
    '--provisioner-name=rancher.io/local-path',
    `--helper-image=${helperImage}`,
  ]);
}

function nodeReady(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}
