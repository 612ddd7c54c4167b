/**
 * The chart installed with `helm install` on the local control plane: the CRDs, the Deployments
 * (Available, their pods Running on the simulated nodes), RBAC checked with `kubectl auth can-i`
 * against what the code calls, the gateway and operator processes run as the chart configures
 * them and signed in as the chart's ServiceAccounts through an engine's life, an upgrade, and
 * `helm uninstall`.
 *
 * kwok marks the chart's pods Running without running their containers (the nodes are simulated),
 * so the product's image (`make image`) runs beside the cluster under podman instead, with the
 * rendered command, environment, mounts and security context and a token of each pod's
 * ServiceAccount: what they may do is what the pods could.
 */
import { waitFor } from '../cluster/wait.ts';
import type { RestResponse } from '../helpers/api-server.ts';
import { ContainerProcess, VERSION, type PodSpec } from '../helpers/image.ts';
import { stopAll, type LoggedProcess } from '../helpers/product-process.ts';
import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoordinationV1Api, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import { dump, load } from 'js-yaml';
import { KWOK_NODE_ANNOTATION } from '../cluster/nodes.ts';
import { DEFAULT_LOG_LINES } from '../cluster/pod-logs.ts';
import { useCluster } from '../helpers/use-cluster.ts';
import { startIdentityProvider, type IdentityProvider } from '../identity/provider.ts';
import { adminRest, CHART, helm, oidcValues, parseManifests, ROOT, valuesFile, type Rendered } from './helm.ts';
import { gatewayNeeds, LEASE, operatorNeeds, permissionKey, withoutQueueing, type Permission } from './permissions.ts';

const NAMESPACE = 'aiem-system';
const RELEASE = 'aiem';
const GATEWAY_SA = 'aiem-ai-engine-manager-gateway';
const OPERATOR_SA = 'aiem-ai-engine-manager-operator';
/** The operator replica identity the local operator process takes, as POD_NAME would give it. */
const OPERATOR_POD = 'aiem-ai-engine-manager-operator-local';
const GIB = 1024 ** 3;
const INSTANCE = `app.kubernetes.io/instance=${RELEASE}`;

const processes: LoggedProcess[] = [];
/** The gateway container of the lifecycle test, kept running for the SIGTERM test. */
let running: { gateway: ContainerProcess; base: string } | undefined;
const scratch = mkdtempSync(join(tmpdir(), 'aiem-chart-install-'));
let provider: IdentityProvider | undefined;
// Declared before the cluster's hook, so that the processes stop while the cluster still runs.
afterAll(async () => {
  await stopAll(processes);
  await provider?.stop();
  rmSync(scratch, { recursive: true, force: true });
});
// metrics-server registers metrics.k8s.io, whose PodMetrics the gateway may read (kubectl auth can-i needs it served).
const cluster = useCluster({ resizeDelayMs: 500, metrics: true });

const kubectl = (args: readonly string[]): Promise<string> => cluster().kubectl(args);
const identity = (): IdentityProvider => {
  if (provider === undefined) throw new Error('The identity provider is not running (did beforeAll fail?)');
  return provider;
};

/** The values of the release: the test's identity provider; everything else the chart's defaults. */
const releaseValues = (): object => oidcValues(identity());

beforeAll(async () => {
  provider = await startIdentityProvider({ accounts: [{ id: 'admin', name: 'Ada Admin', roles: ['admin'] }] });
  await helm(
    [
      'install',
      RELEASE,
      CHART,
      '--namespace',
      NAMESPACE,
      '--create-namespace',
      '-f',
      valuesFile(releaseValues()),
      '--wait',
      '--timeout',
      '3m',
    ],
    { kubeconfig: cluster().kubeconfigPath },
  );
}, 240_000);

test('helm install creates the nine CRDs of crds/, Established, labelled with the release and kept on uninstall', async () => {
  await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '-l', INSTANCE]);
  const list = JSON.parse(await kubectl(['get', 'crd', '-l', INSTANCE, '-o', 'json'])) as {
    items: KubernetesObject[];
  };
  const expected = readdirSync(join(ROOT, 'crds'))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => (load(readFileSync(join(ROOT, 'crds', f), 'utf8')) as KubernetesObject).metadata?.name)
    .sort();
  expect(list.items.map((crd) => crd.metadata?.name).sort()).toEqual(expected);
  for (const crd of list.items)
    expect(crd.metadata?.annotations).toMatchObject({ 'helm.sh/resource-policy': 'keep' });
});

