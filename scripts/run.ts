/**
 * `make run`: the whole product on a local control plane with simulated nodes, in the
 * foreground. Connection details go to .run/stack.json for scripts and people; Ctrl+C stops
 * everything.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import { authFromEnvironment } from '../gateway/src/auth/config.ts';
import { startWebhook } from '../gateway/src/admission/webhook.ts';
import { startGateway } from '../gateway/src/gateway.ts';
import { secretLicense } from '../gateway/src/license/license-source.ts';
import { apiHandlers } from '../gateway/src/services/api.ts';
import { PodLogs } from '../gateway/src/store/pod-logs.ts';
import { ResourceStore } from '../gateway/src/store/store.ts';
import { AdmittingStore } from '../gateway/src/store/admitting-store.ts';
import { startCluster } from '../test/cluster/cluster.ts';
import { DEFAULT_NODE_POOLS } from '../test/cluster/nodes.ts';
import { createCatalogue, realCatalogue, REAL_CATALOGUE_ID } from '../test/cluster/real-catalogue.ts';
import { realNodeUnavailable } from '../test/cluster/real-node.ts';
import { startOperator } from '../operator/src/operator.ts';
import { dump } from 'js-yaml';
import { pino } from 'pino';
import { readQueueingConfig } from '../operator/src/queueing/config.ts';
import { superviseShutdown } from '../test/cluster/shutdown.ts';
import { applyConfigurations, webhookCertificate, webhookConfigurations } from '../test/cluster/webhooks.ts';
import { loginFromEnvironment } from '../gateway/src/access/login-config.ts';
import { startLocalIdentity, type LocalUser } from '../test/identity/local-identity.ts';
import { serveStaticSite } from './static-site.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// AIEM_RUN_DIR moves the details file, e.g. for a test beside a developer's own `make run`.
const RUN = process.env['AIEM_RUN_DIR'] ?? join(ROOT, '.run');
const STACK = join(RUN, 'stack.json');

/** What scripts need to reach the running stack. */
export interface StackInfo {
  kubeconfig: string;
  /** The folder of the cluster's own kubectl, of the same release as the server. */
  kubectlDir: string;
  apiserver: string;
  logs: string;
  /** The REST API base URL (the `aiem_url` of API clients). */
  restUrl: string;
  /** The gRPC address, host:port. */
  grpcAddress: string;
  /** The documentation site, built by `make docs` and served from docs-site/build. */
  docsUrl: string;
  /** The embedded OpenID provider and its users' tokens; absent with AIEM_OIDC_ISSUER_URL. */
  identity?: { issuerUrl: string; clientId: string; audience: string; users: Record<string, LocalUser> };
}

