/**
 * What each process asks of the Kubernetes API, derived from its sources: every call of a
 * client-node API method found in them maps to the RBAC permissions it needs. A call the table
 * does not know fails the chart tests, so a new call cannot ship without its permission.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { ROOT } from './helm.ts';

/** `verb` on `resource` (`plural` or `plural/subresource`) of API `group`, or on one object by name. */
export interface Permission {
  group: string;
  resource: string;
  verb: string;
  name?: string;
  /** A resource of no namespace (granted by a ClusterRole, not the release's Role). */
  cluster?: true;
}

/** A stable text form: `verb resource.group[/name]`. */
export function permissionKey(p: Permission): string {
  const [plural = '', subresource] = p.resource.split('/');
  const resource = p.group === '' ? plural : `${plural}.${p.group}`;
  return `${p.verb} ${resource}${subresource === undefined ? '' : `/${subresource}`}${p.name === undefined ? '' : ` name=${p.name}`}`;
}

const GROUP = 'engine.h2o.ai';
/** The fourteen kinds the gateway stores, and the three the operator runs. */
export const ALL_KINDS = [
  'daiengines',
  'h2oengines',
  'notebookengines',
  'daiengineprofiles',
  'h2oengineprofiles',
  'notebookengineprofiles',
  'daiengineversions',
  'h2oengineversions',
  'notebookengineimages',
  'sandboxengines',
  'sandboxengineimages',
  'sandboxenginetemplates',
  'processes',
  'ports',
] as const;
export const ENGINE_KINDS = ['daiengines', 'h2oengines', 'notebookengines', 'sandboxengines'] as const;
/** The operator's leader-election Lease (operator/src/main.ts). */
export const LEASE = 'ai-engine-manager-operator';

const on = (
  group: string,
  resources: readonly string[],
  verbs: readonly string[],
  name?: string,
): Permission[] =>
  resources.flatMap((resource) =>
    verbs.map((verb) => ({ group, resource, verb, ...(name === undefined ? {} : { name }) })),
  );

type Table = Readonly<Record<string, Permission[]>>;

/**
 * gateway/src/store/: the API's resources as custom resources of every kind (store.ts; the list
 * calls also feed the watch caches, watch-cache.ts), engines' pod logs through the pod log API
 * (pod-logs.ts), and the quota locks every replica honours (lease-lock.ts).
 */
const GATEWAY_CALLS: Table = {
  createNamespacedCustomObject: on(GROUP, ALL_KINDS, ['create']),
  getNamespacedCustomObject: on(GROUP, ALL_KINDS, ['get']),
  listNamespacedCustomObject: on(GROUP, ALL_KINDS, ['list', 'watch']),
  replaceNamespacedCustomObject: on(GROUP, ALL_KINDS, ['update']),
  patchNamespacedCustomObject: on(GROUP, ALL_KINDS, ['patch']),
  patchNamespacedCustomObjectStatus: on(
    GROUP,
    ALL_KINDS.map((k) => `${k}/status`),
    ['patch'],
  ),
  deleteNamespacedCustomObject: on(GROUP, ALL_KINDS, ['delete']),
  listNamespacedPod: on('', ['pods'], ['list']),
  readNamespacedPodLog: on('', ['pods/log'], ['get']),
  // The Driverless AI license (license/license-source.ts), by its name in the chart's values.
  readNamespacedSecret: on('', ['secrets'], ['get'], 'dai-license'),
  // Sandbox ports (gateway/src/sandbox/port-service.ts): each port's Service and Ingress, and
  // the readiness of the engine's pod.
  readNamespacedPod: on('', ['pods'], ['get']),
  createNamespacedService: on('', ['services'], ['create']),
  readNamespacedService: on('', ['services'], ['get']),
  createNamespacedIngress: on('networking.k8s.io', ['ingresses'], ['create']),
  readNamespacedIngress: on('networking.k8s.io', ['ingresses'], ['get']),
  deleteNamespacedIngress: on('networking.k8s.io', ['ingresses'], ['delete']),
  // The engine access proxy (access/engine-targets.ts): the ready addresses of engines' Services.
  listNamespacedEndpointSlice: on('discovery.k8s.io', ['endpointslices'], ['list', 'watch']),
  // Quota locks (lease-lock.ts): a Lease per user and profile, named from a hash of the key.
  readNamespacedLease: on('coordination.k8s.io', ['leases'], ['get']),
  createNamespacedLease: on('coordination.k8s.io', ['leases'], ['create']),
  replaceNamespacedLease: on('coordination.k8s.io', ['leases'], ['update']),
};