test('the Deployments become Available, their pods Running and Ready on the simulated nodes', async () => {
  await kubectl(['wait', '--for=condition=Available', '--timeout=60s', 'deployment', '-l', INSTANCE, '-n', NAMESPACE]);
  const nodes = JSON.parse(await kubectl(['get', 'nodes', '-o', 'json'])) as { items: KubernetesObject[] };
  const simulated = new Set(
    nodes.items.filter((n) => n.metadata?.annotations?.[KWOK_NODE_ANNOTATION] !== undefined).map((n) => n.metadata?.name),
  );
  const pods = (JSON.parse(await kubectl(['get', 'pods', '-l', INSTANCE, '-n', NAMESPACE, '-o', 'json'])) as { items: V1Pod[] })
    .items;
  const summary = pods
    .map((pod) => ({
      component: pod.metadata?.labels?.['app.kubernetes.io/component'],
      serviceAccount: pod.spec?.serviceAccountName,
      phase: pod.status?.phase,
      ready: pod.status?.conditions?.find((c) => c.type === 'Ready')?.status,
      simulatedNode: simulated.has(pod.spec?.nodeName),
    }))
    .sort((a, b) => String(a.component).localeCompare(String(b.component)));
  const running = { phase: 'Running', ready: 'True', simulatedNode: true };
  expect(summary).toEqual([
    { component: 'gateway', serviceAccount: GATEWAY_SA, ...running },
    { component: 'gateway', serviceAccount: GATEWAY_SA, ...running },
    { component: 'operator', serviceAccount: OPERATOR_SA, ...running },
    { component: 'operator', serviceAccount: OPERATOR_SA, ...running },
  ]);
});

/** `kubectl auth can-i` as a ServiceAccount of the release: true for yes, false for no. */
async function canI(serviceAccount: string, args: readonly string[]): Promise<boolean> {
  const kubectlBin = join(cluster().binaries.kubernetes, 'kubectl');
  const run = promisify(execFile)(kubectlBin, [
    '--kubeconfig',
    cluster().kubeconfigPath,
    'auth',
    'can-i',
    ...args,
    `--as=system:serviceaccount:${NAMESPACE}:${serviceAccount}`,
  ]);
  try {
    return (await run).stdout.trim() === 'yes';
  } catch (error: unknown) {
    const out = typeof error === 'object' && error !== null && 'stdout' in error ? String(error.stdout).trim() : '';
    if (out === 'no' || out.startsWith('no')) return false;
    throw error;
  }
}

/** `kubectl auth can-i` arguments for one permission in the release namespace. */
function canIArgs(p: Permission): string[] {
  const [plural = '', subresource] = p.resource.split('/');
  const resource = p.group === '' ? plural : `${plural}.${p.group}`;
  return [
    p.verb,
    p.name === undefined ? resource : `${resource}/${p.name}`,
    ...(subresource === undefined ? [] : [`--subresource=${subresource}`]),
    '-n',
    NAMESPACE,
  ];
}

/** Every namespaced permission `kubectl auth can-i --list` shows, beyond what every user has. */
async function listed(serviceAccount: string): Promise<string[]> {
  const kubectlBin = join(cluster().binaries.kubernetes, 'kubectl');
  const { stdout } = await promisify(execFile)(kubectlBin, [
    '--kubeconfig',
    cluster().kubeconfigPath,
    'auth',
    'can-i',
    '--list',
    '-n',
    NAMESPACE,
    `--as=system:serviceaccount:${NAMESPACE}:${serviceAccount}`,
  ]);
  const keys: string[] = [];
  for (const line of stdout.split('\n')) {
    const row = /^(\S+)\s+\[(.*?)\]\s+\[(.*?)\]\s+\[(.*?)\]\s*$/.exec(line);
    if (row === null) continue;
    const [, resource = '', , names = '', verbs = ''] = row;
    // Every authenticated user may review its own access (system:basic-user).
    if (/^selfsubject\w*reviews\./.test(resource)) continue;
    const named = names.split(' ').filter(Boolean);
    const targets = named.length === 0 ? [resource] : named.map((name) => `${resource} name=${name}`);
    for (const verb of verbs.split(' ').filter(Boolean)) keys.push(...targets.map((t) => `${verb} ${t}`));
  }
  return [...new Set(keys)].sort();
}

