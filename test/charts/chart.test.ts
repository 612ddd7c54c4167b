/**
 * The Helm chart rendered by the real helm binary: lint, what each set of values renders (read
 * back as objects), values the schema refuses, and that the chart's generated files and RBAC
 * follow the code. install.test.ts installs it on the local control plane.
 */
import { X509Certificate } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import type { V1Ingress, V1LabelSelector, V1NetworkPolicyPeer } from '@kubernetes/client-node';
import { load } from 'js-yaml';
import { networkPeers } from '../../operator/src/desired/network-peers.ts';
import { VERSION } from '../helpers/image.ts';
import { DEFAULT_CLAIM_NAMES } from '../../gateway/src/auth/claims.ts';
import { DEFAULT_ALGORITHMS } from '../../gateway/src/auth/oidc.ts';
import { DEFAULT_POLICY_FILE } from '../../gateway/src/auth/policy-authorizer.ts';
import { parsePolicy } from '../../gateway/src/auth/policy.ts';
import { chartFiles, GENERATED_DIRS } from '../../scripts/chart-files.ts';
import {
  CHART,
  find,
  helm,
  HelmError,
  MINIMAL_VALUES,
  render,
  ROOT,
  valuesFile,
  type Rendered,
} from './helm.ts';
import {
  ALL_KINDS,
  gatewayNeeds,
  granted,
  operatorClusterNeeds,
  operatorNeeds,
  permissionKey,
  sources,
  uninstallNeeds,
  withoutQueueing,
  type Permission,
} from './permissions.ts';

jest.setTimeout(60_000);

/** The one webhook of a rendered webhook configuration. */
interface Webhook {
  failurePolicy: string;
  clientConfig: Record<string, unknown>;
  rules: { resources: string[] }[];
  matchConditions: { expression: string }[];
}

function webhookOf(objects: Rendered[], kind: string): Webhook {
  const [webhook] = find(objects, kind)['webhooks'] as Webhook[];
  if (webhook === undefined) throw new Error(`${kind} without a webhook`);
  return webhook;
}

/** GPU queueing on, with two GPU classes, a quota for every workspace and one of its own, borrowing. */
const QUEUEING = {
  enabled: true,
  engines: 'gpu',
  gpuClasses: [
    {
      name: 'a100',
      nodeLabels: { 'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-80GB' },
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
    },
    { name: 'l4', nodeLabels: { 'nvidia.com/gpu.product': 'NVIDIA-L4' } },
  ],
  workspaceQuota: { a100: 4 },
  workspaces: { 'team-a': { a100: 8, l4: 2 } },
  cohort: 'engines',
};
const MINIMAL_VALUES_WITH = (queueing: object): object => ({ ...MINIMAL_VALUES, queueing });

