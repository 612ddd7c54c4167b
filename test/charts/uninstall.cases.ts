/**
 * `helm uninstall` with the product running for real: the chart installed with its gateway and
 * operator pods on the local cluster's real node (the image `make image` built, imported into the
 * node's containerd), a notebook engine created through the API and running there, then both
 * uninstall choices. `uninstall.engines=keep` leaves the engine, its pod and its data volume,
 * released from the operator's finalizer; installing again manages it again; and
 * `uninstall.engines=delete` deletes it and its data before the operator goes. Afterwards the
 * CRDs delete without waiting on anything, and nothing the release made is left.
 *
 * The local apiserver listens on loopback only, which pods cannot reach: a relay on the machine's
 * address forwards to it, the `kubernetes` Service's endpoint names the relay, and the pods dial
 * the Service by the name the apiserver's certificate holds (`kubernetes.default.svc`), through
 * the chart's extraEnv. Everything else is the chart's own.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import { ensureNodeBinaries } from '../cluster/binaries.ts';
import { NODE_PATHS } from '../cluster/node-host.ts';
import { createCatalogue, realCatalogue } from '../cluster/real-catalogue.ts';
import { machineAddress, REAL_NODE } from '../cluster/real-node.ts';
import type { Cluster } from '../cluster/cluster.ts';
import { waitFor } from '../cluster/wait.ts';
import { useCluster } from '../helpers/use-cluster.ts';
import { startIdentityProvider, type IdentityProvider } from '../identity/provider.ts';
import { adminRest, CHART, helm, oidcValues, ROOT, valuesFile } from './helm.ts';

const NAMESPACE = 'aiem-system';
const RELEASE = 'aiem';
const INSTANCE = `app.kubernetes.io/instance=${RELEASE}`;
const ENGINE = 'notebookengines.engine.h2o.ai/lab.nb';
const FINALIZER = 'engine.h2o.ai/cleanup';
/** What the release makes in its namespace, and cluster-wide. */
const NAMESPACED =
  'deployments,replicasets,pods,jobs,services,serviceaccounts,roles,rolebindings,configmaps,secrets,poddisruptionbudgets';
const CLUSTER_WIDE = 'clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations';

let provider: IdentityProvider | undefined;
let relay: Server | undefined;
// Set in the describe block: its cluster runs only while its tests do (test/real-node/real-node.test.ts).
let cluster: () => Cluster;
const kubectl = (args: readonly string[], input?: string): Promise<string> => cluster().kubectl(args, input);
const kubeconfig = (): { kubeconfig: string } => ({ kubeconfig: cluster().kubeconfigPath });
const identity = (): IdentityProvider => {
  if (provider === undefined) throw new Error('The identity provider is not running (did beforeAll fail?)');
  return provider;
};

/** The product image `make image` wrote, as an OCI archive. */
function imageArchive(): string {
  const dir = join(ROOT, 'dist', 'image');
  const archive = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith('.oci.tar')) : undefined;
  if (archive === undefined) throw new Error(`No image archive in ${dir}: run make image first`);
  return join(dir, archive);
}

/** Loads the product image into the real node's containerd, where pods with pullPolicy Never find it. */
async function importImage(): Promise<void> {
  const binaries = await ensureNodeBinaries();
  const socket = join(NODE_PATHS.state, 'containerd', 'containerd.sock');
  await promisify(execFile)(
    join(binaries.containerd, 'ctr'),
    ['--address', socket, '-n', 'k8s.io', 'images', 'import', '--local', imageArchive()],
    { maxBuffer: 16 * 1024 * 1024 },
  );
}

/**
 * Lets pods reach the loopback-only apiserver: a TCP relay on the machine's address, named as the
 * `kubernetes` Service's endpoint (kube-proxy then routes the Service's address to it).
 */
async function relayApiserver(ip: string): Promise<void> {
  const target = new URL(cluster().server);
  relay = createServer((socket) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
    socket.pipe(upstream).pipe(socket);
    const close = (): void => {
      socket.destroy();
      upstream.destroy();
    };
    socket.on('error', close);
    upstream.on('error', close);
  });
  await new Promise<void>((resolve) => relay?.listen(0, ip, resolve));
  const port = (relay.address() as AddressInfo).port;
  const slice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'kubernetes-relay', namespace: 'default', labels: { 'kubernetes.io/service-name': 'kubernetes' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    ports: [{ name: 'https', port, protocol: 'TCP' }],
  };
  await kubectl(['apply', '-f', '-'], JSON.stringify(slice));
}