/** What neither ServiceAccount may do, with what only one of them may not. */
const DENIED: Record<string, string[][]> = {
  both: [
    ['get', 'secrets'],
    ['list', 'secrets'],
    ['create', 'pods'],
    ['get', 'configmaps'],
    ['create', 'deployments.apps'],
    ['create', 'rolebindings.rbac.authorization.k8s.io'],
    ['delete', 'leases.coordination.k8s.io'],
  ],
  gateway: [
    ['patch', 'statefulsets.apps'],
    ['delete', 'pods'],
    ['create', 'pods', '--subresource=portforward'],
    ['list', 'leases.coordination.k8s.io'],
  ],
  operator: [
    ['get', 'leases.coordination.k8s.io/another-lease'],
    ['get', 'pods', '--subresource=log'],
    ['create', 'pods', '--subresource=exec'],
    ['create', 'daiengines.engine.h2o.ai'],
    ['delete', 'daiengines.engine.h2o.ai'],
    ['update', 'daiengineprofiles.engine.h2o.ai'],
  ],
  elsewhere: [
    ['list', 'daiengines.engine.h2o.ai', '-n', 'default'],
    ['list', 'nodes'],
    ['create', 'customresourcedefinitions.apiextensions.k8s.io'],
  ],
};

test.each([
  ['gateway', GATEWAY_SA, gatewayNeeds] as const,
  // Installed with the default values: queueing off, so nothing of Kueue's.
  ['operator', OPERATOR_SA, () => withoutQueueing(operatorNeeds())] as const,
])(
  'kubectl auth can-i: the %s ServiceAccount may do exactly what its code calls, in the release namespace only',
  async (component, serviceAccount, needs) => {
    const { permissions } = needs();
    const answers = await Promise.all(permissions.map(async (p) => [permissionKey(p), await canI(serviceAccount, canIArgs(p))]));
    expect(answers.filter(([, yes]) => yes !== true)).toEqual([]);
    expect(await listed(serviceAccount)).toEqual([...new Set(permissions.map(permissionKey))].sort());
    const denied = [...(DENIED['both'] ?? []), ...(DENIED[component] ?? [])].map((a) => [...a, '-n', NAMESPACE]);
    denied.push(...(DENIED['elsewhere'] ?? []));
    const allowed = [];
    for (const args of denied) if (await canI(serviceAccount, args)) allowed.push(args.join(' '));
    expect(allowed).toEqual([]);
  },
);

/** A kubeconfig that signs in as a ServiceAccount of the release, with a fresh token. */
async function serviceAccountKubeconfig(serviceAccount: string): Promise<string> {
  const token = (await kubectl(['create', 'token', serviceAccount, '-n', NAMESPACE, '--duration=1h'])).trim();
  const current = cluster().kubeConfig.getCurrentCluster();
  if (current === null) throw new Error('The admin kubeconfig names no cluster');
  const ca = current.caData ?? (current.caFile ? readFileSync(current.caFile).toString('base64') : undefined);
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'local', cluster: { server: current.server, 'certificate-authority-data': ca } }],
    users: [{ name: serviceAccount, user: { token } }],
    contexts: [{ name: serviceAccount, context: { cluster: 'local', user: serviceAccount, namespace: NAMESPACE } }],
    'current-context': serviceAccount,
  };
  const path = join(scratch, `${serviceAccount}.kubeconfig`);
  writeFileSync(path, dump(config), { mode: 0o600 });
  return path;
}

/** The pod template of a Deployment of the installed release. */
function podOf(manifest: Rendered[], component: string): PodSpec {
  const deployment = manifest.find((o) => o.kind === 'Deployment' && o.metadata?.name === `aiem-ai-engine-manager-${component}`);
  const spec = deployment?.['spec'] as { template: { spec: PodSpec } } | undefined;
  if (spec === undefined) throw new Error(`No ${component} Deployment in the release`);
  return spec.template.spec;
}

/** A file or folder of this test that the image's unprivileged user (65532) reads through a mount. */
function forContainer(path: string): string {
  chownSync(path, 65532, 65532);
  return path;
}

const restCall = (base: string, method: string, path: string, body?: unknown): Promise<RestResponse> =>
  adminRest(base, identity())(method, path, body);