/** The cluster-wide objects of a release: the users' ClusterRoles and the two webhook configurations. */
const CLUSTER_WIDE = [
  'ClusterRole/aiem-ai-engine-manager-administrator',
  'ClusterRole/aiem-ai-engine-manager-engine-editor',
  'ClusterRole/aiem-ai-engine-manager-viewer',
  'MutatingWebhookConfiguration/aiem-ai-engine-manager-mutate',
  'ValidatingWebhookConfiguration/aiem-ai-engine-manager-validate',
];

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}
interface Probe {
  httpGet: { path: string; port: string };
}
interface Container {
  name: string;
  image: string;
  imagePullPolicy: string;
  command: string[];
  env: EnvVar[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: Probe;
  readinessProbe: Probe;
  startupProbe: Probe;
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext: Record<string, unknown>;
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface PodSpec {
  serviceAccountName: string;
  automountServiceAccountToken: boolean;
  securityContext: Record<string, unknown>;
  imagePullSecrets?: { name: string }[];
  containers: Container[];
  volumes: { name: string; configMap?: { name: string; items?: { key: string; path: string }[] } }[];
  terminationGracePeriodSeconds?: number;
  topologySpreadConstraints?: unknown[];
}
interface Deployment {
  spec: { replicas: number; selector: { matchLabels: Record<string, string> }; template: { spec: PodSpec } };
}

interface Job {
  metadata: { annotations: Record<string, string> };
  spec: { backoffLimit: number; activeDeadlineSeconds: number; template: { spec: PodSpec & { nodeSelector?: object; tolerations?: object[] } } };
}

const deployment = (objects: Rendered[], component: string): Deployment =>
  find(objects, 'Deployment', `-${component}`) as unknown as Deployment;
const container = (objects: Rendered[], component: string): Container => {
  const found = deployment(objects, component).spec.template.spec.containers[0];
  if (found === undefined) throw new Error(`The ${component} Deployment has no container`);
  return found;
};
/** A container's plain environment values by name. */
const envOf = (c: Container): Record<string, string | undefined> =>
  Object.fromEntries(c.env.map((e) => [e.name, e.value]));
const kinds = (objects: Rendered[]): string[] => objects.map((o) => `${o.kind}/${o.metadata?.name ?? ''}`).sort();
const keys = (permissions: Permission[]): string[] => [...new Set(permissions.map(permissionKey))].sort();

/**
 * Whether some peer admits a pod with these labels in this namespace to a policy of the release
 * namespace `aiem-system`, for the forms the chart renders: a pod selector alone (the policy's
 * namespace), a namespace selector by name (labels or NotIn), or both.
 */
function admitsPod(peers: readonly V1NetworkPolicyPeer[], labels: Record<string, string>, namespace: string): boolean {
  const podMatches = (selector: V1LabelSelector | undefined): boolean =>
    Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const namespaceMatches = (selector: V1LabelSelector): boolean =>
    Object.entries(selector.matchLabels ?? {}).every(([k, v]) => k === 'kubernetes.io/metadata.name' && v === namespace) &&
    (selector.matchExpressions ?? []).every(
      (e) => e.key === 'kubernetes.io/metadata.name' && e.operator === 'NotIn' && !(e.values ?? []).includes(namespace),
    );
  return peers.some((peer) =>
    peer.namespaceSelector === undefined
      ? namespace === 'aiem-system' && podMatches(peer.podSelector)
      : namespaceMatches(peer.namespaceSelector) && podMatches(peer.podSelector),
  );
}

/** The rendered gateway Ingress, as the assertions read it. */
/** The Ingress annotations values.yaml sets: ingress-nginx's settings for WebSockets and uploads. */
const NGINX_DEFAULTS = {
  'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600',
  'nginx.ingress.kubernetes.io/proxy-send-timeout': '3600',
  'nginx.ingress.kubernetes.io/proxy-body-size': '0',
  'nginx.ingress.kubernetes.io/proxy-request-buffering': 'off',
  'nginx.ingress.kubernetes.io/proxy-buffering': 'off',
};

/** The CRDs of crds/, parsed, by name. */
function sourceCrds(): Map<string, Rendered> {
  const crds = new Map<string, Rendered>();
  for (const file of readdirSync(join(ROOT, 'crds')).filter((f) => f.endsWith('.yaml'))) {
    const crd = load(readFileSync(join(ROOT, 'crds', file), 'utf8')) as Rendered;
    crds.set(crd.metadata?.name ?? '', crd);
  }
  return crds;
}

/** Helm's message when the values are refused, or a failure when they are not. */
async function refusal(values: object): Promise<string> {
  try {
    await render(values);
  } catch (error: unknown) {
    if (error instanceof HelmError) return error.stderr;
    throw error;
  }
  throw new Error(`Values were accepted: ${JSON.stringify(values)}`);
}

describe('chart files', () => {
  test('Chart.yaml releases the chart with the product: version and appVersion 1.2.0', () => {
    const chart = load(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'ai-engine-manager', version, appVersion: version });
  });

  test('the generated CRD templates and default policy are exactly what scripts/chart-files.ts writes', () => {
    const expected = chartFiles();
    const actual = new Map<string, string>();
    for (const dir of GENERATED_DIRS) {
      for (const name of readdirSync(join(ROOT, dir))) {
        actual.set(`${dir}/${name}`, readFileSync(join(ROOT, dir, name), 'utf8'));
      }
    }
    expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [path, content] of expected) expect({ path, content: actual.get(path) }).toEqual({ path, content });
    for (const content of expected.values())
      expect(content).toMatch(/^(\{\{- \/\* |# )Code generated by scripts\/chart-files\.ts from \S+\. DO NOT EDIT\./);
  });

  test('helm lint --strict passes with the minimal values and with every optional part on', async () => {
    const everything = {
      oidc: { ...MINIMAL_VALUES.oidc, browser: { clientId: 'aiem-browser' } },
      imagePullSecrets: [{ name: 'registry' }],
      ingress: { enabled: true, host: 'aiem.example.com', tls: { secretName: 'aiem-tls' } },
      sandboxes: { ports: { publicUrl: 'https://ports.example.com', ingressClassName: 'nginx' } },
      policy: { grants: [{ roles: ['admin'], workspaces: ['*'], permissions: ['actions/enginemanager/*'] }] },
      operator: { replicas: 3 },
      queueing: QUEUEING,
    };
    for (const values of [join(CHART, 'ci', 'minimal-values.yaml'), valuesFile(everything)]) {
      const output = await helm(['lint', '--strict', CHART, '-f', values]);
      expect(output).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(output).not.toMatch(/\[(WARNING|ERROR)\]/);
    }
  });
});

describe('default values', () => {
  let objects: Rendered[];
  beforeAll(async () => {
    objects = await render(MINIMAL_VALUES, { release: 'aiem', namespace: 'aiem-system' });
  });

  test('render the CRDs, both workloads, their ServiceAccounts, RBAC, Services, the policy and the webhooks; no Ingress', () => {
    const crds = [...sourceCrds().keys()].map((name) => `CustomResourceDefinition/${name}`);
    expect(crds).toHaveLength(14);
    expect(kinds(objects)).toEqual(
      [
        ...crds,
        ...CLUSTER_WIDE,
        'Secret/aiem-ai-engine-manager-gateway-webhook-tls',
        'ConfigMap/aiem-ai-engine-manager-policy',
        'Deployment/aiem-ai-engine-manager-gateway',
        'Deployment/aiem-ai-engine-manager-operator',
        // The uninstall hook's, created only when the release is uninstalled.
        'Job/aiem-ai-engine-manager-uninstall',
        'Role/aiem-ai-engine-manager-uninstall',
        'RoleBinding/aiem-ai-engine-manager-uninstall',
        'ServiceAccount/aiem-ai-engine-manager-uninstall',
        'PodDisruptionBudget/aiem-ai-engine-manager-gateway',
        'PodDisruptionBudget/aiem-ai-engine-manager-operator',
        'Role/aiem-ai-engine-manager-gateway',
        'Role/aiem-ai-engine-manager-operator',
        'RoleBinding/aiem-ai-engine-manager-gateway',
        'RoleBinding/aiem-ai-engine-manager-operator',
        'Service/aiem-ai-engine-manager-gateway',
        'Service/aiem-ai-engine-manager-metrics',
        'ServiceAccount/aiem-ai-engine-manager-engine',
        'ServiceAccount/aiem-ai-engine-manager-gateway',
        'ServiceAccount/aiem-ai-engine-manager-operator',
      ].sort(),
    );
    for (const o of objects.filter((x) => !CLUSTER_WIDE.includes(`${x.kind}/${x.metadata?.name ?? ''}`) && x.kind !== 'CustomResourceDefinition'))
      expect({ name: o.metadata?.name, namespace: o.metadata?.namespace }).toEqual({
        name: o.metadata?.name,
        namespace: 'aiem-system',
      });
  });

  test('each CRD is its crds/ source unchanged, plus the release labels and the keep policy', () => {
    const sources = sourceCrds();
    for (const crd of objects.filter((o) => o.kind === 'CustomResourceDefinition')) {
      const { labels, annotations, ...metadata } = crd.metadata ?? {};
      expect({ ...crd, metadata }).toEqual(sources.get(crd.metadata?.name ?? ''));
      expect(labels).toMatchObject({ 'app.kubernetes.io/instance': 'aiem', 'app.kubernetes.io/managed-by': 'Helm' });
      expect(annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
    }
  });

  test('the gateway: two replicas, REST and gRPC ports, probes on /healthz and /readyz, non-root with a read-only root', () => {
    const gateway = deployment(objects, 'gateway');
    const c = container(objects, 'gateway');
    expect(gateway.spec.replicas).toBe(2);
    expect(c.image).toBe(`localhost/ai-engine-manager:${VERSION}`);
    expect(c.imagePullPolicy).toBe('IfNotPresent');
    expect(c.command).toEqual(['node', '/app/gateway/src/main.ts']);
    expect(c.ports).toEqual([
      { name: 'http', containerPort: 8080, protocol: 'TCP' },
      { name: 'grpc', containerPort: 9090, protocol: 'TCP' },
      { name: 'webhook', containerPort: 8443, protocol: 'TCP' },
    ]);
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.startupProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.resources.requests).toEqual({ cpu: '250m', memory: '640Mi' });
    expect(c.resources.limits).toEqual({ memory: '1Gi' });
    expect(gateway.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    expect(c.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    expect(gateway.spec.template.spec.serviceAccountName).toBe('aiem-ai-engine-manager-gateway');
    expect(gateway.spec.template.spec.automountServiceAccountToken).toBe(true);
    const service = find(objects, 'Service', '-gateway') as unknown as {
      spec: { type: string; ports: { name: string; port: number; targetPort: string }[] };
    };
    expect(service.spec.type).toBe('ClusterIP');
    expect(service.spec.ports.map(({ name, port, targetPort }) => ({ name, port, targetPort }))).toEqual([
      { name: 'http', port: 8080, targetPort: 'http' },
      { name: 'grpc', port: 9090, targetPort: 'grpc' },
      { name: 'webhook', port: 443, targetPort: 'webhook' },
    ]);
  });

  test('the gateway environment: namespace, listen addresses, OIDC settings as the code defaults them, the policy file', () => {
    expect(envOf(container(objects, 'gateway'))).toEqual({
      AIEM_NAMESPACE: 'aiem-system',
      AIEM_DAI_LICENSE_SECRET: 'dai-license',
      AIEM_PUBLIC_URL: 'http://aiem-ai-engine-manager-gateway.aiem-system.svc:8080',
      AIEM_LOG_LEVEL: 'info',
      AIEM_HOST: '0.0.0.0',
      AIEM_REST_PORT: '8080',
      AIEM_GRPC_PORT: '9090',
      AIEM_SHUTDOWN_DELAY_MS: '5000',
      AIEM_DRAIN_TIMEOUT_MS: '20000',
      AIEM_OIDC_ISSUER_URL: 'https://issuer.example.com/realms/platform',
      AIEM_OIDC_AUDIENCE: 'ai-engine-manager',
      AIEM_OIDC_SUBJECT_CLAIM: DEFAULT_CLAIM_NAMES.subject,
      AIEM_OIDC_DISPLAY_NAME_CLAIM: DEFAULT_CLAIM_NAMES.displayName,
      AIEM_OIDC_ROLES_CLAIM: DEFAULT_CLAIM_NAMES.roles,
      AIEM_OIDC_CLOCK_SKEW_SECONDS: '30',
      AIEM_POLICY_FILE: '/etc/ai-engine-manager/policy/policy.yaml',
      AIEM_WEBHOOK_PORT: '8443',
      AIEM_WEBHOOK_CERT_DIR: '/etc/ai-engine-manager/webhook-tls',
      AIEM_KUBERNETES_USERNAME_PREFIX: '',
      AIEM_KUBERNETES_GROUPS_PREFIX: '',
    });
  });

  test('the policy file is the ConfigMap mounted as a directory, holding the default policy', () => {
    const spec = deployment(objects, 'gateway').spec.template.spec;
    const c = container(objects, 'gateway');
    const file = envOf(c)['AIEM_POLICY_FILE'] ?? '';
    const mount = c.volumeMounts.find((m) => file.startsWith(`${m.mountPath}/`));
    expect(mount).toMatchObject({ name: 'policy', readOnly: true });
    // A directory mount, not subPath: Kubernetes updates it in place when the ConfigMap changes.
    expect(mount).not.toHaveProperty('subPath');
    const volume = spec.volumes.find((v) => v.name === mount?.name);
    expect(volume?.configMap).toEqual({
      name: 'aiem-ai-engine-manager-policy',
      items: [{ key: 'policy.yaml', path: file.slice((mount?.mountPath.length ?? 0) + 1) }],
    });
    const configMap = find(objects, 'ConfigMap', '-policy') as unknown as { data: Record<string, string> };
    const policy = configMap.data['policy.yaml'] ?? '';
    // A valid policy, and the very document of the default policy.
    expect(() => parsePolicy(policy, 'ConfigMap')).not.toThrow();
    expect(load(policy)).toEqual(load(readFileSync(DEFAULT_POLICY_FILE, "utf8")));
  });

  test('the operator: replicas, POD_NAME from the downward API as its identity, metrics port, probes, settings', () => {
    const operator = deployment(objects, 'operator');
    const c = container(objects, 'operator');
    expect(operator.spec.replicas).toBe(2);
    expect(c.command).toEqual(['node', '/app/operator/src/main.ts']);
    expect(c.env).toContainEqual({ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
    // The peers are checked where engine isolation is.
    const { AIEM_ENGINE_NETWORK_PEERS: peers, ...env } = envOf(c);
    expect(peers).toEqual(expect.stringMatching(/^\[/));
    expect(env).toEqual({
      AIEM_NAMESPACE: 'aiem-system',
      AIEM_PUBLIC_URL: 'http://aiem-ai-engine-manager-gateway.aiem-system.svc:8080',
      AIEM_LOG_LEVEL: 'info',
      POD_NAME: undefined,
      AIEM_ENGINE_SERVICE_ACCOUNT: 'aiem-ai-engine-manager-engine',
      AIEM_DAI_LICENSE_SECRET: 'dai-license',
      AIEM_OPERATOR_HOST: '0.0.0.0',
      AIEM_OPERATOR_PORT: '8081',
      AIEM_OPERATOR_WORKERS: '16',
      AIEM_OPERATOR_QPS: '100',
      AIEM_OPERATOR_BURST: '200',
      AIEM_LEASE_DURATION_MS: '15000',
      AIEM_LEASE_RENEW_DEADLINE_MS: '10000',
      AIEM_LEASE_RETRY_PERIOD_MS: '2000',
    });
    expect(c.ports).toEqual([{ name: 'metrics', containerPort: 8081, protocol: 'TCP' }]);
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(operator.spec.template.spec.serviceAccountName).toBe('aiem-ai-engine-manager-operator');
    const metrics = find(objects, 'Service', '-metrics') as unknown as {
      spec: { ports: { name: string; port: number; targetPort: string }[]; selector: Record<string, string> };
    };
    expect(metrics.spec.ports).toEqual([{ name: 'metrics', port: 8081, targetPort: 'metrics', protocol: 'TCP' }]);
    expect(metrics.spec.selector).toMatchObject({ 'app.kubernetes.io/component': 'operator' });
  });

  test('both components survive drains and rollouts: a PodDisruptionBudget each, spread over nodes and zones, a grace period longer than the gateway\'s drain', () => {
    for (const component of ['gateway', 'operator']) {
      const selector = deployment(objects, component).spec.selector.matchLabels;
      const budget = find(objects, 'PodDisruptionBudget', `-${component}`) as unknown as {
        spec: { maxUnavailable: number; selector: { matchLabels: Record<string, string> } };
      };
      expect(budget.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: selector } });
      const spec = deployment(objects, component).spec.template.spec;
      expect(spec.terminationGracePeriodSeconds).toBe(30);
      expect(spec.topologySpreadConstraints).toEqual(
        ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'].map((topologyKey) => ({
          maxSkew: 1,
          topologyKey,
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: selector },
        })),
      );
    }
    const env = envOf(container(objects, 'gateway'));
    const drain = Number(env['AIEM_SHUTDOWN_DELAY_MS']) + Number(env['AIEM_DRAIN_TIMEOUT_MS']);
    expect(drain).toBeLessThan(30_000);
  });

  test('engine pods run as a ServiceAccount bound to nothing, without its token, and admit the release\'s gateway and operator pods alone to engines\' ports', () => {
    const account = find(objects, 'ServiceAccount', '-engine') as unknown as { automountServiceAccountToken: boolean };
    expect(account.automountServiceAccountToken).toBe(false);
    const bindings = objects.filter((o) => o.kind === 'RoleBinding') as unknown as { subjects: { name: string }[] }[];
    expect(bindings.flatMap((b) => b.subjects.map((x) => x.name))).not.toContain('aiem-ai-engine-manager-engine');
    const env = envOf(container(objects, 'operator'));
    expect(env['AIEM_ENGINE_SERVICE_ACCOUNT']).toBe('aiem-ai-engine-manager-engine');
    // The operator reads the peers as it would at start.
    const peers = networkPeers(env['AIEM_ENGINE_NETWORK_PEERS']) ?? [];
    const podLabels = (component: string): Record<string, string> =>
      (deployment(objects, component).spec.template as unknown as { metadata: { labels: Record<string, string> } }).metadata
        .labels;
    // The gateway pods (the access proxy) and the operator's (its activity probes at the idle limit),
    // by the labels of their Deployments' pods, in the policy's (the release's) namespace.
    expect(peers).toEqual(
      ['gateway', 'operator'].map((c) => ({ podSelector: { matchLabels: deployment(objects, c).spec.selector.matchLabels } })),
    );
    const admits = (labels: Record<string, string>, namespace: string): boolean => admitsPod(peers, labels, namespace);
    expect(admits(podLabels('gateway'), 'aiem-system')).toBe(true);
    expect(admits(podLabels('operator'), 'aiem-system')).toBe(true);
    // An engine's pod (a user's notebook) in the release namespace is not admitted...
    expect(admits({ 'engine.h2o.ai/engine-uid': 'other', 'engine.h2o.ai/engine-kind': 'NotebookEngine' }, 'aiem-system')).toBe(false);
    // ...nor any pod of another namespace: an ingress controller, or a gateway of another release.
    expect(admits({ 'app.kubernetes.io/name': 'ingress-nginx' }, 'ingress-nginx')).toBe(false);
    expect(admits(podLabels('gateway'), 'other-release')).toBe(false);
    // Sandbox ports are internal by default: no one else is admitted to sandboxes either.
    expect(env['AIEM_SANDBOX_PORTS_PEERS']).toBeUndefined();
  });

  test('the Roles grant exactly what the code calls, in the release namespace, bound to the right ServiceAccount', () => {
    for (const [component, needs] of [
      ['gateway', gatewayNeeds()],
      // Queueing is off by default: none of what the operator calls of Kueue.
      ['operator', withoutQueueing(operatorNeeds())],
      ['uninstall', uninstallNeeds()],
    ] as const) {
      expect({ component, unknownCalls: needs.unknown }).toEqual({ component, unknownCalls: [] });
      const role = find(objects, 'Role', `-${component}`);
      expect({ component, granted: keys(granted(role)) }).toEqual({ component, granted: keys(needs.permissions) });
      const binding = find(objects, 'RoleBinding', `-${component}`) as unknown as {
        roleRef: { kind: string; name: string };
        subjects: { kind: string; name: string; namespace: string }[];
      };
      expect(binding.roleRef).toMatchObject({ kind: 'Role', name: role.metadata?.name });
      expect(binding.subjects).toEqual([
        { kind: 'ServiceAccount', name: `aiem-ai-engine-manager-${component}`, namespace: 'aiem-system' },
      ]);
    }
    // The only ClusterRoles are the users' (test/admission/kubectl.test.ts checks what they grant).
    expect(kinds(objects.filter((o) => /^Cluster/.test(String(o.kind))))).toEqual(
      CLUSTER_WIDE.filter((k) => k.startsWith('ClusterRole/')),
    );
    expect(objects.filter((o) => o.kind === 'ClusterRoleBinding')).toEqual([]);
  });

  test('the webhooks: both kinds of review for the fourteen kinds, failing closed, trusting the generated CA', () => {
    const secret = find(objects, 'Secret', '-webhook-tls') as unknown as { data: Record<string, string> };
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      const webhook = webhookOf(objects, kind);
      expect(webhook).toMatchObject({
        failurePolicy: 'Fail',
        sideEffects: 'NoneOnDryRun',
        timeoutSeconds: 10,
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'aiem-system' } },
        clientConfig: {
          caBundle: secret.data['ca.crt'],
          service: { name: 'aiem-ai-engine-manager-gateway', namespace: 'aiem-system', port: 443 },
        },
      });
      expect([...(webhook.rules[0]?.resources ?? [])].sort()).toEqual([...ALL_KINDS].sort());
      const exempt = webhook.matchConditions[0]?.expression ?? '';
      for (const user of ['gateway', 'operator', 'uninstall'])
        expect(exempt).toContain(`'system:serviceaccount:aiem-system:aiem-ai-engine-manager-${user}'`);
    }
    // The certificate names the Service, and the CA signed it.
    const certificate = new X509Certificate(Buffer.from(secret.data['tls.crt'] ?? '', 'base64'));
    const ca = new X509Certificate(Buffer.from(secret.data['ca.crt'] ?? '', 'base64'));
    expect(certificate.subjectAltName).toContain('DNS:aiem-ai-engine-manager-gateway.aiem-system.svc');
    expect(certificate.verify(ca.publicKey)).toBe(true);
    // Mounted where the gateway reads it.
    const spec = deployment(objects, 'gateway').spec.template.spec;
    expect(spec.volumes.find((v) => v.name === 'webhook-tls')).toMatchObject({
      secret: { secretName: 'aiem-ai-engine-manager-gateway-webhook-tls' },
    });
  });

  test('the permission tables follow the code: the gateway stores the fourteen kinds, the operator reads no pod logs', () => {
    const crdPlurals = [...sourceCrds().values()].map((crd) => (crd['spec'] as { names: { plural: string } }).names.plural);
    expect([...ALL_KINDS].sort()).toEqual(crdPlurals.sort());
    // Engine logs are the gateway's: the operator holds no permission to read them.
    const callers = [...sources(['operator/src'])].filter(([, text]) => text.includes('readNamespacedPodLog'));
    expect(callers.map(([file]) => file)).toEqual([]);
    expect(readFileSync(join(ROOT, 'operator/src/main.ts'), 'utf8')).toContain("name: 'ai-engine-manager-operator'");
    expect(gatewayNeeds().calls).toEqual(
      expect.arrayContaining(['createNamespacedCustomObject', 'patchNamespacedCustomObjectStatus']),
    );
  });
});

