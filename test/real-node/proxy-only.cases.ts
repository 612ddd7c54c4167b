/**
 * The chart's default engine isolation, enforced on the real node: the peers the chart renders
 * for the operator (its gateway and operator pods alone, and with public sandbox ports, pods of
 * other namespaces for sandboxes only), made into engines' NetworkPolicies by the operator's own
 * code, admit the gateway (the access proxy) and the operator (its activity probes) to an engine's
 * port and nothing else — not another engine, not a pod of another namespace such as an ingress
 * controller — while a sandbox still admits that controller, which serves its public ports.
 */
import {
  CoreV1Api,
  NetworkingV1Api,
  type V1Deployment,
  type V1NetworkPolicy,
  type V1Pod,
} from '@kubernetes/client-node';
import { networkPeers } from '../../operator/src/desired/network-peers.ts';
import { desiredObjects } from '../../operator/src/desired/workload.ts';
import type { EngineKind, EngineResource, Settings } from '../../operator/src/kinds/kind.ts';
import { notebookEngineKind } from '../../operator/src/kinds/notebook-engine.ts';
import { sandboxEngineKind } from '../../operator/src/kinds/sandbox-engine.ts';
import { find, MINIMAL_VALUES, render } from '../charts/helm.ts';
import { waitFor } from '../cluster/wait.ts';
import { podReaches, probePod, useNamespaces } from './probe-pods.ts';
import { REAL_NODE_CLUSTER } from './real-product.ts';
import { useCluster } from '../helpers/use-cluster.ts';
import type { Cluster } from '../cluster/cluster.ts';

/** The release namespace: engines, the gateway and the operator run here. */
const NAMESPACE = 'proxy-only';
/** Where an ingress controller would run. */
const ELSEWHERE = 'ingress-nginx';
const NOTEBOOK_PORT = notebookEngineKind.port ?? 8888;
/** A port a sandbox user exposes (sandboxes have no port of their own). */
const SANDBOX_PORT = 8000;

// Set in the describe block: its cluster runs only while its tests do (real-node.test.ts).
let cluster: () => Cluster;

/** The chart's operator environment and its components' pod labels, for the release namespace. */
async function chart(): Promise<{
  env: Record<string, string | undefined>;
  labels: (component: string) => Record<string, string>;
}> {
  const values = { ...MINIMAL_VALUES, sandboxes: { ports: { publicUrl: 'https://ports.example.com' } } };
  const objects = await render(values, { release: 'aiem', namespace: NAMESPACE });
  // The rendered manifests read as the Kubernetes objects they are.
  const deployment = (component: string): V1Deployment => find(objects, 'Deployment', `-${component}`);
  const env = Object.fromEntries(
    (deployment('operator').spec?.template.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]),
  );
  const labels = (component: string): Record<string, string> =>
    deployment(component).spec?.template.metadata?.labels ?? {};
  return { env, labels };
}

/** An engine of some user, as the operator sees it; only its identity matters here. */
function engine(id: string): EngineResource {
  return {
    metadata: { name: `w.${id}`, namespace: NAMESPACE, uid: `uid-${id}` },
    spec: {},
    status: {
      notebookImageInfo: { image: 'unused' },
      sandboxEngineImageInfo: { image: 'unused' },
      sandboxEngineTemplateInfo: {},
    },
  };
}

/** The labels the operator gives the engine's pods, and the NetworkPolicy it writes for them. */
function operatorView(
  kind: EngineKind,
  id: string,
  settings: Settings,
): { labels: Record<string, string>; policy: V1NetworkPolicy } {
  const desired = desiredObjects(kind, engine(id), settings);
  const policy = desired.networkPolicy;
  if (policy?.metadata === undefined) throw new Error(`The operator wrote no NetworkPolicy for ${id}`);
  // The engine object does not exist here: an owner reference to it would have the garbage
  // collector delete the policy.
  delete policy.metadata.ownerReferences;
  return { labels: desired.statefulSet.spec?.template.metadata?.labels ?? {}, policy };
}

/** A pod on the real node serving HTTP on `port`, or idle. */
function pod(name: string, labels: Record<string, string>, port?: number): V1Pod {
  return port === undefined
    ? probePod(cluster(), { name, labels, command: ['sleep', 'infinity'] })
    : probePod(cluster(), {
        name,
        labels,
        command: ['python3', '-m', 'http.server', String(port), '--bind', '0.0.0.0'],
        readyPort: port,
      });
}

/** Whether the pod `from` in `namespace` gets an HTTP answer from `url` within a second. */
function reaches(from: string, namespace: string, url: string): Promise<boolean> {
  return podReaches(cluster(), from, namespace, url);
}