/** Kueue's API group, and the kinds GPU queueing writes (operator/src/queueing/). */
const KUEUE = 'kueue.x-k8s.io';
const KUEUE_CLUSTER_KINDS = ['resourceflavors', 'clusterqueues', 'workloadpriorityclasses'] as const;
const cluster = (permissions: Permission[]): Permission[] => permissions.map((p) => ({ ...p, cluster: true }));

/**
 * operator/src: the list calls feed the watched copies (kube/cluster-view.ts), which also watch;
 * reconciles read nothing else; the Lease calls name the one Lease. With GPU queueing configured
 * (operator/src/queueing/), it also watches Kueue's Workloads, reads queue positions from Kueue's
 * visibility API (a GET of a LocalQueue's pendingworkloads), and makes the LocalQueues in the
 * namespace and the flavors, ClusterQueues and priority classes of the cluster: it creates them,
 * reads one that exists to compare, and patches it.
 */
const OPERATOR_CALLS: Table = {
  listNamespacedCustomObject: [
    ...on(GROUP, ENGINE_KINDS, ['list', 'watch']),
    ...on(KUEUE, ['workloads'], ['list', 'watch']),
    ...on(`visibility.${KUEUE}`, ['localqueues/pendingworkloads'], ['get']),
  ],
  patchNamespacedCustomObject: [...on(GROUP, ENGINE_KINDS, ['patch']), ...on(KUEUE, ['localqueues'], ['patch'])],
  createNamespacedCustomObject: on(KUEUE, ['localqueues'], ['create']),
  getNamespacedCustomObject: on(KUEUE, ['localqueues'], ['get']),
  createClusterCustomObject: cluster(on(KUEUE, KUEUE_CLUSTER_KINDS, ['create'])),
  getClusterCustomObject: cluster(on(KUEUE, KUEUE_CLUSTER_KINDS, ['get'])),
  patchClusterCustomObject: cluster(on(KUEUE, KUEUE_CLUSTER_KINDS, ['patch'])),
  patchNamespacedCustomObjectStatus: on(
    GROUP,
    ENGINE_KINDS.map((k) => `${k}/status`),
    ['patch'],
  ),
  listNamespacedStatefulSet: on('apps', ['statefulsets'], ['list', 'watch']),
  patchNamespacedStatefulSet: on('apps', ['statefulsets'], ['patch']),
  deleteNamespacedStatefulSet: on('apps', ['statefulsets'], ['delete']),
  listNamespacedService: on('', ['services'], ['list', 'watch']),
  patchNamespacedService: on('', ['services'], ['patch']),
  deleteNamespacedService: on('', ['services'], ['delete']),
  listNamespacedConfigMap: on('', ['configmaps'], ['list', 'watch']),
  patchNamespacedConfigMap: on('', ['configmaps'], ['patch']),
  deleteNamespacedConfigMap: on('', ['configmaps'], ['delete']),
  listNamespacedNetworkPolicy: on('networking.k8s.io', ['networkpolicies'], ['list', 'watch']),
  patchNamespacedNetworkPolicy: on('networking.k8s.io', ['networkpolicies'], ['patch']),
  deleteNamespacedNetworkPolicy: on('networking.k8s.io', ['networkpolicies'], ['delete']),
  listNamespacedPod: on('', ['pods'], ['list', 'watch']),
  deleteNamespacedPod: on('', ['pods'], ['delete']),
  listNamespacedPersistentVolumeClaim: on('', ['persistentvolumeclaims'], ['list', 'watch']),
  patchNamespacedPersistentVolumeClaim: on('', ['persistentvolumeclaims'], ['patch']),
  deleteNamespacedPersistentVolumeClaim: on('', ['persistentvolumeclaims'], ['delete']),
  readNamespacedLease: on('coordination.k8s.io', ['leases'], ['get'], LEASE),
  replaceNamespacedLease: on('coordination.k8s.io', ['leases'], ['update'], LEASE),
  createNamespacedLease: on('coordination.k8s.io', ['leases'], ['create']),
};

