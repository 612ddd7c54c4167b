/**
 * Pods that probe NetworkPolicies on the real node: a pod of the sandbox image (python3) with the
 * labels a policy selects, a check of whether one such pod gets an HTTP answer from another, and
 * the namespaces they live in.
 */
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import type { Cluster } from '../cluster/cluster.ts';
import { REAL_NODE } from '../cluster/real-node.ts';
import { waitFor } from '../cluster/wait.ts';

/**
 * A pod on the real node from the sandbox image, running `command`; with `readyPort`, Ready once
 * it listens there (the kubelet probes from the host, so policies do not keep it from Ready).
 */
export function probePod(
  cluster: Cluster,
  pod: { name: string; labels: Record<string, string>; command: string[]; readyPort?: number },
): V1Pod {
  return {
    metadata: { name: pod.name, labels: pod.labels },
    spec: {
      nodeSelector: { [REAL_NODE.label.key]: REAL_NODE.label.value },
      tolerations: [{ key: REAL_NODE.taint.key, operator: 'Exists', effect: 'NoSchedule' }],
      terminationGracePeriodSeconds: 0,
      securityContext: { runAsUser: 1000, runAsGroup: 1000 },
      containers: [
        {
          name: 'main',
          image: cluster.realNode?.images.find((i) => i.kind === 'sandbox')?.ref,
          imagePullPolicy: 'Never',
          command: pod.command,
          ...(pod.readyPort === undefined
            ? {}
            : { readinessProbe: { tcpSocket: { port: pod.readyPort }, periodSeconds: 1 } }),
        },
      ],
    },
  };
}

/** Whether the pod `from` in `namespace` gets an HTTP answer from `url` within a second. */
export async function podReaches(
  cluster: Cluster,
  from: string,
  namespace: string,
  url: string,
): Promise<boolean> {
  const script =
    'import sys, urllib.request\n' +
    'try:\n    print(urllib.request.urlopen(sys.argv[1], timeout=1).status)\n' +
    'except OSError as e:\n    print(type(e).__name__)\n';
  const out = await cluster.kubectl(['-n', namespace, 'exec', from, '--', 'python3', '-c', script, url]);
  return out.trim() === '200';
}

/**
 * Namespaces of the calling describe block's own on a cluster that other blocks share: made
 * before its tests, deleted with everything in them (its pods and policies) after them.
 */
export function useNamespaces(cluster: () => Cluster, names: readonly string[]): void {
  const core = (): CoreV1Api => cluster().kubeConfig.makeApiClient(CoreV1Api);
  beforeAll(async () => {
    for (const name of names) await core().createNamespace({ body: { metadata: { name } } });
    // The ServiceAccount admission plugin refuses pods until the controller-manager has made the
    // namespace's default service account.
    for (const namespace of names)
      await waitFor(() => core().readNamespacedServiceAccount({ name: 'default', namespace }), {
        what: `the default service account of ${namespace}`,
      });
  });
  afterAll(async () => {
    for (const name of names) await core().deleteNamespace({ name });
  });
}
