import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBuildScript } from './script-output.ts';

/** Folders that hold the control plane's binaries, as built by build-binaries.sh. */
export interface Binaries {
  /** kube-apiserver, kube-controller-manager, kube-scheduler and kubectl. */
  kubernetes: string;
  etcd: string;
  /** kwok, its stage configurations under stages/ and its Logs, Exec and ClusterExec CRDs under crds/. */
  kwok: string;
  helm: string;
  openapiv2: string;
  grpcurl: string;
  /** metrics-server (started only by clusters that ask for the metrics API). */
  metricsServer: string;
}

/** Folders of the real node's binaries (real-node.ts), built only when a real node is wanted. */
export interface NodeBinaries {
  /** kubelet and kube-proxy. */
  kubelet: string;
  /** containerd, containerd-shim-runc-v2 and ctr. */
  containerd: string;
  /** The CNI plugins bridge, host-local, loopback and portmap. */
  cni: string;
  coredns: string;
  /** The statically linked pause program; `pauseVersion` is its release. */
  pause: string;
  pauseVersion: string;
  localPath: string;
  /** kube-network-policies, the NetworkPolicy agent (network-policy-agent.ts). */
  networkPolicies: string;
}

const BUILD_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'build-binaries.sh');

/**
 * Builds any missing binary (minutes, once per machine) and returns where they all are.
 * A warm call only checks that the files exist.
 */
export async function ensureBinaries(): Promise<Binaries> {
  const get = await buildBinaries([]);
  return {
    kubernetes: get('KUBERNETES_BIN'),
    etcd: get('ETCD_BIN'),
    kwok: get('KWOK_BIN'),
    helm: get('HELM_BIN'),
    openapiv2: get('OPENAPIV2_BIN'),
    grpcurl: get('GRPCURL_BIN'),
    metricsServer: get('METRICS_SERVER_BIN'),
  };
}

/** Builds the real node's binaries if missing (cold: about 6 minutes once per machine). */
export async function ensureNodeBinaries(): Promise<NodeBinaries> {
  const get = await buildBinaries(['real-node']);
  return {
    kubelet: get('KUBELET_BIN'),
    containerd: get('CONTAINERD_BIN'),
    cni: get('CNI_BIN'),
    coredns: get('COREDNS_BIN'),
    pause: get('PAUSE_BIN'),
    pauseVersion: get('PAUSE_VERSION'),
    localPath: get('LOCAL_PATH_BIN'),
    networkPolicies: get('NETWORK_POLICIES_BIN'),
  };
}

/** Runs build-binaries.sh for `targets` (all the control plane's when empty); a reader of its KEY=path lines. */
function buildBinaries(targets: readonly string[]): Promise<(key: string) => string> {
  return runBuildScript(BUILD_SCRIPT, targets);
}

/**
 * Builds Kueue's manager if missing (cold: about 3 minutes once per machine) and returns its
 * folder: the `kueue` binary, its CRDs under config/crds and its webhook manifests in
 * config/webhooks.yaml.
 */
export async function ensureKueueBinary(): Promise<string> {
  const get = await buildBinaries(['kueue']);
  return get('KUEUE_BIN');
}