describe('value sets', () => {
  test('GPU queueing: off by default; on, the operator reads its configuration from a ConfigMap and may keep Kueue\'s objects', async () => {
    const off = await render(MINIMAL_VALUES);
    expect(kinds(off).filter((k) => k.includes('queueing'))).toEqual([]);
    expect(envOf(container(off, 'operator'))['AIEM_QUEUEING_CONFIG']).toBeUndefined();
    expect(keys(granted(find(off, 'Role', '-operator'))).filter((k) => k.includes('kueue'))).toEqual([]);

    const on = await render(MINIMAL_VALUES_WITH(QUEUEING), { release: 'aiem', namespace: 'aiem-system' });
    // The configuration file is the values but `enabled`, as the operator reads it.
    const data = (find(on, 'ConfigMap', '-operator-queueing') as unknown as { data: Record<string, string> }).data;
    const { enabled: _enabled, ...configuration } = QUEUEING;
    expect(load(data['queueing.yaml'] ?? '')).toEqual(configuration);
    const operator = deployment(on, 'operator').spec.template;
    const path = envOf(container(on, 'operator'))['AIEM_QUEUEING_CONFIG'] ?? '';
    const mount = container(on, 'operator').volumeMounts.find((m) => path.startsWith(`${m.mountPath}/`));
    expect(mount).toMatchObject({ name: 'queueing', readOnly: true });
    expect(operator.spec.volumes).toContainEqual({
      name: 'queueing',
      configMap: { name: 'aiem-ai-engine-manager-operator-queueing', items: [{ key: 'queueing.yaml', path: path.split('/').pop() }] },
    });
    // A changed configuration rolls the operator, which reads it when it starts.
    const changed = await render(MINIMAL_VALUES_WITH({ ...QUEUEING, cohort: '' }));
    const checksum = (objects: Rendered[]): string | undefined =>
      (deployment(objects, 'operator').spec.template as unknown as { metadata: { annotations?: Record<string, string> } }).metadata.annotations?.['checksum/queueing'];
    expect(checksum(on)).toMatch(/^[0-9a-f]{64}$/);
    expect(checksum(changed)).not.toBe(checksum(on));

    // Kueue's cluster-wide objects through a ClusterRole of their own, bound to the operator...
    const clusterRole = find(on, 'ClusterRole', '-operator-queueing');
    expect(keys(granted(clusterRole))).toEqual(keys(operatorClusterNeeds().permissions));
    expect(find(on, 'ClusterRoleBinding', '-operator-queueing')).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: clusterRole.metadata?.name },
      subjects: [{ kind: 'ServiceAccount', name: 'aiem-ai-engine-manager-operator', namespace: 'aiem-system' }],
    });
    // ...and the namespaced ones (each workspace's LocalQueue, the Workloads, queue positions)
    // through its Role, in the release namespace alone.
    expect(keys(granted(find(on, 'Role', '-operator')))).toEqual(keys(operatorNeeds().permissions));
    // Without RBAC from the chart, none of it.
    const own = await render({ ...MINIMAL_VALUES_WITH(QUEUEING), rbac: { create: false } });
    expect(kinds(own).filter((k) => /^Cluster.*-operator-queueing$/.test(k))).toEqual([]);
    expect(envOf(container(own, 'operator'))['AIEM_QUEUEING_CONFIG']).toBeDefined();
  });

  test('admission: cert-manager instead of the generated certificate; off altogether', async () => {
    const managed = await render({ ...MINIMAL_VALUES, admission: { certificate: { source: 'cert-manager' } } });
    expect(kinds(managed)).toEqual(expect.arrayContaining(['Issuer/aiem-ai-engine-manager-gateway-webhook', 'Certificate/aiem-ai-engine-manager-gateway-webhook']));
    expect(kinds(managed)).not.toContain('Secret/aiem-ai-engine-manager-gateway-webhook-tls');
    const mutate = find(managed, 'MutatingWebhookConfiguration');
    expect(mutate.metadata?.annotations).toEqual({
      'cert-manager.io/inject-ca-from': 'aiem-system/aiem-ai-engine-manager-gateway-webhook',
    });
    expect(webhookOf(managed, 'MutatingWebhookConfiguration').clientConfig).not.toHaveProperty('caBundle');
    const issued = await render({
      ...MINIMAL_VALUES,
      admission: { certificate: { source: 'cert-manager', certManager: { issuerRef: { name: 'platform-ca', kind: 'ClusterIssuer' } } } },
    });
    expect(kinds(issued)).not.toContain('Issuer/aiem-ai-engine-manager-gateway-webhook');
    expect(find(issued, 'Certificate')['spec']).toMatchObject({ issuerRef: { name: 'platform-ca', kind: 'ClusterIssuer' }, isCA: false });
    const off = await render({ ...MINIMAL_VALUES, admission: { enabled: false }, rbac: { userRoles: false } });
    expect(kinds(off).filter((k) => /Webhook|Cluster|Secret/.test(k))).toEqual([]);
    expect(Object.keys(envOf(container(off, 'gateway'))).filter((k) => k.startsWith('AIEM_WEBHOOK'))).toEqual([]);
    const ignore = await render({ ...MINIMAL_VALUES, admission: { failurePolicy: 'Ignore', usernamePrefix: 'oidc:' } });
    expect(webhookOf(ignore, 'ValidatingWebhookConfiguration').failurePolicy).toBe('Ignore');
    expect(envOf(container(ignore, 'gateway'))['AIEM_KUBERNETES_USERNAME_PREFIX']).toBe('oidc:');
  });

  test('engines: more peers are admitted; other namespaces can be let in again; both isolation parts can be turned off', async () => {
    const monitoring = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
    const objects = await render({ ...MINIMAL_VALUES, engines: { networkPolicy: { allowFrom: [monitoring] } } });
    const peers = networkPeers(envOf(container(objects, 'operator'))['AIEM_ENGINE_NETWORK_PEERS']);
    expect(peers?.map((p) => Object.keys(p))).toEqual([['podSelector'], ['podSelector'], ['namespaceSelector']]);
    expect(peers?.[2]).toEqual(monitoring);
    // 1.3.0's default, on request: every other namespace, never the release's own.
    const wide = await render({ ...MINIMAL_VALUES, engines: { networkPolicy: { allowOtherNamespaces: true } } });
    const widePeers = networkPeers(envOf(container(wide, 'operator'))['AIEM_ENGINE_NETWORK_PEERS']) ?? [];
    expect(admitsPod(widePeers, { 'app.kubernetes.io/name': 'ingress-nginx' }, 'ingress-nginx')).toBe(true);
    expect(admitsPod(widePeers, { 'engine.h2o.ai/engine-uid': 'other' }, 'aiem-system')).toBe(false);
    const off = await render({
      ...MINIMAL_VALUES,
      engines: { serviceAccount: { create: false }, networkPolicy: { enabled: false } },
      sandboxes: { ports: { publicUrl: 'https://ports.example.com' } },
    });
    const offEnv = Object.keys(envOf(container(off, 'operator')));
    expect(offEnv.filter((k) => k.startsWith('AIEM_ENGINE_') || k === 'AIEM_SANDBOX_PORTS_PEERS')).toEqual([]);
    expect(kinds(off)).not.toContain('ServiceAccount/aiem-ai-engine-manager-engine');
  });

  test('public sandbox ports: sandboxes alone also admit the ingress controller, every other namespace unless named', async () => {
    const ports = { publicUrl: 'https://ports.example.com' };
    const objects = await render({ ...MINIMAL_VALUES, sandboxes: { ports } });
    const env = envOf(container(objects, 'operator'));
    // Engines' ports still admit the gateway and the operator alone.
    expect(networkPeers(env['AIEM_ENGINE_NETWORK_PEERS'])).toHaveLength(2);
    const sandboxPeers = networkPeers(env['AIEM_SANDBOX_PORTS_PEERS'], 'AIEM_SANDBOX_PORTS_PEERS') ?? [];
    expect(admitsPod(sandboxPeers, { 'app.kubernetes.io/name': 'ingress-nginx' }, 'ingress-nginx')).toBe(true);
    expect(admitsPod(sandboxPeers, { 'engine.h2o.ai/engine-uid': 'other' }, 'aiem-system')).toBe(false);
    // Named: exactly that controller.
    const controller = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } },
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'ingress-nginx' } },
    };
    const named = await render({ ...MINIMAL_VALUES, sandboxes: { ports: { ...ports, allowFrom: [controller] } } });
    const namedEnv = envOf(container(named, 'operator'));
    expect(networkPeers(namedEnv['AIEM_SANDBOX_PORTS_PEERS'], 'AIEM_SANDBOX_PORTS_PEERS')).toEqual([controller]);
  });

  test('an Ingress with TLS routes the API, engines\' addresses and the sign-in to the REST port, and its https host becomes the public URL', async () => {
    const objects = await render({
      ...MINIMAL_VALUES,
      ingress: {
        enabled: true,
        className: 'nginx',
        host: 'aiem.example.com',
        annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' },
        tls: { secretName: 'aiem-tls' },
      },
    });
    // The rendered manifest reads as the Kubernetes object it is.
    const ingress: V1Ingress = find(objects, 'Ingress', '-gateway');
    // Yours beside the defaults: WebSockets idle up to an hour, uploads of any size, streamed.
    expect(ingress.metadata?.annotations).toEqual({ ...NGINX_DEFAULTS, 'cert-manager.io/cluster-issuer': 'letsencrypt' });
    const backend = { service: { name: 'aiem-ai-engine-manager-gateway', port: { name: 'http' } } };
    expect(ingress.spec).toEqual({
      ingressClassName: 'nginx',
      tls: [{ hosts: ['aiem.example.com'], secretName: 'aiem-tls' }],
      rules: [
        {
          host: 'aiem.example.com',
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend },
              { path: '/workspaces', pathType: 'Prefix', backend },
              { path: '/auth', pathType: 'Prefix', backend },
            ],
          },
        },
      ],
    });
    for (const component of ['gateway', 'operator'])
      expect(envOf(container(objects, component))['AIEM_PUBLIC_URL']).toBe('https://aiem.example.com');
  });

  test('an Ingress narrowed to the API still routes engines\' addresses and the sign-in; a default annotation can be dropped', async () => {
    const objects = await render({
      ...MINIMAL_VALUES,
      ingress: {
        enabled: true,
        host: 'platform.example.com',
        path: '/v1',
        annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': null },
      },
    });
    const ingress: V1Ingress = find(objects, 'Ingress', '-gateway');
    const paths = (ingress.spec?.rules ?? []).flatMap((rule) => (rule.http?.paths ?? []).map((p) => [p.path, p.pathType]));
    expect(paths).toEqual([
      ['/v1', 'Prefix'],
      ['/workspaces', 'Prefix'],
      ['/auth', 'Prefix'],
    ]);
    expect(ingress.metadata?.annotations).not.toHaveProperty('nginx.ingress.kubernetes.io/proxy-body-size');
    expect(ingress.metadata?.annotations?.['nginx.ingress.kubernetes.io/proxy-read-timeout']).toBe('3600');
    // Without TLS at the Ingress the public URL is http; engines' addresses start with it.
    expect(envOf(container(objects, 'operator'))['AIEM_PUBLIC_URL']).toBe('http://platform.example.com');
  });

  test('replicas, image, pull secrets, OIDC claims, algorithms and an explicit public URL reach the pods', async () => {
    const objects = await render({
      oidc: {
        issuerUrl: 'https://keycloak.example.com/realms/ml',
        audiences: ['aiem', 'account'],
        rolesClaim: 'realm_access.roles',
        algorithms: ['RS256', 'ES256'],
        clockSkewSeconds: 5,
      },
      publicUrl: 'https://engines.example.com',
      logLevel: 'debug',
      image: {
        repository: 'registry.example.com/aiem',
        digest: `sha256:${'a'.repeat(64)}`,
        pullPolicy: 'Always',
      },
      imagePullSecrets: [{ name: 'registry' }],
      gateway: { replicas: 3, extraEnv: [{ name: 'NODE_EXTRA_CA_CERTS', value: '/etc/ca/ca.crt' }] },
      operator: { replicas: 2, workers: 8, qps: 50, leaseDurationMs: 30000, renewDeadlineMs: 20000, retryPeriodMs: 4000 },
    });
    expect(deployment(objects, 'gateway').spec.replicas).toBe(3);
    expect(deployment(objects, 'operator').spec.replicas).toBe(2);
    for (const component of ['gateway', 'operator']) {
      const c = container(objects, component);
      expect(c.image).toBe(`registry.example.com/aiem@sha256:${'a'.repeat(64)}`);
      expect(c.imagePullPolicy).toBe('Always');
      expect(deployment(objects, component).spec.template.spec.imagePullSecrets).toEqual([{ name: 'registry' }]);
      expect(envOf(c)).toMatchObject({ AIEM_PUBLIC_URL: 'https://engines.example.com', AIEM_LOG_LEVEL: 'debug' });
    }
    expect(envOf(container(objects, 'gateway'))).toMatchObject({
      AIEM_OIDC_ISSUER_URL: 'https://keycloak.example.com/realms/ml',
      AIEM_OIDC_AUDIENCE: 'aiem,account',
      AIEM_OIDC_ROLES_CLAIM: 'realm_access.roles',
      AIEM_OIDC_ALGORITHMS: 'RS256,ES256',
      AIEM_OIDC_CLOCK_SKEW_SECONDS: '5',
      NODE_EXTRA_CA_CERTS: '/etc/ca/ca.crt',
    });
    expect(envOf(container(objects, 'operator'))).toMatchObject({
      AIEM_OPERATOR_WORKERS: '8',
      AIEM_OPERATOR_QPS: '50',
      AIEM_LEASE_DURATION_MS: '30000',
      AIEM_LEASE_RENEW_DEADLINE_MS: '20000',
      AIEM_LEASE_RETRY_PERIOD_MS: '4000',
    });
  });

  test('browser sign-in: the client, scopes and session length reach the gateway; sessions are signed with a key of a Secret the chart makes, or one named', async () => {
    const browser = { clientId: 'aiem-browser', scopes: 'openid profile email', sessionSeconds: 3600 };
    const objects = await render({ ...MINIMAL_VALUES, oidc: { ...MINIMAL_VALUES.oidc, browser } });
    const gateway = container(objects, 'gateway');
    expect(envOf(gateway)).toMatchObject({
      AIEM_BROWSER_CLIENT_ID: 'aiem-browser',
      AIEM_BROWSER_SCOPES: 'openid profile email',
      AIEM_SESSION_TTL_SECONDS: '3600',
    });
    const key = gateway.env.find((e) => e.name === 'AIEM_SESSION_KEY');
    expect(key?.valueFrom).toEqual({ secretKeyRef: { name: 'aiem-ai-engine-manager-session', key: 'session-key' } });
    // The key: base64 of 32 random bytes, as the gateway requires (a new one at each render).
    const secret = find(objects, 'Secret', '-session') as Rendered & { data: Record<string, string> };
    const value = Buffer.from(secret.data['session-key'] ?? '', 'base64').toString();
    expect(Buffer.from(value, 'base64').byteLength).toBe(32);
    expect(envOf(gateway)['AIEM_BROWSER_CLIENT_SECRET']).toBeUndefined();

    const named = await render({
      ...MINIMAL_VALUES,
      oidc: { ...MINIMAL_VALUES.oidc, browser: { clientId: 'aiem-browser', clientSecretName: 'idp', sessionKeySecretName: 'sessions' } },
    });
    expect(kinds(named)).not.toContain('Secret/aiem-ai-engine-manager-session');
    const env = container(named, 'gateway').env;
    expect(env.find((e) => e.name === 'AIEM_SESSION_KEY')?.valueFrom).toEqual({
      secretKeyRef: { name: 'sessions', key: 'session-key' },
    });
    expect(env.find((e) => e.name === 'AIEM_BROWSER_CLIENT_SECRET')?.valueFrom).toEqual({
      secretKeyRef: { name: 'idp', key: 'client-secret' },
    });
    // Off by default: no sign-in settings, no key.
    const plain = await render(MINIMAL_VALUES);
    expect(kinds(plain)).not.toContain('Secret/aiem-ai-engine-manager-session');
    expect(Object.keys(envOf(container(plain, 'gateway'))).filter((n) => /BROWSER|SESSION/.test(n))).toEqual([]);
  });

  test('policy grants replace the default policy with a policy the gateway accepts; an existing ConfigMap replaces both', async () => {
    const grants = [
      { description: 'Admins', roles: ['admin'], workspaces: ['*'], permissions: ['actions/enginemanager/*'] },
      {
        roles: ['data-scientist'],
        workspaces: ['team-*'],
        permissions: ['actions/enginemanager/*Engines/*', 'actions/enginemanager/*Profiles/LIST_ASSIGNED'],
      },
    ];
    const custom = await render({ ...MINIMAL_VALUES, policy: { grants } });
    const text =
      (find(custom, 'ConfigMap', '-policy') as unknown as { data: Record<string, string> }).data['policy.yaml'] ?? '';
    expect(load(text)).toEqual({ grants });
    expect(parsePolicy(text, 'ConfigMap').grants).toHaveLength(2);

    const existing = await render({ ...MINIMAL_VALUES, policy: { existingConfigMap: 'team-policy' } });
    expect(existing.filter((o) => o.kind === 'ConfigMap')).toEqual([]);
    expect(deployment(existing, 'gateway').spec.template.spec.volumes).toContainEqual({
      name: 'policy',
      configMap: { name: 'team-policy', items: [{ key: 'policy.yaml', path: 'policy.yaml' }] },
    });
  });

  test('CRDs can be left out or left unkept; RBAC and ServiceAccounts can be brought along', async () => {
    const without = await render({ ...MINIMAL_VALUES, crds: { install: false, keep: true } });
    expect(without.filter((o) => o.kind === 'CustomResourceDefinition')).toEqual([]);
    const unkept = await render({ ...MINIMAL_VALUES, crds: { install: true, keep: false }, uninstall: { engines: 'delete' } });
    for (const crd of unkept.filter((o) => o.kind === 'CustomResourceDefinition'))
      expect(crd.metadata?.annotations).toBeUndefined();
    const own = await render({
      ...MINIMAL_VALUES,
      rbac: { create: false },
      gateway: { serviceAccount: { create: false, name: 'api' } },
      operator: { serviceAccount: { create: false, name: 'runner' } },
      engines: { serviceAccount: { create: false } },
      uninstall: { serviceAccount: { create: false, name: 'cleaner' } },
    });
    expect(own.filter((o) => ['Role', 'RoleBinding', 'ServiceAccount'].includes(String(o.kind)))).toEqual([]);
    expect(deployment(own, 'gateway').spec.template.spec.serviceAccountName).toBe('api');
    expect(deployment(own, 'operator').spec.template.spec.serviceAccountName).toBe('runner');
    expect((find(own, 'Job', '-uninstall') as unknown as Job).spec.template.spec.serviceAccountName).toBe('cleaner');
  });

  test('a release named after the chart keeps short names; nameOverride and fullnameOverride apply', async () => {
    expect(kinds(await render(MINIMAL_VALUES, { release: 'ai-engine-manager' }))).toContain(
      'Deployment/ai-engine-manager-gateway',
    );
    expect(kinds(await render({ ...MINIMAL_VALUES, fullnameOverride: 'aiem' }))).toContain('Deployment/aiem-operator');
  });
});