/** Declares the cases (real-node.test.ts runs them on its one cluster with a real node). */
export function proxyOnlyCases(): void {
  describe("the chart's default engine peers on the real node", () => {
    cluster = useCluster(REAL_NODE_CLUSTER);
    useNamespaces(cluster, [NAMESPACE, ELSEWHERE]);
    const urls = { notebook: '', sandbox: '' };

    beforeAll(async () => {
      const { env, labels } = await chart();
      const engineNetworkPeers = networkPeers(env['AIEM_ENGINE_NETWORK_PEERS']);
      const publishedPortPeers = networkPeers(env['AIEM_SANDBOX_PORTS_PEERS'], 'AIEM_SANDBOX_PORTS_PEERS');
      // As operator/src/main.ts reads them.
      const settings: Settings = {
        publicUrl: 'https://aiem.example.com',
        engineNetworkPeers,
        publishedPortPeers,
      };
      const notebook = operatorView(notebookEngineKind, 'notebook', settings);
      const sandbox = operatorView(sandboxEngineKind, 'sandbox', settings);
      const other = operatorView(notebookEngineKind, 'other', settings);

      const core = cluster().kubeConfig.makeApiClient(CoreV1Api);
      const networking = cluster().kubeConfig.makeApiClient(NetworkingV1Api);
      for (const { policy } of [notebook, sandbox, other])
        await networking.createNamespacedNetworkPolicy({ namespace: NAMESPACE, body: policy });
      const pods: [string, V1Pod][] = [
        [NAMESPACE, pod('notebook', notebook.labels, NOTEBOOK_PORT)],
        [NAMESPACE, pod('sandbox', sandbox.labels, SANDBOX_PORT)],
        [NAMESPACE, pod('other-engine', other.labels)],
        [NAMESPACE, pod('gateway', labels('gateway'))],
        [NAMESPACE, pod('operator', labels('operator'))],
        [ELSEWHERE, pod('controller', { 'app.kubernetes.io/name': 'ingress-nginx' })],
      ];
      await Promise.all(pods.map(([namespace, body]) => core.createNamespacedPod({ namespace, body })));
      const ready = ([namespace, { metadata }]: [string, V1Pod]): Promise<V1Pod> =>
        waitFor(
          async () => {
            const p = await core.readNamespacedPod({ name: metadata?.name ?? '', namespace });
            return p.status?.containerStatuses?.[0]?.ready === true ? p : undefined;
          },
          { what: `${metadata?.name ?? ''} to be ready on the real node`, timeoutMs: 90_000 },
        );
      const [notebookPod, sandboxPod] = await Promise.all(pods.map(ready));
      urls.notebook = `http://${notebookPod?.status?.podIP ?? ''}:${NOTEBOOK_PORT}/`;
      urls.sandbox = `http://${sandboxPod?.status?.podIP ?? ''}:${SANDBOX_PORT}/`;
      // The agent learns of pods and policies through watches, and refuses a connection from a pod
      // it has not seen yet: wait until it has seen every pod (each allowed peer, of both
      // namespaces, gets its answer) before judging what it refuses.
      const allowed: [string, string, string][] = [
        ['gateway', NAMESPACE, urls.notebook],
        ['gateway', NAMESPACE, urls.sandbox],
        ['operator', NAMESPACE, urls.notebook],
        ['operator', NAMESPACE, urls.sandbox],
        ['controller', ELSEWHERE, urls.sandbox],
      ];
      for (const [from, namespace, url] of allowed)
        await waitFor(async () => ((await reaches(from, namespace, url)) ? true : undefined), {
          what: `${from} to get an answer from ${url}`,
          timeoutMs: 60_000,
        });
    }, 300_000);

    test("the gateway's and the operator's pods open a notebook's port and a sandbox's", async () => {
      for (const from of ['gateway', 'operator']) {
        expect(await reaches(from, NAMESPACE, urls.notebook)).toBe(true);
        expect(await reaches(from, NAMESPACE, urls.sandbox)).toBe(true);
      }
    });

    test('another engine, in the same namespace, opens neither', async () => {
      expect(await reaches('other-engine', NAMESPACE, urls.notebook)).toBe(false);
      expect(await reaches('other-engine', NAMESPACE, urls.sandbox)).toBe(false);
    });

    test("a pod of another namespace (an ingress controller) is refused the notebook but opens the sandbox's public port", async () => {
      expect(await reaches('controller', ELSEWHERE, urls.notebook)).toBe(false);
      expect(await reaches('controller', ELSEWHERE, urls.sandbox)).toBe(true);
    });
  });
}
