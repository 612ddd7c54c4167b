/**
 * Kueue on the local control plane, run as the local cluster runs the product's own webhooks:
 * its manager out of cluster with a kubeconfig, its webhook server on loopback with a
 * certificate of the cluster's CA, and its webhook configurations pointing there by URL.
 *
 * Kueue's pod webhook fails closed (no pod of a managed namespace can be created while Kueue is
 * down), so its job-framework webhooks and the namespaces it manages are scoped to the
 * namespaces given: the engines' namespace, never kube-system or the simulated infrastructure.
 * Of the frameworks, only the ones engines are made of are on: pods and StatefulSets (Kueue
 * admits a StatefulSet's pods as one group).
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  KubernetesObjectApi,
  type KubeConfig,
  type KubernetesObject,
  type V1Pod,
} from '@kubernetes/client-node';
import { dump, loadAll } from 'js-yaml';
import { ensureKueueBinary, type Binaries } from './binaries.ts';
import { issueLoopbackCertificate } from './pki.ts';
import { freePort } from './ports.ts';
import { startProcess, type ManagedProcess } from './process.ts';
import { GiveUp, waitFor } from './wait.ts';

/** Kueue's own namespace (its configuration names it; it holds nothing of ours). */
export const KUEUE_NAMESPACE = 'kueue-system';

/** The label that puts a pod group in a LocalQueue. */
export const QUEUE_LABEL = 'kueue.x-k8s.io/queue-name';

/** The job frameworks Kueue manages here: engines are pods of StatefulSets. */
const FRAMEWORKS = ['pod', 'statefulset'];

/** A webhook of Kueue's manifests, as far as it is rewritten here. */
interface Webhook {
  name: string;
  clientConfig: { service?: { path?: string }; url?: string; caBundle?: string };
  namespaceSelector?: unknown;
}

interface WebhookConfiguration extends KubernetesObject {
  webhooks: Webhook[];
}

/** The webhook paths Kueue serves with `FRAMEWORKS` on: its own kinds, pods and StatefulSets. */
function served(path: string): 'kueue' | 'framework' | undefined {
  if (path.includes('-kueue-x-k8s-io-')) return 'kueue';
  if (path.endsWith('--v1-pod') || path.endsWith('-apps-v1-statefulset')) return 'framework';
  return undefined;
}

const inNamespaces = (namespaces: readonly string[]): object => ({
  matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [...namespaces] }],
});

/**
 * Kueue's webhook configurations (its `manifests.yaml`), calling `url` trusted by `caBundle`:
 * webhooks of frameworks that are off are dropped (Kueue does not serve them, and a call to a
 * path it does not serve would fail every such write), and the frameworks' webhooks only see
 * `namespaces`. Pure, for its test.
 */
export function kueueWebhookConfigurations(
  manifests: string,
  options: { url: string; caBundle: string; namespaces: readonly string[] },
): WebhookConfiguration[] {
  return (loadAll(manifests) as (WebhookConfiguration | null)[])
    .filter((doc): doc is WebhookConfiguration => doc !== null)
    .map((configuration) => ({
      ...configuration,
      metadata: { name: `kueue-${configuration.metadata?.name ?? ''}` },
      webhooks: configuration.webhooks.flatMap((webhook) => {
        const path = webhook.clientConfig.service?.path ?? '';
        const scope = served(path);
        if (scope === undefined) return [];
        return [
          {
            ...webhook,
            clientConfig: { url: `${options.url}${path}`, caBundle: options.caBundle },
            ...(scope === 'framework' ? { namespaceSelector: inNamespaces(options.namespaces) } : {}),
          },
        ];
      }),
    }))
    .filter((configuration) => configuration.webhooks.length > 0);
}

