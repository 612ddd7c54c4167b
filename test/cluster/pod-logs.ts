/**
 * Simulated container logs. kwok serves the kubelet's `containerLogs` endpoint, which the
 * apiserver calls for `GET /api/v1/namespaces/{ns}/pods/{pod}/log`; it reads each container's
 * log from a file on this host, named by kwok's `ClusterLogs` (every pod, from the kwok
 * configuration) and `Logs` (one pod, a custom resource) objects.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { waitFor } from './wait.ts';

/** kwok's per-pod log configuration, a namespaced custom resource named after its pod. */
const LOGS = { group: 'kwok.x-k8s.io', version: 'v1alpha1', plural: 'logs' } as const;

/** What every simulated container logs until a test says otherwise. */
export const DEFAULT_LOG_LINES: readonly string[] = [
  'Simulated container on a kwok node: no process runs, so nothing else is logged',
];

/** A pod whose containers' logs are simulated. */
export interface PodRef {
  namespace: string;
  name: string;
}

/**
 * Lines as a container runtime writes them (the CRI log format kubelets read, and kwok with
 * them): a timestamp, the stream, `F` for a full line, the text.
 */
export function criLog(lines: readonly string[], time: Date): string {
  const stamp = time.toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
  return lines.map((line) => `${stamp} stdout F ${line}\n`).join('');
}

/** The kwok configuration document that gives every container of every pod the log in `file`. */
export function defaultClusterLogs(file: string): Record<string, unknown> {
  return {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'ClusterLogs',
    metadata: { name: 'default' },
    // No selector and no container names: every pod, every container.
    spec: { logs: [{ logsFile: file }] },
  };
}

/** The `Logs` object that points each named container of a pod at its file. */
export function podLogs(pod: PodRef, files: Readonly<Record<string, string>>): Record<string, unknown> {
  return {
    apiVersion: `${LOGS.group}/${LOGS.version}`,
    kind: 'Logs',
    metadata: { name: pod.name, namespace: pod.namespace },
    spec: {
      logs: Object.entries(files).map(([container, logsFile]) => ({ containers: [container], logsFile })),
    },
  };
}

/**
 * Makes the named containers of a pod log `lines` (in the pod log API), replacing any earlier
 * simulation of that pod, and resolves once the apiserver serves them. A container mapped to
 * `undefined` gets a log file that does not exist, so reading its log fails as it does on a
 * kubelet whose container has not started.
 */
export async function simulatePodLogs(
  kubeConfig: KubeConfig,
  dir: string,
  pod: PodRef,
  containers: Readonly<Record<string, readonly string[] | undefined>>,
): Promise<void> {
  const podDir = join(dir, pod.namespace, pod.name);
  await mkdir(podDir, { recursive: true });
  const files: Record<string, string> = {};
  for (const [container, lines] of Object.entries(containers)) {
    files[container] = join(podDir, `${container}.log`);
    if (lines === undefined) await rm(files[container], { force: true });
    else await writeFile(files[container], criLog(lines, new Date()));
  }
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const body = podLogs(pod, files);
  await custom
    .deleteNamespacedCustomObject({ ...LOGS, namespace: pod.namespace, name: pod.name })
    .catch(() => undefined);
  await custom.createNamespacedCustomObject({ ...LOGS, namespace: pod.namespace, body });
  // kwok learns of the object through its own watch; nothing announces when it has.
  const core = kubeConfig.makeApiClient(CoreV1Api);
  for (const [container, lines] of Object.entries(containers)) {
    await waitFor(
      async () => {
        const read = core.readNamespacedPodLog({ ...pod, container });
        if (lines === undefined) return read.then(() => undefined).catch(() => true);
        return (await read) === lines.map((line) => `${line}\n`).join('') ? true : undefined;
      },
      {
        what: `kwok to serve the simulated log of ${pod.namespace}/${pod.name} ${container}`,
        timeoutMs: 30_000,
      },
    );
  }
}