describe('bad values fail with a message naming the value', () => {
  const cases: [string, object, RegExp][] = [
    ['no OIDC issuer', {}, /at '\/oidc': missing property 'issuerUrl'/],
    ['an issuer that is no URL', { oidc: { issuerUrl: 'issuer.example.com' } }, /at '\/oidc\/issuerUrl': .*does not match pattern/],
    ['a misspelt top-level key', { ...MINIMAL_VALUES, gatway: { replicas: 2 } }, /additional properties 'gatway' not allowed/],
    ['a misspelt nested key', { ...MINIMAL_VALUES, operator: { replica: 2 } }, /at '\/operator': additional properties 'replica' not allowed/],
    [
      'a grace period the gateway\'s drain does not fit in',
      { ...MINIMAL_VALUES, gateway: { shutdownDelaySeconds: 10, drainTimeoutSeconds: 20 } },
      /gateway.terminationGracePeriodSeconds must exceed gateway.shutdownDelaySeconds \+ gateway.drainTimeoutSeconds/,
    ],
    [
      'an engine peer with an ipBlock beside a selector',
      { ...MINIMAL_VALUES, engines: { networkPolicy: { allowFrom: [{ ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} }] } } },
      /at '\/engines\/networkPolicy\/allowFrom\/0'/,
    ],
    [
      'a sandbox ports peer with an unknown field',
      { ...MINIMAL_VALUES, sandboxes: { ports: { allowFrom: [{ nodeSelector: {} }] } } },
      /at '\/sandboxes\/ports\/allowFrom\/0': additional properties 'nodeSelector' not allowed/,
    ],
    ['negative replicas', { ...MINIMAL_VALUES, gateway: { replicas: -1 } }, /at '\/gateway\/replicas': minimum: got -1, want 0/],
    ['replicas as text', { ...MINIMAL_VALUES, operator: { replicas: 'two' } }, /at '\/operator\/replicas': got string, want integer/],
    ['an unknown pull policy', { ...MINIMAL_VALUES, image: { pullPolicy: 'Sometimes' } }, /at '\/image\/pullPolicy': value must be one of 'Always', 'IfNotPresent', 'Never'/],
    ['a symmetric token algorithm', { oidc: { ...MINIMAL_VALUES.oidc, algorithms: ['HS256'] } }, /at '\/oidc\/algorithms\/0': value must be one of 'RS256'/],
    ['no audience', { oidc: { ...MINIMAL_VALUES.oidc, audiences: [] } }, /at '\/oidc\/audiences': minItems: got 0, want 1/],
    ['a port out of range', { ...MINIMAL_VALUES, gateway: { restPort: 70000 } }, /at '\/gateway\/restPort': maximum: got 70,000, want 65,535/],
    ['an Ingress without a host', { ...MINIMAL_VALUES, ingress: { enabled: true } }, /at '\/ingress\/host': minLength: got 0, want 1/],
    ['a grant naming nobody', { ...MINIMAL_VALUES, policy: { grants: [{ workspaces: ['*'], permissions: ['actions/enginemanager/*'] }] } }, /at '\/policy\/grants\/0': missing property 'roles'/],
    ['a grant with an unknown key', { ...MINIMAL_VALUES, policy: { grants: [{ role: ['admin'], workspaces: ['*'], permissions: ['x'] }] } }, /additional properties 'role' not allowed/],
    ['a bad log level', { ...MINIMAL_VALUES, logLevel: 'verbose' }, /at '\/logLevel': value must be one of/],
    ['a malformed digest', { ...MINIMAL_VALUES, image: { digest: 'latest' } }, /at '\/image\/digest': 'latest' does not match pattern/],
    ['a leader acting as long as its lease lasts', { ...MINIMAL_VALUES, operator: { leaseDurationMs: 5000, renewDeadlineMs: 5000 } }, /operator\.renewDeadlineMs must be shorter than operator\.leaseDurationMs/],
    ['renewals no more often than the deadline', { ...MINIMAL_VALUES, operator: { renewDeadlineMs: 4000, retryPeriodMs: 4000 } }, /operator\.retryPeriodMs must be shorter than operator\.renewDeadlineMs/],
    ['an unknown failure policy', { ...MINIMAL_VALUES, admission: { failurePolicy: 'Retry' } }, /at '\/admission\/failurePolicy': value must be one of 'Fail', 'Ignore'/],
    ['a webhook timeout the apiserver refuses', { ...MINIMAL_VALUES, admission: { timeoutSeconds: 60 } }, /at '\/admission\/timeoutSeconds': maximum: got 60, want 30/],
    ['an unknown certificate source', { ...MINIMAL_VALUES, admission: { certificate: { source: 'vault' } } }, /at '\/admission\/certificate\/source': value must be one of 'helm', 'cert-manager'/],
    ['queueing without a GPU class', { ...MINIMAL_VALUES, queueing: { enabled: true } }, /at '\/queueing\/gpuClasses': minItems: got 0, want 1/],
    ['a quota of a GPU class not listed', MINIMAL_VALUES_WITH({ ...QUEUEING, workspaceQuota: { h100: 2 } }), /queueing\.workspaceQuota names the GPU class "h100", which queueing\.gpuClasses does not list/],
    ['a workspace quota of a GPU class not listed', MINIMAL_VALUES_WITH({ ...QUEUEING, workspaces: { 'team-b': { h100: 2 } } }), /queueing\.workspaces\.team-b names the GPU class "h100"/],
    ['a GPU class listed twice', MINIMAL_VALUES_WITH({ ...QUEUEING, gpuClasses: [...QUEUEING.gpuClasses, QUEUEING.gpuClasses[0]] }), /queueing\.gpuClasses lists "a100" twice/],
    ['a GPU class named as the operator\'s own flavor', MINIMAL_VALUES_WITH({ ...QUEUEING, gpuClasses: [{ name: 'cpu-only', nodeLabels: { pool: 'gpu' } }] }), /at '\/queueing\/gpuClasses\/0\/name'/],
    ['a negative quota', MINIMAL_VALUES_WITH({ ...QUEUEING, workspaceQuota: { a100: -1 } }), /minimum: got -1, want 0/],
    ['an unknown choice of queued engines', MINIMAL_VALUES_WITH({ ...QUEUEING, engines: 'cpu' }), /at '\/queueing\/engines': value must be one of 'gpu', 'all'/],
    ['an existing ServiceAccount without a name', { ...MINIMAL_VALUES, gateway: { serviceAccount: { create: false } } }, /gateway\.serviceAccount\.name: name the existing ServiceAccount/],
  ];
  test.each(cases)('%s', async (_what, values, message) => {
    expect(await refusal(values)).toMatch(message);
  });

  test('the schema accepts exactly the gateway token algorithms', () => {
    const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as {
      properties: { oidc: { properties: { algorithms: { items: { enum: string[] } } } } };
    };
    expect(schema.properties.oidc.properties.algorithms.items.enum).toEqual([...DEFAULT_ALGORITHMS]);
  });
});