test('the gateway and operator, configured as the chart configures them and signed in as its ServiceAccounts, run an engine from creation to deletion', async () => {
  const manifest = parseManifests(await helm(['get', 'manifest', RELEASE, '-n', NAMESPACE], { kubeconfig: cluster().kubeconfigPath }));
  // The policy ConfigMap's files, in a folder mounted where the chart mounts the ConfigMap.
  const configMap = manifest.find((o) => o.kind === 'ConfigMap') as unknown as { data: Record<string, string> };
  const policyDir = forContainer(mkdtempSync(join(scratch, 'policy-')));
  for (const [file, text] of Object.entries(configMap.data)) writeFileSync(join(policyDir, file), text);
  // The webhooks' certificate Secret, the same way.
  const secret = manifest.find((o) => o.kind === 'Secret') as unknown as { data: Record<string, string> };
  const tlsDir = forContainer(mkdtempSync(join(scratch, 'webhook-tls-')));
  for (const file of ['tls.crt', 'tls.key'])
    writeFileSync(join(tlsDir, file), Buffer.from(secret.data[file] ?? '', 'base64'), { mode: 0o600 });
  for (const file of readdirSync(tlsDir)) forContainer(join(tlsDir, file));

  // Both run in the product's image (podman, runc) as the Deployments' pods would: their command,
  // environment, mounts, user and read-only root, on the host's network to reach the cluster.
  const gateway = new ContainerProcess('gateway', podOf(manifest, 'gateway'), {
    podName: 'aiem-ai-engine-manager-gateway-local',
    volumes: { policy: policyDir, 'webhook-tls': tlsDir },
    kubeconfig: forContainer(await serviceAccountKubeconfig(GATEWAY_SA)),
    overrides: { AIEM_HOST: '127.0.0.1', AIEM_REST_PORT: '0', AIEM_GRPC_PORT: '0', AIEM_WEBHOOK_PORT: '0' },
  });
  processes.push(gateway);
  const operator = new ContainerProcess('operator', podOf(manifest, 'operator'), {
    podName: OPERATOR_POD,
    volumes: {},
    kubeconfig: forContainer(await serviceAccountKubeconfig(OPERATOR_SA)),
    overrides: { AIEM_OPERATOR_HOST: '127.0.0.1', AIEM_OPERATOR_PORT: '0' },
  });
  processes.push(operator);
  const started = await gateway.waitForLog('Started gateway');
  // pid 1: the process is the container's own.
  expect(started).toMatchObject({ namespace: NAMESPACE, version: VERSION, pid: 1 });
  const base = String(started['restUrl']);
  // The admission webhooks serve HTTPS with the chart's certificate.
  expect(String(started['webhookUrl'])).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  // Ready once its caches hold the cluster's resources and their watches run (the chart's
  // readiness probe asks the same): a watch refused while new kinds' storage starts (429)
  // makes a cache list again first.
  await gateway.waitForLog('caches in sync');
  await waitFor(async () => ((await (await fetch(`${base}/readyz`)).text()) === 'ok' ? true : undefined), {
    what: 'the gateway ready',
    timeoutMs: 30_000,
  });
  expect(await (await fetch(`${base}/version`)).json()).toEqual({ version: VERSION });
  await operator.waitForLog('leading; starting controllers');
  const lease = await cluster()
    .kubeConfig.makeApiClient(CoordinationV1Api)
    .readNamespacedLease({ name: LEASE, namespace: NAMESPACE });
  expect(lease.spec?.holderIdentity).toBe(OPERATOR_POD);

  const rest = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const { status, json } = await restCall(base, method, path, body);
    if (status !== 200) throw new Error(`${method} ${path}: ${status} ${JSON.stringify(json)}\n${gateway.log()}`);
    return json;
  };
  const numeric = (min: string, def: string, max: string | null = null): object => ({ min, default: def, max, cumulativeMax: null });
  await rest('POST', '/v1/workspaces/global/daiEngineProfiles?daiEngineProfileId=standard', {
    enabled: true,
    cpuConstraint: numeric('1', '1', '8'),
    gpuConstraint: numeric('0', '0', '4'),
    memoryBytesConstraint: numeric(String(GIB), String(GIB)),
    storageBytesConstraint: numeric(String(GIB), String(GIB), String(100 * GIB)),
    nodeCountConstraint: numeric('1', '1', '1'),
    maxIdleDurationConstraint: { min: '0s', default: '0s' },
    maxRunningDurationConstraint: { min: '0s', default: '0s' },
  });
  await rest('POST', '/v1/workspaces/global/daiEngineVersions?daiEngineVersionId=1.10.6', { image: 'dai:1.10.6' });
  const name = 'workspaces/team/daiEngines/e1';
  const path = `/v1/${encodeURIComponent(name)}`;
  // kubectl wait: it watches, and watches again when the apiserver ends a watch.
  const until = async (what: string, args: readonly string[]): Promise<void> => {
    try {
      await kubectl(['wait', '--namespace', NAMESPACE, '--timeout=60s', ...args]);
    } catch (error: unknown) {
      throw new Error(`${what}: ${String(error)}\n${gateway.log()}\n${operator.log()}`, { cause: error });
    }
  };
  const engine = 'daiengines.engine.h2o.ai/team.e1';
  const state = (wanted: string): string[] => [engine, `--for=jsonpath={.status.state}=${wanted}`];

  // Running: the operator applied a StatefulSet, its Service and ConfigMap, and watched the pod.
  await rest('POST', '/v1/workspaces/team/daiEngines?daiEngineId=e1', {
    profile: 'workspaces/global/daiEngineProfiles/standard',
    daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6',
  });
  await until(`${name} running`, state('STATE_RUNNING'));
  // Isolated as the chart configures it: its pod without a token, as the engine ServiceAccount,
  // behind a NetworkPolicy that admits the peers the chart rendered to its port.
  const [policy] = (
    JSON.parse(await kubectl(['get', 'networkpolicies', '-n', NAMESPACE, '-l', 'engine.h2o.ai/engine-kind', '-o', 'json'])) as {
      items: { spec: { ingress: { from: unknown[]; ports?: unknown[] }[] } }[];
    }
  ).items;
  const operatorEnv = podOf(manifest, 'operator').containers[0]?.env ?? [];
  const renderedPeers = JSON.parse(operatorEnv.find((e) => e.name === 'AIEM_ENGINE_NETWORK_PEERS')?.value ?? '[]') as unknown[];
  expect(policy?.spec.ingress[1]).toEqual({ from: renderedPeers, ports: [{ port: 12345, protocol: 'TCP' }] });
  const [enginePod] = (
    JSON.parse(await kubectl(['get', 'pods', '-n', NAMESPACE, '-l', 'engine.h2o.ai/engine-kind', '-o', 'json'])) as {
      items: { spec: { serviceAccountName: string; automountServiceAccountToken: boolean } }[];
    }
  ).items;
  expect(enginePod?.spec).toMatchObject({ serviceAccountName: 'aiem-ai-engine-manager-engine', automountServiceAccountToken: false });
  // Logs: the gateway lists the engine's pods and reads their (simulated) container logs.
  const download = await rest('POST', `${path}:downloadLogs`, {});
  const logs = Buffer.from((download['logs'] as { data?: string } | undefined)?.data ?? '', 'base64').toString();
  expect(logs).toContain(DEFAULT_LOG_LINES[0]);
  expect(logs).not.toMatch(/forbidden/i);
  // Storage growth: the operator patches the data claim.
  await rest('POST', `${path}:resizeStorage`, { newStorageBytes: String(2 * GIB) });
  await until('the data claim grown to 2 GiB', [
    'persistentvolumeclaims',
    '--selector=engine.h2o.ai/engine-kind',
    // The operator writes plain bytes; the apiserver keeps a decimal quantity as it is.
    `--for=jsonpath={.spec.resources.requests.storage}=${2 * GIB}`,
  ]);
  // Paused: the StatefulSet scaled to zero by apply, the pod gone.
  await rest('POST', `${path}:pause`, {});
  await until(`${name} paused`, state('STATE_PAUSED'));
  // Deleted: the operator deletes the workloads and the claim, then drops its finalizer.
  await rest('DELETE', path);
  await until(`${name} deleted`, [engine, '--for=delete']);
  const left = JSON.parse(
    await kubectl(['get', 'statefulsets,services,configmaps,persistentvolumeclaims,networkpolicies', '-n', NAMESPACE, '-l', 'engine.h2o.ai/engine-kind', '-o', 'json']),
  ) as { items: unknown[] };
  expect(left.items).toEqual([]);
  // Nothing was refused on the way.
  expect([...gateway.lines, ...operator.lines].filter((line) => /forbidden/i.test(line))).toEqual([]);
  await operator.stop();
  running = { gateway, base };
}, 240_000);

