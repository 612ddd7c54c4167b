/**
 * The Kueue objects queueing needs, as pure functions of the configuration: a ResourceFlavor per
 * GPU class (and one for engines without GPUs), a ClusterQueue and a LocalQueue per workspace,
 * and a WorkloadPriorityClass per queue priority in use; and the labels that put an engine's
 * StatefulSet in its workspace's queue. Kueue (v1beta2) admits the StatefulSet's pods as one
 * group once its ClusterQueue has the quota.
 */
import { createHash } from 'node:crypto';
import { CPU_ONLY_FLAVOR, quotaOf, type QueueingConfig } from './config.ts';

export const KUEUE_GROUP = 'kueue.x-k8s.io';
export const KUEUE_VERSION = 'v1beta2';
const API_VERSION = `${KUEUE_GROUP}/${KUEUE_VERSION}`;

/** The label that puts a StatefulSet's pods in a LocalQueue (Kueue reads it when the set is created). */
export const QUEUE_LABEL = 'kueue.x-k8s.io/queue-name';
/** The label naming the WorkloadPriorityClass of a StatefulSet's pod group. */
export const PRIORITY_CLASS_LABEL = 'kueue.x-k8s.io/priority-class';
/** The labels a queued StatefulSet carries, and keeps for its life (Kueue refuses changes while it runs). */
export const QUEUE_LABELS: readonly string[] = [QUEUE_LABEL, PRIORITY_CLASS_LABEL];

/** On every Kueue object the operator writes: who manages it (kubectl and uninstallers read it). */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'ai-engine-manager' } as const;

/**
 * cpu and memory are covered by every queue so that Kueue can admit engines at all, with a quota
 * that never binds: the GPUs are what is queued for. Kueue sums quotas across a cohort in 64-bit
 * integers (cpu in millicores), so the amounts stay far below that for thousands of workspaces.
 */
const UNBOUND = { cpu: '100k', memory: '64Ti' } as const;

/** The Kueue kinds the operator writes, with their plural and whether they live in a namespace. */
export const KUEUE_KINDS = {
  ResourceFlavor: { plural: 'resourceflavors', namespaced: false },
  ClusterQueue: { plural: 'clusterqueues', namespaced: false },
  LocalQueue: { plural: 'localqueues', namespaced: true },
  WorkloadPriorityClass: { plural: 'workloadpriorityclasses', namespaced: false },
} as const;
export type KueueKind = keyof typeof KUEUE_KINDS;

/** A Kueue object as the operator writes it: its spec (or a priority class's value and description). */
export interface KueueObject {
  apiVersion: string;
  kind: KueueKind;
  metadata: { name: string; namespace?: string; labels: Record<string, string> };
  spec?: Record<string, unknown>;
  value?: number;
  description?: string;
}

function kueueObject(
  kind: KueueKind,
  name: string,
  fields: Omit<KueueObject, 'apiVersion' | 'kind' | 'metadata'>,
): KueueObject {
  return { apiVersion: API_VERSION, kind, metadata: { name, labels: { ...MANAGED_BY } }, ...fields };
}

/** The longest label value Kubernetes takes; queue names are label values. */
const MAX_LABEL = 63;

/**
 * The ClusterQueue and LocalQueue of a workspace, `workspace-<id>`: the id as it is, or, for ids
 * too long for a label value with the prefix, shortened with a digest of the whole id.
 */
export function queueName(workspace: string): string {
  const name = `workspace-${workspace}`;
  if (name.length <= MAX_LABEL) return name;
  const digest = createHash('sha256').update(workspace).digest('hex').slice(0, 10);
  return `${name.slice(0, MAX_LABEL - digest.length - 1).replace(/-+$/, '')}-${digest}`;
}

/** The queue as the API names it: its workspace's. */
export function apiQueueName(workspace: string): string {
  return `workspaces/${workspace}`;
}

/** `engine-queue-priority-<value>`; a negative value reads `minus-N` (a name holds no "-" at its start). */
export function priorityClassName(value: number): string {
  return `engine-queue-priority-${value < 0 ? `minus-${-value}` : String(value)}`;
}

/** The flavors: engines without GPUs first (so that they never take a GPU class's node labels), then the classes in order. */
export function resourceFlavors(config: QueueingConfig): KueueObject[] {
  return [
    kueueObject('ResourceFlavor', CPU_ONLY_FLAVOR, { spec: {} }),
    ...config.gpuClasses.map((gpuClass) =>
      kueueObject('ResourceFlavor', gpuClass.name, {
        spec: {
          nodeLabels: gpuClass.nodeLabels,
          ...(gpuClass.tolerations.length > 0 ? { tolerations: gpuClass.tolerations } : {}),
        },
      }),
    ),
  ];
}

/** The priority class of engines whose profile has this queue priority. */
export function workloadPriorityClass(value: number): KueueObject {
  return kueueObject('WorkloadPriorityClass', priorityClassName(value), {
    value,
    description: `Engines whose profile has queue priority ${value}.`,
  });
}

/**
 * The workspace's ClusterQueue: cpu and memory unbound, `gpuResources` (the GPU resource names
 * its engines ask for) with the workspace's quota per class, none on the flavor of engines
 * without GPUs. An engine of a higher queue priority preempts lower ones of the workspace; a
 * workspace takes back what it lent to its cohort, preempting the borrowers.
 */