/** A whole number from the environment variable `name`. */
function count(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number`);
  return value;
}

/** Listening addresses, from AIEM_HOST, AIEM_REST_PORT and AIEM_GRPC_PORT. */
function port(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 0 || value > 65535)
    throw new Error(`${name} must be a port number`);
  return value;
}

// Ctrl+C stops the product first, then the cluster under it: each step is added once started,
// and steps stop newest first.
// The real node takes its containers, mounts and network away as it stops: more than the default.
const shutdown = superviseShutdown({ deadlineMs: 30_000 });
/** The local GPU class (the simulated GPU nodes) and each workspace's own quota of it. */
const LOCAL_GPU_CLASS = 'simulated-gpu';
const LOCAL_WORKSPACE_GPUS = 4;
// A real node (kubelet + containerd) beside the simulated ones, unless AIEM_REAL_NODE=0 or this
// machine cannot run one (it needs Linux and root).
const noRealNode = process.env['AIEM_REAL_NODE'] === '0' ? 'AIEM_REAL_NODE=0' : realNodeUnavailable();
if (noRealNode !== undefined)
  console.error(`No real node (${noRealNode}): every engine runs on simulated nodes.`);
// Where the API keeps its resources.
const namespace = process.env['AIEM_NAMESPACE'] ?? 'ai-engine-manager';
// GPU queues (Kueue), unless AIEM_QUEUEING=0: engines asking for GPUs wait in their workspace's
// queue. The queues are described by AIEM_QUEUEING_CONFIG, or by the local default below.
const queueing = process.env['AIEM_QUEUEING'] !== '0';
const cluster = await startCluster({
  realNode: noRealNode === undefined,
  ...(queueing ? { kueue: { namespaces: [namespace] } } : {}),
  log: (message) => {
    console.error(message);
  },
  // AIEM_CPU_NODES: more simulated 16-CPU nodes, for hundreds of running engines.
  nodes: { ...DEFAULT_NODE_POOLS, cpuNodes: count('AIEM_CPU_NODES', DEFAULT_NODE_POOLS.cpuNodes) },
  // metrics-server, so that sandbox engines' metrics are real here too.
  metrics: true,
  // The product's resource kinds (`kubectl get aiem`), served before the controllers start: the
  // garbage collector then knows them at once, and what an engine or a port owns goes with it
  // (kinds added later are found only at its next discovery, up to 30 s on).
  crds: true,
});
shutdown.add({
  name: 'the cluster',
  stop: () => cluster.stop(),
  kill: () => {
    cluster.kill();
  },
});
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
// Kueue's start made it already: it manages the pods of this namespace.
if (!queueing)
  await cluster.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: namespace } } });
const store = new ResourceStore(cluster.kubeConfig, namespace);
const host = process.env['AIEM_HOST'] ?? '127.0.0.1';
const restPort = port('AIEM_REST_PORT', 8080);
// Where users reach engines (notebook access URIs); the gateway's own address locally.
const publicUrl = process.env['AIEM_PUBLIC_URL'] ?? `http://${host}:${restPort}`;
// Tokens of the embedded OpenID provider, unless AIEM_OIDC_ISSUER_URL names another issuer.
const identity =
  process.env['AIEM_OIDC_ISSUER_URL'] === undefined
    ? await startLocalIdentity({
        host,
        port: port('AIEM_IDENTITY_PORT', 8090),
        // A working day, so that copied access tokens outlast a session of trying things.
        accessTokenTtlSeconds: 12 * 60 * 60,
      })
    : undefined;
if (identity) shutdown.add({ name: 'the OpenID provider', stop: () => identity.provider.stop() });
identity?.provider.allowRedirect(`${publicUrl}/auth/callback`);
const auth = authFromEnvironment({ ...process.env, ...identity?.environment });
shutdown.add({
  name: 'the policy watch',
  stop: () => {
    auth.close();
    return Promise.resolve();
  },
});
await store.startCaches();
shutdown.add({ name: 'the gateway caches', stop: () => store.stopCaches() });
const handlers = apiHandlers({
  // The handlers also answer the admission reviews of kubectl writes.
  store: new AdmittingStore(store),
  authorizer: auth.authorizer,
  publicUrl,
  // Engine logs: the pod log API, which kwok serves from the simulated nodes.
  podLogs: new PodLogs(cluster.kubeConfig, namespace),
  // The Driverless AI license, from the Secret `dai-license` once one is created.
  daiLicense: secretLicense(cluster.kubeConfig, namespace, 'dai-license'),
  processSweepEveryMs: 30_000,
  ...(process.env['AIEM_SANDBOX_PORTS_URL']
    ? { publicPorts: { url: process.env['AIEM_SANDBOX_PORTS_URL'] } }
    : {}),
});
const gateway = await startGateway({
  host,
  restPort,
  grpcPort: port('AIEM_GRPC_PORT', 9090),
  handlers,
  authenticate: auth.authenticate,
  version,
  ready: () => store.ready,
  // Engines' addresses (apiUrl, loginUrl, :access) served through the access proxy; browsers
  // sign in at the embedded provider's login page (or AIEM_BROWSER_CLIENT_ID of another issuer).
  access: {
    store,
    authorizer: auth.authorizer,
    publicUrl,
    forwardAuthorization: ['daiEngines'],
    login: loginFromEnvironment({ ...process.env, ...identity?.environment }, publicUrl),
  },
});
shutdown.add({ name: 'the gateway', stop: () => gateway.stop() });
// The admission webhooks, registered from the chart as a release would: kubectl writes of the
// product's kinds get the API's checks. The gateway and the operator act as the cluster admin
// here (the chart's ServiceAccounts on a cluster), so the admin's own writes are not reviewed:
// people declare engines as themselves with `kubectl --as=<user>`.
const certificate = await webhookCertificate(cluster);
const webhook = await startWebhook({
  host: '127.0.0.1',
  port: port('AIEM_WEBHOOK_PORT', 8443),
  ...certificate,
  store,
  handlers,
  namespace,
  mapping: { usernamePrefix: '', groupsPrefix: '' },
});
shutdown.add({ name: 'the admission webhooks', stop: () => webhook.stop() });
await applyConfigurations(
  cluster,
  await webhookConfigurations(cluster, {
    namespace,
    url: webhook.url,
    caBundle: certificate.caBundle,
    exemptUsers: ['cluster-admin'],
  }),
);
// The documentation site beside the API, at its published base path (AIEM_DOCS_PORT).
const docs = await serveStaticSite({
  root: join(ROOT, 'docs-site', 'build'),
  mount: '/ai-engine-manager/',
  host,
  port: port('AIEM_DOCS_PORT', 3000),
});
shutdown.add({ name: 'the docs site', stop: () => docs.close() });
// The operator turns engines into workloads on the simulated nodes; one replica needs no lease.
const operator = await startOperator({
  kubeConfig: cluster.kubeConfig,
  namespace,
  settings: { publicUrl },
  log: pino({ level: process.env['AIEM_LOG_LEVEL'] ?? 'info', base: { component: 'operator' } }),
  ...(queueing ? { queueing: readQueueingConfig(queueingConfigFile()) } : {}),
});
shutdown.add({ name: 'the operator', stop: () => operator.stop() });
// Profiles, versions, images and a template that run engines for real on the real node, created
// as the local administrator (with another issuer there is no token to create them with).
const adminToken = identity?.users['admin']?.accessToken;
if (cluster.realNode !== undefined && adminToken !== undefined) {
  await createCatalogue(gateway.restUrl, adminToken, realCatalogue(cluster.realNode.images));
}
mkdirSync(join(RUN, 'stack'), { recursive: true });
const kubeconfig = join(RUN, 'stack', 'kubeconfig');
copyFileSync(cluster.kubeconfigPath, kubeconfig);
const info: StackInfo = {
  kubeconfig,
  kubectlDir: cluster.binaries.kubernetes,
  apiserver: cluster.server,
  logs: cluster.runDir,
  restUrl: gateway.restUrl,
  grpcAddress: gateway.grpcAddress,
  docsUrl: docs.url,
  ...(identity
    ? {
        identity: {
          issuerUrl: identity.provider.issuer,
          clientId: identity.provider.clientId,
          audience: identity.provider.audience,
          users: identity.users,
        },
      }
    : {}),
};
writeFileSync(STACK, `${JSON.stringify(info, null, 2)}\n`);
const removeDetails = (): void => {
  rmSync(STACK, { force: true });
  rmSync(join(RUN, 'stack'), { recursive: true, force: true });
};
shutdown.add({
  name: 'the details file',
  stop: () => {
    removeDetails();
    return Promise.resolve();
  },
  kill: removeDetails,
});
console.log(
  [
    '',
    'AI Engine Manager is running locally.',
    `  REST API         ${info.restUrl}  (GET ${info.restUrl}/version)`,
    `  gRPC API         ${info.grpcAddress}`,
    `  Docs site        ${info.docsUrl}`,
    `  Kubernetes API   ${info.apiserver}`,
    `  kubeconfig       ${info.kubeconfig}`,
    `  component logs   ${info.logs}`,
    `  details          ${STACK}`,
    ...identityLines(info),
    '',
    ...realEngineLines(cluster.realNode !== undefined && adminToken !== undefined),
    ...queueingLines(),
    '',
    `Try: KUBECONFIG=${info.kubeconfig} ${join(info.kubectlDir, 'kubectl')} get nodes,crds`,
    'Declare resources with kubectl as a user (system:masters passes Kubernetes RBAC; the policy decides):',
    `  kubectl --as=admin --as-group=admin --as-group=system:masters apply -n ${namespace} -f docs-site/examples/kubectl/catalogue.yaml`,
    `  kubectl --as=alice --as-group=system:masters apply -n ${namespace} -f docs-site/examples/kubectl/dai-engine.yaml`,
    'Press Ctrl+C to stop everything.',
    '',
  ].join('\n'),
);
/**
 * The queueing configuration file: AIEM_QUEUEING_CONFIG, or a local default written to the run
 * folder — the simulated GPU nodes as one GPU class, each workspace's own quota 4 GPUs, lent to
 * the other workspaces while unused.
 */
function queueingConfigFile(): string {
  const given = process.env['AIEM_QUEUEING_CONFIG'];
  if (given !== undefined) return given;
  const file = join(cluster.runDir, 'queueing.yaml');
  writeFileSync(
    file,
    dump({
      engines: 'gpu',
      gpuClasses: [{ name: LOCAL_GPU_CLASS, nodeLabels: { 'nvidia.com/gpu.product': 'Simulated-GPU' } }],
      workspaceQuota: { [LOCAL_GPU_CLASS]: LOCAL_WORKSPACE_GPUS },
      cohort: 'engines',
    }),
  );
  return file;
}

/** What the local stack queues, for its banner. */
function queueingLines(): string[] {
  if (!queueing) return ['GPU queues are off (AIEM_QUEUEING=0).'];
  const file = process.env['AIEM_QUEUEING_CONFIG'];
  return [
    file === undefined
      ? `GPU queues (Kueue): engines asking for GPUs wait in their workspace's queue; each workspace has ${LOCAL_WORKSPACE_GPUS} of the simulated GPUs (class "${LOCAL_GPU_CLASS}") and borrows the others' unused ones.`
      : `GPU queues (Kueue), as ${file} describes them.`,
  ];
}

/** Which engines run for real, and which are simulated. */
function realEngineLines(real: boolean): string[] {
  if (!real)
    return ['Every engine runs on simulated (KWOK) nodes: its pods are marked Running, no container starts.'];
  const id = REAL_CATALOGUE_ID;
  return [
    `Engines that run for real (real containers on the node "${cluster.realNode?.name ?? ''}", workspace "global"):`,
    `  H2O engines        profile workspaces/global/h2oEngineProfiles/${id}, version alias "${id}"`,
    `  notebook engines   profile workspaces/global/notebookEngineProfiles/${id}, image workspaces/global/notebookEngineImages/${id}`,
    `  sandbox engines    image workspaces/global/sandboxEngineImages/${id}, template workspaces/global/sandboxEngineTemplates/${id}`,
    'Every other engine (Driverless AI: its image is proprietary) runs on the simulated nodes.',
  ];
}

/** How to call the API as each local user, when the embedded provider runs. */
function identityLines({ identity, restUrl }: StackInfo): string[] {
  if (identity === undefined) return [];
  const users = Object.entries(identity.users).map(
    ([id, user]) =>
      `  ${id.padEnd(6)} ${user.subject} (roles: ${user.roles.join(', ')})\n` +
      `         refresh token ${user.refreshToken}\n` +
      `         access token  ${user.accessToken}`,
  );
  return [
    `  OpenID issuer    ${identity.issuerUrl}  (client ${identity.clientId})`,
    '',
    'Users (tokens also in the details file):',
    ...users,
    '',
    `Try: curl -H "Authorization: Bearer <access token>" ${restUrl}/v1/workspaces/global/daiEngineVersions`,
    `Python: h2o_engine_manager.login_custom(endpoint="${restUrl}", refresh_token=<refresh token>, issuer_url="${identity.issuerUrl}", client_id="${identity.clientId}")`,
    `Browser: open an engine's address (${restUrl}/workspaces/…/notebookEngines/…/) and pick a user on the sign-in page.`,
  ];
}