test('a gateway told to stop (SIGTERM, as on a rollout) answers every call sent to it, turns unready first, then exits 0', async () => {
  if (running === undefined) throw new Error('The gateway of the previous test is not running');
  const { gateway, base } = running;
  const headers = { Authorization: `Bearer ${await identity().accessToken('admin')}` };
  const path = '/v1/workspaces/global/daiEngineProfiles';
  // Callers keep calling until the gateway reports not ready, as the Service's endpoints would
  // drop it then; a poller reads /readyz as the kubelet's readiness probe does.
  let unready = false;
  const outcomes: { status: number | string; at: number }[] = [];
  const caller = async (): Promise<void> => {
    while (!unready) {
      const status = await fetch(`${base}${path}`, { headers }).then(
        async (r) => {
          await r.arrayBuffer();
          return r.status;
        },
        (error: unknown) => String(error),
      );
      // When it was answered: callers are mid-call when the signal comes, as on a rollout.
      outcomes.push({ status, at: Date.now() });
    }
  };
  const readiness = waitFor(
    async () => {
      const status = await fetch(`${base}/readyz`).then((r) => r.status, () => 0);
      return status === 200 ? undefined : status;
    },
    { what: 'the gateway reporting not ready', intervalMs: 100, timeoutMs: 90_000 },
  ).finally(() => {
    unready = true;
  });
  const calls = Promise.all(Array.from({ length: 6 }, caller));
  await waitFor(() => Promise.resolve(outcomes.length >= 20 ? true : undefined), { what: '20 calls answered', timeoutMs: 30_000 });
  await gateway.signal('SIGTERM');
  // Not ready while still listening (a 503, not a refused connection).
  expect(await readiness).toBe(503);
  await calls;
  const code = await gateway.exit;
  expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
  // It went on serving once it began to stop (its own log's time: `podman kill` itself may take
  // longer than the gateway needs to turn unready), until callers saw it not ready.
  const stopping = gateway.lines.find((line) => line.includes('"msg":"Stopping gateway: not ready'));
  const stoppedAt = Number(/"time":(\d+)/.exec(stopping ?? '')?.[1]);
  expect(stoppedAt).toBeGreaterThan(0);
  expect(outcomes.filter((o) => o.at > stoppedAt).length).toBeGreaterThan(0);
  expect(code).toBe(0);
  const messages = gateway.lines.map((line) => /"msg":"([^"]*)"/.exec(line)?.[1]);
  expect(messages.slice(messages.indexOf('Stopping gateway: not ready, still serving while callers turn away'))).toEqual([
    'Stopping gateway: not ready, still serving while callers turn away',
    'Closing listeners; finishing calls in flight',
    'Stopped gateway',
  ]);
}, 120_000);