export function clusterQueue(
  config: QueueingConfig,
  where: { workspace: string; namespace: string },
  gpuResources: readonly string[],
): KueueObject {
  const quota = quotaOf(config, where.workspace);
  const amounts = (gpus: number): { name: string; nominalQuota: string }[] => [
    { name: 'cpu', nominalQuota: UNBOUND.cpu },
    { name: 'memory', nominalQuota: UNBOUND.memory },
    ...gpuResources.map((name) => ({ name, nominalQuota: String(gpus) })),
  ];
  return kueueObject('ClusterQueue', queueName(where.workspace), {
    spec: {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': where.namespace } },
      ...(config.cohort === '' ? {} : { cohortName: config.cohort }),
      resourceGroups: [
        {
          coveredResources: ['cpu', 'memory', ...gpuResources],
          flavors: [
            { name: CPU_ONLY_FLAVOR, resources: amounts(0) },
            ...config.gpuClasses.map((c) => ({ name: c.name, resources: amounts(quota[c.name] ?? 0) })),
          ],
        },
      ],
      preemption: { withinClusterQueue: 'LowerPriority', reclaimWithinCohort: 'Any' },
    },
  });
}

/** The GPU resource names a ClusterQueue covers (all it covers but cpu and memory). */
export function coveredGpuResources(queue: { spec?: unknown }): string[] {
  const spec = queue.spec;
  if (typeof spec !== 'object' || spec === null || !('resourceGroups' in spec)) return [];
  const groups = spec.resourceGroups;
  if (!Array.isArray(groups)) return [];
  return groups
    .flatMap((group: unknown) =>
      typeof group === 'object' &&
      group !== null &&
      'coveredResources' in group &&
      Array.isArray(group.coveredResources)
        ? (group.coveredResources as unknown[])
        : [],
    )
    .filter((name): name is string => typeof name === 'string' && name !== 'cpu' && name !== 'memory');
}

/** The workspace's LocalQueue in the engines' namespace, feeding its ClusterQueue. */
export function localQueue(where: { workspace: string; namespace: string }): KueueObject {
  const name = queueName(where.workspace);
  const object = kueueObject('LocalQueue', name, { spec: { clusterQueue: name } });
  return { ...object, metadata: { ...object.metadata, namespace: where.namespace } };
}

/** Where an engine waits: its workspace's queue, at its profile's queue priority. */
export interface EngineQueue {
  workspace: string;
  priority: number;
  /** The GPU resource names the engine asks for (none for an engine without GPUs). */
  gpuResources: string[];
}

/** Resources a pod asks for that are not GPUs (nor anything queued). */
const NOT_GPUS = new Set(['cpu', 'memory', 'ephemeral-storage']);

/** The GPU resources among what an engine's pod requests. */
export function gpuResourcesOf(requests: Readonly<Record<string, unknown>> | undefined): string[] {
  return Object.keys(requests ?? {})
    .filter((name) => !NOT_GPUS.has(name) && !name.startsWith('hugepages-'))
    .sort();
}

/**
 * The queue of an engine, or none when it does not wait in one: queueing is off, the engine asks
 * for no GPU (unless every engine queues), or it belongs to no workspace.
 */
export function engineQueue(
  config: QueueingConfig | undefined,
  engine: { workspace: string | undefined; gpus: number; priority: number; gpuResources: string[] },
): EngineQueue | undefined {
  if (config === undefined || engine.workspace === undefined || engine.workspace === '') return undefined;
  if (config.engines === 'gpu' && engine.gpus <= 0) return undefined;
  return { workspace: engine.workspace, priority: engine.priority, gpuResources: engine.gpuResources };
}

/** The labels that put an engine's StatefulSet in its queue, at its priority. */
export function queueLabels(queue: EngineQueue): Record<string, string> {
  return {
    [QUEUE_LABEL]: queueName(queue.workspace),
    [PRIORITY_CLASS_LABEL]: priorityClassName(queue.priority),
  };
}

/** The queue labels a StatefulSet carries (none for one outside the queues). */
export function queueLabelsOf(
  set: { metadata?: { labels?: Record<string, string> } } | undefined,
): Record<string, string> {
  const labels = set?.metadata?.labels ?? {};
  return Object.fromEntries(
    QUEUE_LABELS.flatMap((key) => (labels[key] === undefined ? [] : [[key, labels[key]]])),
  );
}

/**
 * The engine's StatefulSet in a queue: with the queue's labels, and keeping its data volume when
 * it is deleted — a queued engine is paused by deleting its StatefulSet (scaled to zero, Kueue
 * 0.17 may leave its Workload holding the quota), and its volume goes only with the engine.
 */
export function queuedStatefulSet<
  T extends { metadata?: { labels?: Record<string, string> }; spec?: object },
>(set: T, labels: Record<string, string>): T {
  if (labels[QUEUE_LABEL] === undefined) return set;
  return {
    ...set,
    metadata: { ...set.metadata, labels: { ...set.metadata?.labels, ...labels } },
    spec: {
      ...set.spec,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
    },
  };
}