/** Kueue's configuration file for a manager out of cluster, on loopback ports. */
export function kueueConfiguration(options: {
  namespaces: readonly string[];
  webhookPort: number;
  healthPort: number;
  visibilityPort: number;
  certDir: string;
}): string {
  return dump({
    apiVersion: 'config.kueue.x-k8s.io/v1beta2',
    kind: 'Configuration',
    namespace: KUEUE_NAMESPACE,
    // Only what carries a queue label waits in a queue; everything else runs as it would.
    manageJobsWithoutQueueName: false,
    managedJobsNamespaceSelector: inNamespaces(options.namespaces),
    health: { healthProbeBindAddress: `127.0.0.1:${options.healthPort}` },
    // Its metrics are not read here; "0" turns the server off.
    metrics: { bindAddress: '0' },
    webhook: { host: '127.0.0.1', port: options.webhookPort, certDir: options.certDir },
    // One manager per cluster: nothing to elect.
    leaderElection: { leaderElect: false },
    // Its certificates come from the cluster's CA, as the product's webhooks' do.
    internalCertManagement: { enable: false },
    integrations: { frameworks: FRAMEWORKS },
    // As Kueue's release manifests configure its manager (its built-in defaults, 20 requests per
    // second and one worker per kind, hold a queue of hundreds to about one admission a second).
    controller: {
      groupKindConcurrency: {
        Pod: 5,
        'Workload.kueue.x-k8s.io': 5,
        'LocalQueue.kueue.x-k8s.io': 1,
        'ClusterQueue.kueue.x-k8s.io': 1,
        'ResourceFlavor.kueue.x-k8s.io': 1,
      },
    },
    clientConnection: { qps: 50, burst: 100 },
    // Its visibility API (pending workloads in order: a queued engine's position), aggregated
    // by the apiserver as metrics-server's is.
    visibilityServer: { bindAddress: '127.0.0.1', bindPort: options.visibilityPort },
  });
}

/**
 * Starts Kueue's manager and registers its webhooks; resolves once the
 * manager is ready. The process is pushed to `processes` (stopped with the others).
 */
export async function startKueue(context: {
  /** The folder of `ensureKueueBinary()`. */
  kueue: string;
  runDir: string;
  processes: ManagedProcess[];
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  /** The namespaces whose pods and StatefulSets Kueue manages. */
  namespaces: readonly string[];
}): Promise<ManagedProcess> {
  const { kueue, runDir, kubeConfig } = context;
  const dir = join(runDir, 'kueue');
  const certDir = join(dir, 'certs');
  await mkdir(certDir, { recursive: true });
  const [ports, certificate, caBundle] = await Promise.all([
    Promise.all([freePort(), freePort(), freePort()]),
    issueLoopbackCertificate(runDir, 'kueue'),
    readFile(join(runDir, 'ca.crt')).then((ca) => ca.toString('base64')),
  ]);
  const [webhookPort, healthPort, visibilityPort] = ports;
  await Promise.all([
    copyFile(certificate.cert, join(certDir, 'tls.crt')),
    copyFile(certificate.key, join(certDir, 'tls.key')),
  ]);
  const configPath = join(dir, 'config.yaml');
  await writeFile(
    configPath,
    kueueConfiguration({ namespaces: context.namespaces, webhookPort, healthPort, visibilityPort, certDir }),
  );
  const objects = KubernetesObjectApi.makeApiClient(kubeConfig);
  await objects
    .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: KUEUE_NAMESPACE } })
    .catch(ignoreConflict);
  const process = startProcess({
    name: 'kueue',
    command: join(kueue, 'kueue'),
    args: [`--config=${configPath}`, `--kubeconfig=${context.kubeconfigPath}`],
    logDir: runDir,
  });
  context.processes.push(process);
  await waitFor(
    async () => {
      if (!process.running()) throw new GiveUp('Kueue exited during start-up');
      const answer = await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined);
      return answer?.ok === true ? true : undefined;
    },
    { what: 'Kueue to be ready', timeoutMs: 60_000, intervalMs: 100, explain: () => process.tail() },
  );
  for (const body of visibilityRegistration(visibilityPort)) await objects.create(body);
  const manifests = await readFile(join(kueue, 'config', 'webhooks.yaml'), 'utf8');
  const url = `https://127.0.0.1:${webhookPort}`;
  for (const configuration of kueueWebhookConfigurations(manifests, {
    url,
    caBundle,
    namespaces: context.namespaces,
  }))
    await objects.create(configuration);
  await untilWebhooksApply(kubeConfig, context.namespaces);
  return process;
}

/** The scheduling gate Kueue's pod webhook puts on a queued pod until it is admitted. */
export const ADMISSION_GATE = 'kueue.x-k8s.io/admission';

/**
 * Resolves once the apiserver calls Kueue's webhooks: it learns of new webhook configurations
 * through its own watch, and a StatefulSet written before then would run ungated, past every
 * quota. Creates the managed namespaces (the pods must have somewhere to be) and asks, in a
 * dry run, for a queued pod in each until the answer carries Kueue's gate.
 */