/** Both processes, one replica each, on the real node, from the imported image, sized for a two-core machine. */
function releaseValues(engines: 'keep' | 'delete'): object {
  const onRealNode = {
    replicas: 1,
    nodeSelector: { [REAL_NODE.label.key]: REAL_NODE.label.value },
    tolerations: [{ key: REAL_NODE.taint.key, operator: 'Exists', effect: REAL_NODE.taint.effect }],
    resources: { requests: { cpu: '50m', memory: '192Mi' }, limits: { memory: '1Gi' } },
    extraEnv: [{ name: 'KUBERNETES_SERVICE_HOST', value: 'kubernetes.default.svc' }],
  };
  return {
    ...oidcValues(identity()),
    image: { pullPolicy: 'Never' },
    gateway: onRealNode,
    operator: onRealNode,
    uninstall: { engines },
  };
}

async function install(engines: 'keep' | 'delete'): Promise<void> {
  const args = ['install', RELEASE, CHART, '--namespace', NAMESPACE, '--create-namespace'];
  await helm([...args, '-f', valuesFile(releaseValues(engines)), '--wait', '--timeout', '5m'], kubeconfig());
}

async function uninstall(): Promise<number> {
  const started = Date.now();
  await helm(['uninstall', RELEASE, '--namespace', NAMESPACE, '--wait', '--timeout', '5m'], kubeconfig());
  const took = Date.now() - started;
  // Deleted Deployments' pods finish within their grace period (the gateway drains its calls first).
  await kubectl(['wait', '--for=delete', 'pods', '-n', NAMESPACE, '-l', INSTANCE, '--timeout=90s']);
  return took;
}

/** The release's pods: component, node, and whether Ready. */
async function releasePods(): Promise<{ component: string | undefined; node: string | undefined; ready: boolean }[]> {
  const pods = JSON.parse(await kubectl(['get', 'pods', '-n', NAMESPACE, '-l', INSTANCE, '-o', 'json'])) as { items: V1Pod[] };
  return pods.items
    .map((pod) => ({
      component: pod.metadata?.labels?.['app.kubernetes.io/component'],
      node: pod.spec?.nodeName,
      ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
    }))
    .sort((a, b) => String(a.component).localeCompare(String(b.component)));
}

/**
 * The gateway's REST base URL: its Service's ClusterIP, which kube-proxy routes from this machine,
 * once it does (kube-proxy programs a Service's new endpoints a moment after its pods are Ready).
 */
