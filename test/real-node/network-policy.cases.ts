import { CoreV1Api, NetworkingV1Api, type V1NetworkPolicy, type V1Pod } from '@kubernetes/client-node';
import { desiredObjects } from '../../operator/src/desired/workload.ts';
import type { EngineResource } from '../../operator/src/kinds/kind.ts';
import { notebookEngineKind } from '../../operator/src/kinds/notebook-engine.ts';
import { waitFor } from '../cluster/wait.ts';
import { GATEWAY_POD } from '../helpers/api-server.ts';
import { podReaches as reaches, probePod, useNamespaces } from './probe-pods.ts';
import { REAL_NODE_CLUSTER } from './real-product.ts';
import { useCluster } from '../helpers/use-cluster.ts';
import type { Cluster } from '../cluster/cluster.ts';

const NAMESPACE = 'network-policy';
const kind = notebookEngineKind;
const PORT = kind.port ?? 8888;
// What the chart configures, and what the operator's integration tests run with.
const SETTINGS = {
  publicUrl: 'http://127.0.0.1:8080',
  engineNetworkPeers: [{ podSelector: { matchLabels: GATEWAY_POD } }],
};

// Set in the describe block: its cluster runs only while its tests do (real-node.test.ts).
let cluster: () => Cluster;

/** A notebook engine of some user, as the operator sees it; only its identity matters here. */
function engine(id: string): EngineResource {
  return {
    metadata: { name: `w.${id}`, namespace: NAMESPACE, uid: `uid-${id}` },
    spec: {},
    status: { notebookImageInfo: { image: 'unused' } },
  };
}

/** The labels the operator gives the engine's pods, and the NetworkPolicy it writes for them. */
function operatorView(id: string): { labels: Record<string, string>; policy: V1NetworkPolicy | undefined } {
  const desired = desiredObjects(kind, engine(id), SETTINGS);
  const labels = desired.statefulSet.spec?.template.metadata?.labels ?? {};
  const policy = desired.networkPolicy;
  // The engine object does not exist here: an owner reference to it would have the garbage
  // collector delete the policy.
  if (policy?.metadata !== undefined) delete policy.metadata.ownerReferences;
  return { labels, policy };
}

/** A pod on the real node running `command`; the engine's pod is Ready once it serves. */
function pod(name: string, labels: Record<string, string>, command: string[]): V1Pod {
  return probePod(cluster(), { name, labels, command, ...(name === 'engine-a' ? { readyPort: PORT } : {}) });
}

/** Whether `from` (a pod's name) gets an HTTP answer from `url` within a second. */
function podReaches(from: string, url: string): Promise<boolean> {
  return reaches(cluster(), from, NAMESPACE, url);
}

async function hostReaches(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
  return res?.status === 200;
}

/** Declares the cases (real-node.test.ts runs them on its one cluster with a real node). */
export function networkPolicyCases(): void {
  describe('NetworkPolicies on the real node', () => {
    cluster = useCluster(REAL_NODE_CLUSTER);
    useNamespaces(cluster, [NAMESPACE]);
    let engineUrl = '';
    const a = operatorView('a');
    const b = operatorView('b');

    beforeAll(async () => {
      const core = cluster().kubeConfig.makeApiClient(CoreV1Api);
      const networking = cluster().kubeConfig.makeApiClient(NetworkingV1Api);
      if (a.policy === undefined) throw new Error('The operator wrote no NetworkPolicy for engine A');
      await networking.createNamespacedNetworkPolicy({ namespace: NAMESPACE, body: a.policy });
      const serve = ['python3', '-m', 'http.server', String(PORT), '--bind', '0.0.0.0'];
      const idle = ['sleep', 'infinity'];
      await Promise.all([
        core.createNamespacedPod({ namespace: NAMESPACE, body: pod('engine-a', a.labels, serve) }),
        core.createNamespacedPod({ namespace: NAMESPACE, body: pod('engine-b', b.labels, idle) }),
        core.createNamespacedPod({ namespace: NAMESPACE, body: pod('gateway', GATEWAY_POD, idle) }),
      ]);
      const ready = (name: string): Promise<V1Pod> =>
        waitFor(
          async () => {
            const p = await core.readNamespacedPod({ name, namespace: NAMESPACE });
            return p.status?.containerStatuses?.[0]?.ready === true ? p : undefined;
          },
          { what: `${name} to be ready on the real node`, timeoutMs: 60_000 },
        );
      const [engineA] = await Promise.all([ready('engine-a'), ready('engine-b'), ready('gateway')]);
      engineUrl = `http://${engineA.status?.podIP ?? ''}:${PORT}/`;
      // The agent learns of pods and the policy through watches, and refuses a pod it has not seen
      // yet: once the gateway pod gets its answer, it judges by the policy and every pod.
      await waitFor(async () => ((await podReaches('gateway', engineUrl)) ? true : undefined), {
        what: 'the gateway pod to get an answer from engine A',
        timeoutMs: 60_000,
      });
    }, 180_000);

    test("another user's engine cannot open the engine's port", async () => {
      expect(await podReaches('engine-b', engineUrl)).toBe(false);
    });

    test('a gateway pod opens it', async () => {
      expect(await podReaches('gateway', engineUrl)).toBe(true);
    });

    test('the host, where a locally run gateway lives, opens it', async () => {
      expect(await hostReaches(engineUrl)).toBe(true);
    });

    test('without the policy the other engine reaches it again', async () => {
      const networking = cluster().kubeConfig.makeApiClient(NetworkingV1Api);
      await networking.deleteNamespacedNetworkPolicy({
        name: a.policy?.metadata?.name ?? '',
        namespace: NAMESPACE,
      });
      expect(
        await waitFor(async () => ((await podReaches('engine-b', engineUrl)) ? true : undefined), {
          what: 'engine B to reach engine A once the policy is gone',
          timeoutMs: 30_000,
        }),
      ).toBe(true);
    });
  });
}
