import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { ENGINE_KIND_LABEL } from '../../shared/resources.ts';
import type { SandboxTarget } from '../../gateway/src/sandbox/target.ts';
import type { Cluster } from '../cluster/cluster.ts';
import { SANDBOX_KIND } from '../cluster/sandbox-simulator.ts';

/** The container of {@link startSandboxPod}'s pods. */
export const SANDBOX_CONTAINER = 'sandbox';

/** A pod labelled as a sandbox engine's, with one container. */
export function sandboxPodManifest(name: string): V1Pod {
  return {
    metadata: { name, labels: { [ENGINE_KIND_LABEL]: SANDBOX_KIND } },
    spec: { containers: [{ name: SANDBOX_CONTAINER, image: 'example.invalid/sandbox:1' }] },
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
): Promise<{ target: SandboxTarget; dir: string }> {
  await cluster.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespacedPod({ namespace, body: sandboxPodManifest(name) });
  const dir = await cluster.sandboxes.ready({ namespace, name });
  return { target: { namespace, pod: name, container: SANDBOX_CONTAINER }, dir };
}
