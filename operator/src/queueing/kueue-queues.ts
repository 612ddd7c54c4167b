/**
 * Makes the Kueue objects an engine's queue needs exist, on demand: the first time an engine of a
 * workspace must queue, its workspace's ClusterQueue and LocalQueue, the flavors, and the priority
 * class of its profile's queue priority are created, or brought in line with the configuration
 * where they exist and differ (the configuration changed since they were written). What has been
 * made so is remembered, so that an engine reconciled again costs no request.
 */
import { isDeepStrictEqual } from 'node:util';
import { statusCode } from '../../../shared/watched-collection.ts';
import type { KubeClient } from '../kube/client.ts';
import type { QueueingConfig } from './config.ts';
import {
  clusterQueue,
  coveredGpuResources,
  localQueue,
  resourceFlavors,
  workloadPriorityClass,
  type EngineQueue,
  type KueueObject,
} from './kueue-objects.ts';

/** The calls the queues are made with: the KubeClient's, or a test's. */
export type KueueWrites = Pick<KubeClient, 'createKueueObject' | 'readKueueObject' | 'patchKueueObject'>;

type Json = Record<string, unknown>;
const isJson = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Whether `existing` holds everything `wanted` says, whatever else it holds: the apiserver adds
 * Kueue's defaults (a ClusterQueue's queueing strategy, flavor fungibility…), which are no
 * difference.
 */
export function holds(existing: unknown, wanted: unknown): boolean {
  if (Array.isArray(wanted))
    return (
      Array.isArray(existing) &&
      existing.length === wanted.length &&
      wanted.every((item, index) => holds(existing[index], item))
    );
  if (isJson(wanted))
    return isJson(existing) && Object.entries(wanted).every(([k, v]) => holds(existing[k], v));
  return isDeepStrictEqual(existing, wanted);
}

/** The fields of a Kueue object the operator decides: its labels, spec, value and description. */
function decided(object: KueueObject): Json {
  const { apiVersion: _version, kind: _kind, metadata, ...fields } = object;
  return { metadata: { labels: metadata.labels }, ...fields };
}

/**
 * The merge patch that makes `existing` what `wanted` decides: the decided fields, and null for
 * each field of the spec the operator no longer sets (a cohort taken out of the configuration),
 * which Kueue then defaults again where it has a default.
 */
export function patchFor(existing: Json, wanted: KueueObject): Json {
  const body = decided(wanted);
  const spec = existing['spec'];
  if (!isJson(spec) || wanted.spec === undefined) return body;
  const dropped = Object.keys(spec).filter((key) => !(key in (wanted.spec ?? {})));
  return { ...body, spec: { ...Object.fromEntries(dropped.map((key) => [key, null])), ...wanted.spec } };
}

export class KueueQueues {
  private readonly config: QueueingConfig;
  private readonly namespace: string;
  private readonly kube: KueueWrites;
  /** What was last made to exist, as JSON, by kind and name. */
  private readonly ensured = new Map<string, string>();
  /** Writes under way, by kind and name: reconciles of one workspace's engines wait for the same one. */
  private readonly writing = new Map<string, Promise<void>>();
  /** The GPU resources each workspace's ClusterQueue covers (what its engines asked for, and what it covered before). */
  private readonly covered = new Map<string, Set<string>>();
  /** Queues known to be complete, by workspace, priority and GPU resources: no work at all. */
  private readonly ready = new Set<string>();

  constructor(options: { config: QueueingConfig; namespace: string; kube: KueueWrites }) {
    this.config = options.config;
    this.namespace = options.namespace;
    this.kube = options.kube;
  }

  /** Makes everything the queue needs exist before an engine is put in it. */
  async ensure(queue: EngineQueue): Promise<void> {
    const key = JSON.stringify([queue.workspace, queue.priority, queue.gpuResources]);
    if (this.ready.has(key)) return;
    for (const flavor of resourceFlavors(this.config)) await this.ensureObject(flavor);
    await this.ensureObject(workloadPriorityClass(queue.priority));
    await this.ensureClusterQueue(queue);
    await this.ensureObject(localQueue({ workspace: queue.workspace, namespace: this.namespace }));
    this.ready.add(key);
  }

  /** The workspace's ClusterQueue, covering the GPU resources of `queue` besides those it covered. */
  private async ensureClusterQueue(queue: EngineQueue): Promise<void> {
    const where = { workspace: queue.workspace, namespace: this.namespace };
    let covered = this.covered.get(queue.workspace);
    if (covered === undefined) {
      const existing = await this.kube.readKueueObject(
        'ClusterQueue',
        clusterQueue(this.config, where, []).metadata.name,
      );
      covered = this.covered.get(queue.workspace) ?? new Set(existing ? coveredGpuResources(existing) : []);
      this.covered.set(queue.workspace, covered);
    }
    for (const resource of queue.gpuResources) covered.add(resource);
    await this.ensureObject(clusterQueue(this.config, where, [...covered].sort()));
  }

  private async ensureObject(wanted: KueueObject): Promise<void> {
    const key = `${wanted.kind}/${wanted.metadata.name}`;
    const text = JSON.stringify(wanted);
    if (this.ensured.get(key) === text) return;
    const pending = this.writing.get(key);
    if (pending !== undefined) {
      await pending;
      if (this.ensured.get(key) === text) return;
    }
    const write = this.write(wanted).finally(() => this.writing.delete(key));
    this.writing.set(key, write);
    await write;
    this.ensured.set(key, text);
  }

  /** Creates the object, or patches the one there when it does not hold what is wanted. */
  private async write(wanted: KueueObject): Promise<void> {
    try {
      await this.kube.createKueueObject(wanted);
      return;
    } catch (error: unknown) {
      if (statusCode(error) !== 409) throw error;
    }
    const existing = await this.kube.readKueueObject(wanted.kind, wanted.metadata.name);
    if (existing === undefined)
      throw new Error(`${wanted.kind} "${wanted.metadata.name}" vanished while being written`);
    if (!holds(existing, decided(wanted)))
      await this.kube.patchKueueObject(wanted.kind, wanted.metadata.name, patchFor(existing, wanted));
  }
}