/**
 * What the gateway asks for besides the typed API calls: client-node's `Exec` opens the pods/exec
 * websocket (gateway/src/sandbox/pod-exec.ts), which needs `get` and, since Kubernetes 1.35 checks
 * websocket upgrades as creates, `create`.
 */
const GATEWAY_STREAMS: readonly (readonly [RegExp, Permission[]])[] = [
  [/new Exec\(/, on('', ['pods/exec'], ['create', 'get'])],
];

/**
 * What the gateway reads besides its typed calls' kinds: sandbox metrics read PodMetrics through
 * getNamespacedCustomObject, of another group than the stored kinds (sandbox/metrics-service.ts).
 */
const GATEWAY_EXTRA: Permission[] = on('metrics.k8s.io', ['pods'], ['get']);

/**
 * What the operator needs beyond single calls: it creates the desired ConfigMap, NetworkPolicy,
 * Service and StatefulSet through the generic KubernetesObjectApi.create (and patches them through
 * the typed calls above), and their owner references with blockOwnerDeletion need the right to
 * update the engine's finalizers where the OwnerReferencesPermissionEnforcement admission plugin
 * runs.
 */
const OPERATOR_APPLY: Permission[] = [
  ...on('', ['configmaps', 'services'], ['create', 'patch']),
  ...on('networking.k8s.io', ['networkpolicies'], ['create', 'patch']),
  ...on('apps', ['statefulsets'], ['create', 'patch']),
  ...on(
    GROUP,
    ENGINE_KINDS.map((k) => `${k}/finalizers`),
    ['update'],
  ),
];

/** Every method of client-node's typed API classes (the generic KubernetesObjectApi aside). */
function apiMethodNames(): Set<string> {
  const names = new Set<string>();
  for (const [exported, value] of Object.entries(k8s)) {
    if (!exported.endsWith('Api') || exported === 'KubernetesObjectApi' || typeof value !== 'function') continue;
    const prototype = (value as { prototype?: object }).prototype;
    if (prototype === undefined) continue;
    for (const name of Object.getOwnPropertyNames(prototype)) if (name !== 'constructor') names.add(name);
  }
  return names;
}

/** The production sources under these folders (no tests), except those under `except`. */
export function sources(folders: readonly string[], except: readonly string[] = []): Map<string, string> {
  const files = new Map<string, string>();
  const skipped = new Set(except.map((folder) => join(ROOT, folder)));
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!skipped.has(path)) walk(path);
      }
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
        files.set(relative(ROOT, path), readFileSync(path, 'utf8'));
    }
  };
  for (const folder of folders) walk(join(ROOT, folder));
  return files;
}

/** What one process needs, and any API call found that the table does not know. */
export interface Needs {
  permissions: Permission[];
  /** `file: method` of calls without an entry in the table. */
  unknown: string[];
  /** The API methods found in the sources. */
  calls: string[];
}