test('helm upgrade applies changed values: a third gateway replica becomes Available', async () => {
  await helm(
    [
      'upgrade',
      RELEASE,
      CHART,
      '--namespace',
      NAMESPACE,
      '-f',
      valuesFile({ ...releaseValues(), gateway: { replicas: 3 } }),
      '--wait',
      '--timeout',
      '3m',
    ],
    { kubeconfig: cluster().kubeconfigPath },
  );
  const deployment = JSON.parse(
    await kubectl(['get', 'deployment', GATEWAY_SA, '-n', NAMESPACE, '-o', 'json']),
  ) as { status: { availableReplicas?: number } };
  expect(deployment.status.availableReplicas).toBe(3);
});

test('helm uninstall removes the workloads, Services, RBAC, ServiceAccounts and policy, and keeps the CRDs', async () => {
  await helm(['uninstall', RELEASE, '--namespace', NAMESPACE, '--wait', '--timeout', '2m'], {
    kubeconfig: cluster().kubeconfigPath,
  });
  await kubectl(['wait', '--for=delete', 'pod', '-l', INSTANCE, '-n', NAMESPACE, '--timeout=60s']);
  const left = JSON.parse(
    await kubectl(['get', 'deployments,replicasets,pods,services,serviceaccounts,roles,rolebindings,configmaps,poddisruptionbudgets', '-l', INSTANCE, '-n', NAMESPACE, '-o', 'json']),
  ) as { items: unknown[] };
  expect(left.items).toEqual([]);
  const crds = JSON.parse(await kubectl(['get', 'crd', '-l', INSTANCE, '-o', 'json'])) as { items: unknown[] };
  expect(crds.items).toHaveLength(14);
});
