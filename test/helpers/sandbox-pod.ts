import { CoreV1Api, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { ENGINE_KIND_LABEL } from '../../shared/resources.ts';
import type { SandboxTarget } from '../../gateway/src/sandbox/target.ts';
import type { Cluster } from '../cluster/cluster.ts';
import { SANDBOX_KIND } from '../cluster/sandbox-simulator.ts';

/** The container of {@link startSandboxPod}'s pods. */
export const SANDBOX_CONTAINER = 'sandbox';

/** What a test sets of the container (its environment, volume mounts). */
export type ContainerFields = Partial<Omit<V1Container, 'name' | 'image'>>;

/** A pod labelled as a sandbox engine's, with one container; each volume mount is an emptyDir's. */
export function sandboxPodManifest(name: string, container: ContainerFields = {}): V1Pod {
  const volumes = (container.volumeMounts ?? []).map((m) => ({ name: m.name, emptyDir: {} }));
  return {
    metadata: { name, labels: { [ENGINE_KIND_LABEL]: SANDBOX_KIND } },
    spec: {
      containers: [{ ...container, name: SANDBOX_CONTAINER, image: 'example.invalid/sandbox:1' }],
      ...(volumes.length > 0 ? { volumes } : {}),
    },
  };
}

/**
 * Creates a sandbox pod on a simulated node and resolves once the cluster's sandbox simulator
 * serves its exec: with where commands run, and the host directory that is its root.
 */
export async function startSandboxPod(
  cluster: Cluster,
  namespace: string,
  name: string,
  container: ContainerFields = {},
): Promise<{ target: SandboxTarget; dir: string }> {
  await cluster.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespacedPod({ namespace, body: sandboxPodManifest(name, container) });
  const dir = await cluster.sandboxes.ready({ namespace, name });
  return { target: { namespace, pod: name, container: SANDBOX_CONTAINER }, dir };
}