describe('the uninstall hook', () => {
  const hookOf = (objects: Rendered[]): Job => find(objects, 'Job', '-uninstall') as unknown as Job;
  const phases = (objects: Rendered[]): Record<string, string | undefined> =>
    Object.fromEntries(
      objects
        .filter((o) => o.metadata?.name === 'aiem-ai-engine-manager-uninstall')
        .map((o) => [String(o.kind), o.metadata?.annotations?.['helm.sh/hook']]),
    );

  test('keep by default: after the release is gone, a Job from the product image releases the engines', async () => {
    const objects = await render(MINIMAL_VALUES);
    expect(phases(objects)).toEqual({ ServiceAccount: 'post-delete', Role: 'post-delete', RoleBinding: 'post-delete', Job: 'post-delete' });
    const job = hookOf(objects);
    expect(job.metadata.annotations['helm.sh/hook-delete-policy']).toBe('before-hook-creation,hook-succeeded');
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 300 });
    const [hook] = job.spec.template.spec.containers;
    expect(hook?.image).toBe(container(objects, 'operator').image);
    expect(hook?.command).toEqual(['node', '/app/operator/src/uninstall/main.ts']);
    expect(envOf(hook as Container)).toEqual({
      AIEM_NAMESPACE: 'aiem-system',
      AIEM_LOG_LEVEL: 'info',
      AIEM_UNINSTALL_ENGINES: 'keep',
      AIEM_UNINSTALL_TIMEOUT_SECONDS: '240',
      AIEM_OPERATOR_POD_SELECTOR: Object.entries(deployment(objects, 'operator').spec.selector.matchLabels)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    });
    expect(hook?.securityContext).toEqual(container(objects, 'operator').securityContext);
    expect(job.spec.template.spec.serviceAccountName).toBe('aiem-ai-engine-manager-uninstall');
  });

  test('delete: before anything goes, with the time limit and the operator\'s placement and extra environment', async () => {
    const placement = { nodeSelector: { pool: 'system' }, tolerations: [{ key: 'system', operator: 'Exists' }] };
    const objects = await render({
      ...MINIMAL_VALUES,
      uninstall: { engines: 'delete', timeoutSeconds: 600 },
      operator: { ...placement, extraEnv: [{ name: 'HTTPS_PROXY', value: 'http://proxy:3128' }] },
    });
    expect(phases(objects)).toEqual({ ServiceAccount: 'pre-delete', Role: 'pre-delete', RoleBinding: 'pre-delete', Job: 'pre-delete' });
    const job = hookOf(objects);
    expect(job.spec.activeDeadlineSeconds).toBe(660);
    expect(job.spec.template.spec).toMatchObject(placement);
    expect(envOf(job.spec.template.spec.containers[0] as Container)).toMatchObject({
      AIEM_UNINSTALL_ENGINES: 'delete',
      AIEM_UNINSTALL_TIMEOUT_SECONDS: '600',
      HTTPS_PROXY: 'http://proxy:3128',
    });
  });

  test('keep is refused with CRDs deleted on uninstall, which would delete the engines; unknown choices are refused', async () => {
    expect(await refusal({ ...MINIMAL_VALUES, crds: { install: true, keep: false } })).toContain(
      'uninstall.engines=keep keeps engines and their data, but crds.keep=false deletes the CRDs',
    );
    await render({ ...MINIMAL_VALUES, crds: { install: true, keep: false }, uninstall: { engines: 'delete' } });
    expect(await refusal({ ...MINIMAL_VALUES, uninstall: { engines: 'orphan' } })).toContain("at '/uninstall/engines': value must be one of 'keep', 'delete'");
  });
});