async function untilWebhooksApply(kubeConfig: KubeConfig, namespaces: readonly string[]): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  for (const name of namespaces)
    await core.createNamespace({ body: { metadata: { name } } }).catch(ignoreConflict);
  const probe = (namespace: string): V1Pod => ({
    metadata: { generateName: 'kueue-probe-', namespace, labels: { [QUEUE_LABEL]: 'probe' } },
    spec: { containers: [{ name: 'probe', image: 'probe' }] },
  });
  await waitFor(
    async () => {
      for (const namespace of namespaces) {
        const pod = await core.createNamespacedPod({ namespace, body: probe(namespace), dryRun: 'All' });
        if (pod.spec?.schedulingGates?.some((gate) => gate.name === ADMISSION_GATE) !== true)
          return undefined;
      }
      return true;
    },
    { what: "the apiserver to call Kueue's webhooks", timeoutMs: 60_000, intervalMs: 100 },
  );
}

const run = promisify(execFile);

/**
 * When Kueue is asked for: builds it if missing and installs its CRDs (see
 * {@link installKueueCrds} for why this comes before the controller-manager). Returns what
 * starts its manager once the cluster runs; nothing when it is not asked for.
 */
export async function prepareKueue(
  asked: { namespaces: readonly string[] } | undefined,
  context: {
    binaries: Binaries;
    runDir: string;
    processes: ManagedProcess[];
    kubeconfigPath: string;
    kubeConfig: KubeConfig;
  },
): Promise<() => Promise<unknown>> {
  if (asked === undefined) return () => Promise.resolve();
  const kueue = await ensureKueueBinary();
  await installKueueCrds({ ...context, kueue, kubectl: join(context.binaries.kubernetes, 'kubectl') });
  return () => startKueue({ ...context, kueue, namespaces: asked.namespaces });
}

/** Where the apiserver reaches Kueue's visibility API: a Service naming loopback, and the APIService. */
function visibilityRegistration(port: number): KubernetesObject[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'visibility-server', namespace: KUEUE_NAMESPACE },
      spec: { type: 'ExternalName', externalName: '127.0.0.1' },
    } as KubernetesObject,
    ...['v1beta1', 'v1beta2'].map(
      (version) =>
        ({
          apiVersion: 'apiregistration.k8s.io/v1',
          kind: 'APIService',
          metadata: { name: `${version}.visibility.kueue.x-k8s.io` },
          spec: {
            group: 'visibility.kueue.x-k8s.io',
            version,
            groupPriorityMinimum: 100,
            versionPriority: 100,
            // Its certificate is self-signed, as in Kueue's own APIService.
            insecureSkipTLSVerify: true,
            service: { name: 'visibility-server', namespace: KUEUE_NAMESPACE, port },
          },
        }) as KubernetesObject,
    ),
  ];
}

function ignoreConflict(error: unknown): void {
  if ((error as { code?: number }).code !== 409) throw error;
}

/**
 * Creates Kueue's CRDs (from the folder of `ensureKueueBinary()`) and resolves once the
 * apiserver serves every one. kubectl sends them as written: the client library's typed models
 * would drop the schema's `x-kubernetes-*` extensions, without which the apiserver refuses them.
 * Before the controller-manager starts, as on a cluster where Kueue is installed: its garbage
 * collector learns of new kinds only at its next discovery (every 30 s), and until then a
 * Workload whose pods are gone would hold its quota.
 */
export async function installKueueCrds(context: {
  kueue: string;
  kubectl: string;
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
}): Promise<void> {
  const { kubectl, kubeconfigPath, kubeConfig } = context;
  const dir = join(context.kueue, 'config', 'crds');
  const files = (await readdir(dir)).filter((file) => file.endsWith('.yaml') && file.startsWith('kueue.'));
  await run(kubectl, [
    '--kubeconfig',
    kubeconfigPath,
    'apply',
    '--server-side',
    ...files.flatMap((file) => ['-f', join(dir, file)]),
  ]);
  const names = files.map((file) => file.replace(/^kueue\.x-k8s\.io_(.*)\.yaml$/, '$1.kueue.x-k8s.io'));
  const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
  await waitFor(
    async () => {
      for (const name of names) {
        const crd = await extensions.readCustomResourceDefinition({ name });
        const established = crd.status?.conditions?.some(
          (c) => c.type === 'Established' && c.status === 'True',
        );
        if (established !== true) return undefined;
      }
      return true;
    },
    { what: "Kueue's CRDs to be served", timeoutMs: 60_000, intervalMs: 100 },
  );
}