function needsOf(
  folders: readonly string[],
  table: Table,
  extra: Permission[],
  more: { streams: readonly (readonly [RegExp, Permission[]])[]; except: readonly string[] },
): Needs {
  const { streams, except } = more;
  const api = apiMethodNames();
  const calls = new Set<string>();
  const unknown: string[] = [];
  const streamed: Permission[] = [];
  for (const [file, text] of sources(folders, except)) {
    for (const [pattern, permissions] of streams) if (pattern.test(text)) streamed.push(...permissions);
    for (const match of text.matchAll(/\.(\w+)\(/g)) {
      const method = match[1] ?? '';
      if (!api.has(method)) continue;
      calls.add(method);
      if (!(method in table)) unknown.push(`${file}: ${method}`);
    }
  }
  const permissions = [...calls].flatMap((method) => table[method] ?? []);
  const unique = new Map([...permissions, ...streamed, ...extra].map((p) => [permissionKey(p), p]));
  return { permissions: [...unique.values()], unknown, calls: [...calls].sort() };
}

/** What the gateway process calls (gateway/src and shared/). */
export function gatewayNeeds(): Needs {
  return needsOf(['gateway/src', 'shared'], GATEWAY_CALLS, GATEWAY_EXTRA, { streams: GATEWAY_STREAMS, except: [] });
}

/** The uninstall hook's sources: a process of its own, under its own ServiceAccount. */
const UNINSTALL_SOURCES = 'operator/src/uninstall';

/**
 * What the operator process calls in the release namespace (operator/src and shared/, the
 * uninstall hook aside); what it calls of cluster-wide resources is in operatorClusterNeeds.
 */
export function operatorNeeds(): Needs {
  const needs = allOperatorNeeds();
  return { ...needs, permissions: needs.permissions.filter((p) => p.cluster !== true) };
}

/** What the operator calls of resources of no namespace (Kueue's, with queueing): a ClusterRole's to grant. */
export function operatorClusterNeeds(): Needs {
  const needs = allOperatorNeeds();
  return { ...needs, permissions: needs.permissions.filter((p) => p.cluster === true) };
}

/** Needs but for what GPU queueing calls of Kueue: what the operator calls when queueing is off. */
export function withoutQueueing(needs: Needs): Needs {
  return { ...needs, permissions: needs.permissions.filter((p) => !p.group.endsWith(KUEUE)) };
}

function allOperatorNeeds(): Needs {
  return needsOf(['operator/src', 'shared'], OPERATOR_CALLS, OPERATOR_APPLY, { streams: [], except: [UNINSTALL_SOURCES] });
}

/**
 * operator/src/uninstall/kube.ts: engines listed, then deleted or patched (their finalizer taken
 * off), and the operator's pods listed.
 */
const UNINSTALL_CALLS: Table = {
  listNamespacedCustomObject: on(GROUP, ENGINE_KINDS, ['list']),
  deleteNamespacedCustomObject: on(GROUP, ENGINE_KINDS, ['delete']),
  patchNamespacedCustomObject: on(GROUP, ENGINE_KINDS, ['patch']),
  listNamespacedPod: on('', ['pods'], ['list']),
};

/** What the uninstall hook's process calls (operator/src/uninstall). */
export function uninstallNeeds(): Needs {
  return needsOf([UNINSTALL_SOURCES], UNINSTALL_CALLS, [], { streams: [], except: [] });
}

/** A Role's rule as rendered. */
interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs?: string[];
}

/** Every permission a Role's rules grant, one per group, resource, verb and name. */
export function granted(role: Readonly<Record<string, unknown>>): Permission[] {
  return ((role['rules'] ?? []) as Rule[]).flatMap((rule) =>
    (rule.apiGroups ?? []).flatMap((group) =>
      (rule.resources ?? []).flatMap((resource) =>
        (rule.verbs ?? []).flatMap((verb) =>
          rule.resourceNames === undefined
            ? [{ group, resource, verb }]
            : rule.resourceNames.map((name) => ({ group, resource, verb, name })),
        ),
      ),
    ),
  );
}