async function gatewayUrl(): Promise<string> {
  const ip = (await kubectl(['get', 'service', `${RELEASE}-ai-engine-manager-gateway`, '-n', NAMESPACE, '-o', 'jsonpath={.spec.clusterIP}'])).trim();
  const base = `http://${ip}:8080`;
  await waitFor(
    async () => ((await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200 ? true : undefined),
    { what: "the gateway's Service to route to a ready gateway", timeoutMs: 30_000 },
  );
  return base;
}

/** The names of what the release made that still exists, in its namespace and cluster-wide. */
async function leftOfRelease(): Promise<string[]> {
  const names = async (args: string[]): Promise<string[]> =>
    (await kubectl([...args, '-l', INSTANCE, '-o', 'name'])).split('\n').filter(Boolean);
  return [...(await names(['get', NAMESPACED, '-n', NAMESPACE])), ...(await names(['get', CLUSTER_WIDE]))];
}

/** The engine's workloads and data claim, by the operator's engine-kind label. */
async function engineObjects(): Promise<string[]> {
  const out = await kubectl(['get', 'statefulsets,pods,persistentvolumeclaims', '-n', NAMESPACE, '-l', 'engine.h2o.ai/engine-kind', '-o', 'name']);
  return out.split('\n').filter(Boolean).sort();
}

const finalizersOf = async (): Promise<string> =>
  (await kubectl(['get', ENGINE, '-n', NAMESPACE, '-o', 'jsonpath={.metadata.finalizers}'])).trim();


describe('helm uninstall with the product running on the real node', () => {
  afterAll(async () => {
    await provider?.stop();
    await new Promise<void>((resolve) => {
      if (relay === undefined) resolve();
      else relay.close(() => {
        resolve();
      });
    });
  });
  cluster = useCluster({ realNode: true, nodes: { cpuNodes: 1, gpuNodes: 0, gpusPerNode: 0 } });
  beforeAll(async () => {
    const ip = machineAddress();
    // On the machine's address, so that the gateway's pods reach the issuer too.
    provider = await startIdentityProvider({ host: ip, accounts: [{ id: 'admin', name: 'Ada Admin', roles: ['admin'] }] });
    await Promise.all([importImage(), relayApiserver(ip)]);
  }, 120_000);

  test('keep: the engine, its pod and its data stay, released from the finalizer; uninstall leaves nothing else', async () => {
    const installed = Date.now();
    await install('keep');
    console.log(`helm install (keep) --wait: ${Date.now() - installed} ms`);
    // Real pods, really ready: helm --wait saw the Deployments Available.
    expect(await releasePods()).toEqual([
      { component: 'gateway', node: REAL_NODE.name, ready: true },
      { component: 'operator', node: REAL_NODE.name, ready: true },
    ]);
    const base = await gatewayUrl();
    const token = await identity().accessToken('admin');
    await createCatalogue(base, token, realCatalogue(cluster().realNode?.images ?? []));
    const created = await adminRest(base, identity())('POST', '/v1/workspaces/lab/notebookEngines?notebookEngineId=nb', {
      profile: 'workspaces/global/notebookEngineProfiles/real',
      notebookImage: 'workspaces/global/notebookEngineImages/real',
    });
    expect(created.status).toBe(200);
    await kubectl(['wait', ENGINE, '-n', NAMESPACE, '--for=jsonpath={.status.state}=STATE_RUNNING', '--timeout=240s']);
    const running = await engineObjects();
    expect(running.filter((n) => n.startsWith('persistentvolumeclaim/'))).toHaveLength(1);
    expect(await finalizersOf()).toContain(FINALIZER);

    console.log(`helm uninstall (keep): ${await uninstall()} ms`);
    expect(await leftOfRelease()).toEqual([]);
    // The engine stays, released; its StatefulSet, pod and data claim are as they were.
    expect(await finalizersOf()).not.toContain(FINALIZER);
    expect(await engineObjects()).toEqual(running);
  }, 600_000);

  test('installing again manages the kept engine again; delete: uninstall deletes it and its data first', async () => {
    await install('delete');
    // The new operator puts its finalizer back and sees the engine running.
    await kubectl(['wait', ENGINE, '-n', NAMESPACE, `--for=jsonpath={.metadata.finalizers[0]}=${FINALIZER}`, '--timeout=120s']);
    await kubectl(['wait', ENGINE, '-n', NAMESPACE, '--for=jsonpath={.status.state}=STATE_RUNNING', '--timeout=120s']);

    console.log(`helm uninstall (delete): ${await uninstall()} ms`);
    expect(await leftOfRelease()).toEqual([]);
    expect(await kubectl(['get', 'notebookengines,daiengines,h2oengines,sandboxengines', '-n', NAMESPACE, '-o', 'name'])).toBe('');
    // The data claim went with the engine; its pod is gone or on its way out.
    await kubectl(['wait', '--for=delete', 'pods', '-n', NAMESPACE, '-l', 'engine.h2o.ai/engine-kind', '--timeout=60s']);
    expect(await engineObjects()).toEqual([]);
  }, 600_000);

  test('the CRDs the release kept then delete without waiting on anything', async () => {
    const crds = (await kubectl(['get', 'crd', '-l', INSTANCE, '-o', 'name'])).split('\n').filter(Boolean);
    expect(crds).toHaveLength(14);
    await kubectl(['delete', 'crd', '-l', INSTANCE, '--timeout=60s']);
    expect(await kubectl(['get', 'crd', '-l', INSTANCE, '-o', 'name'])).toBe('');
    expect(await leftOfRelease()).toEqual([]);
  }, 120_000);
});
