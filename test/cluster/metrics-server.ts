/**
 * metrics-server on the local control plane: the `metrics.k8s.io` API (PodMetrics, NodeMetrics)
 * that sandbox engines' metrics read, as in a production cluster. kwok simulates the kubelets'
 * resource metrics (its Metric `metrics-resource`, fed by ResourceUsage objects: see
 * sandbox-simulator.ts), metrics-server scrapes them at the path each node's annotation names,
 * and the apiserver serves its API through aggregation: an ExternalName Service pointing at the
 * loopback address (the trick kwokctl uses) and an APIService.
 */
import { join } from 'node:path';
import { CustomObjectsApi, KubernetesObjectApi, type KubeConfig } from '@kubernetes/client-node';
import type { Binaries } from './binaries.ts';
import type { Pki } from './pki.ts';
import { freePort } from './ports.ts';
import { startProcess, type ManagedProcess } from './process.ts';
import { GiveUp, waitFor } from './wait.ts';

/** How often metrics-server scrapes the nodes; a new pod has metrics after two or three scrapes. */
export const METRICS_RESOLUTION_SECONDS = 10;

/** The kube-apiserver flags that let it proxy aggregated APIs and authenticate itself to them. */
export function aggregationFlags(pki: Pki): string[] {
  return [
    `--requestheader-client-ca-file=${pki.caCert}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--proxy-client-cert-file=${pki.frontProxyCert}`,
    `--proxy-client-key-file=${pki.frontProxyKey}`,
  ];
}

/**
 * Starts metrics-server on a loopback port, registers its API with the apiserver and resolves
 * once `metrics.k8s.io` answers. The process is pushed to `processes` (stopped with the others).
 */
export async function startMetricsServer(context: {
  binaries: Binaries;
  runDir: string;
  processes: ManagedProcess[];
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  pki: Pki;
}): Promise<ManagedProcess> {
  const port = await freePort();
  const { kubeconfigPath, pki } = context;
  const process = startProcess({
    name: 'metrics-server',
    command: join(context.binaries.metricsServer, 'metrics-server'),
    args: [
      `--kubeconfig=${kubeconfigPath}`,
      `--authentication-kubeconfig=${kubeconfigPath}`,
      `--authorization-kubeconfig=${kubeconfigPath}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--cert-dir=${join(context.runDir, 'metrics-server')}`,
      // kwok serves the kubelet endpoints at each node's InternalIP and status port, with a
      // certificate of the cluster CA.
      '--kubelet-preferred-address-types=InternalIP',
      '--kubelet-use-node-status-port',
      `--kubelet-certificate-authority=${pki.caCert}`,
      // 10 s is the shortest resolution metrics-server takes; it must exceed the scrape timeout.
      `--metric-resolution=${METRICS_RESOLUTION_SECONDS}s`,
      `--kubelet-request-timeout=${METRICS_RESOLUTION_SECONDS / 2}s`,
    ],
    logDir: context.runDir,
  });
  context.processes.push(process);
  const objects = KubernetesObjectApi.makeApiClient(context.kubeConfig);
  for (const body of registration(port)) await objects.create(body as never);
  const custom = context.kubeConfig.makeApiClient(CustomObjectsApi);
  // Available once the apiserver proxies the API; samples of a pod follow its second scrape.
  await waitFor(
    async () => {
      if (!process.running()) throw new GiveUp('metrics-server exited during start-up');
      await custom.listClusterCustomObject({ group: 'metrics.k8s.io', version: 'v1beta1', plural: 'pods' });
      return true;
    },
    {
      what: 'the metrics.k8s.io API to be served',
      timeoutMs: 120_000,
      intervalMs: 250,
      explain: () => process.tail(),
    },
  );
  return process;
}

/** The Service and APIService through which the apiserver reaches metrics-server on `port`. */
export function registration(port: number): [object, object] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'metrics-server', namespace: 'kube-system' },
      spec: { type: 'ExternalName', externalName: '127.0.0.1' },
    },
    {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1beta1.metrics.k8s.io' },
      spec: {
        group: 'metrics.k8s.io',
        version: 'v1beta1',
        groupPriorityMinimum: 100,
        versionPriority: 100,
        // metrics-server serves a certificate it made itself, for the loopback address.
        insecureSkipTLSVerify: true,
        service: { name: 'metrics-server', namespace: 'kube-system', port },
      },
    },
  ];
}
