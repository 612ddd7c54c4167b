/**
 * A cluster kept in memory, for unit tests of the reconciler: it takes the operator's writes
 * (EngineWrites, as the KubeClient sends them) and shows them in its reads (EngineReads, as the
 * ClusterView would once its watches caught up), so that a reconcile runs without an apiserver.
 *
 * Modelled as the apiserver does it:
 * - one resourceVersion counter, bumped by every write; a patch that names a resourceVersion
 *   other than the stored one is refused with 409 Conflict, a patch of what is absent with 404;
 * - engines' status subresource: a patch of the engine ignores its status, a status patch
 *   changes status alone, a create drops the status sent with it (the API records its output
 *   fields in an annotation instead, which reads as the real view reads it: engineView);
 *   metadata.generation counts changes of the spec, and the start of a deletion;
 * - JSON merge patches (RFC 7386), null removing a field;
 * - creates of owned objects, refused with 409 when the name is taken; strategic merge patches of
 *   them as the operator sends them: the top-level fields it names replaced whole
 *   (`$patch: replace`), the rest merged as a JSON merge patch does (the apiserver merges a few
 *   lists by key, ownerReferences by uid; the operator only ever sends its own);
 * - what the view keeps: a reconcile reads each owned object trimmed as the real view keeps it
 *   (trim.ts), so that a reconcile reading a field the view drops fails here too;
 * - finalizers: an engine deleted while it has some keeps a deletionTimestamp until the last one
 *   is patched away; a claim deleted while a pod of its engine remains waits for the pod to go
 *   (the kubernetes.io/pvc-protection finalizer).
 *
 * Not modelled (tests keep away from them or play them by hand):
 * - field ownership (managedFields), and what the apiserver fills in (defaults, a Service's
 *   cluster IP);
 * - admission, schemas and validation: nothing is refused as invalid (no 422);
 * - the controllers and the kubelet: no StatefulSet makes pods or claims, nothing deletes a
 *   deleted StatefulSet's pods, a pod's status never changes by itself and a deleted pod is gone
 *   at once, a claim's capacity follows its request only when told. The test plays them
 *   (startPods, setPodStatus, removePod, collectGarbage, finishResize, loseClaim);
 * - watch lag: reads see every write at once (the real view's read-your-writes gives a
 *   reconcile the same), and nothing queues a reconcile: the test calls it.
 */
import type {
  KubernetesObject,
  V1ConfigMap,
  V1NetworkPolicy,
  V1ObjectMeta,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodStatus,
  V1Service,
  V1StatefulSet,
} from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';
import { API_VERSION, ENGINE_UID_LABEL } from '../../../shared/resources.ts';
import type { EngineKind, EngineKindName, EngineResource } from '../kinds/kind.ts';
import type { EngineWrites } from './client.ts';
import { engineView, type EngineReads, type OwnedObjects } from './cluster-view.ts';
import { trimClaim, trimPod, trimStatefulSet, trimToMetadata } from './trim.ts';

/** An apiserver's refusal, with its HTTP code where the client library puts it. */
export class MemoryApiError extends Error {
  readonly code: number;

  constructor(code: number, message: string) {
    super(message);
    this.name = 'MemoryApiError';
    this.code = code;
  }
}

type Json = { [key: string]: unknown };

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `patch` merged into `target` as a JSON merge patch (RFC 7386) does it; neither is changed. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const base: Json = isObject(target) ? target : {};
  const keys = new Set([...Object.keys(base), ...Object.keys(patch)]);
  return Object.fromEntries(
    [...keys]
      .filter((key) => patch[key] !== null)
      .map((key) => [key, Object.hasOwn(patch, key) ? mergePatch(base[key], patch[key]) : base[key]]),
  );
}

/** One namespaced collection of objects the operator owns, indexed by their engine's uid label. */
class MemoryObjects<T extends KubernetesObject> implements OwnedObjects<T> {
  private readonly objects = new Map<string, T>();

  get(name: string): T | undefined {
    return this.objects.get(name);
  }

  of(uid: string): T[] {
    return [...this.objects.values()].filter((o) => o.metadata?.labels?.[ENGINE_UID_LABEL] === uid);
  }

  /** The written object is already here: the apiserver's answer is what the store holds. */
  wrote(_object: T): void {}

  all(): T[] {
    return [...this.objects.values()];
  }

  put(object: T): T {
    this.objects.set(object.metadata?.name ?? '', object);
    return object;
  }

  remove(name: string): boolean {
    return this.objects.delete(name);
  }
}

/** The labels and annotations of a template, for the object made from it. */
function labelsOf(template: V1ObjectMeta | undefined): Pick<V1ObjectMeta, 'labels' | 'annotations'> {
  return { labels: { ...template?.labels }, annotations: { ...template?.annotations } };
}

type EngineStores = { [K in EngineKindName]?: Map<string, EngineResource<K>> };

/** The pod a kubelet reports ready: running, its containers answering their readiness probes. */
export const POD_READY: V1PodStatus = {
  phase: 'Running',
  conditions: [{ type: 'Ready', status: 'True' }],
};
/** Running, its engine not answering yet. */
export const POD_NOT_READY: V1PodStatus = {
  phase: 'Running',
  conditions: [{ type: 'Ready', status: 'False' }],
};
/** Waiting for a node. */
export const POD_PENDING: V1PodStatus = { phase: 'Pending' };

export class MemoryCluster {
  private readonly clock: () => Date;
  private version = 0;
  private uids = 0;
  private readonly engines: EngineStores = {};
  readonly statefulSets = new MemoryObjects<V1StatefulSet>();
  readonly pods = new MemoryObjects<V1Pod>();
  readonly claims = new MemoryObjects<V1PersistentVolumeClaim>();
  readonly services = new MemoryObjects<V1Service>();
  readonly configMaps = new MemoryObjects<V1ConfigMap>();
  readonly networkPolicies = new MemoryObjects<V1NetworkPolicy>();
  /** Every write the operator made, as `verb what/name`, in order. */
  readonly writes: string[] = [];
  readonly kube: EngineWrites;
  readonly view: EngineReads;

  constructor(clock: () => Date) {
    this.clock = clock;
    this.kube = this.writesApi();
    this.view = this.readsApi();
  }

  private nextVersion(): string {
    this.version += 1;
    return String(this.version);
  }

  private now(): string {
    return this.clock().toISOString();
  }

  private store<K extends EngineKindName>(kind: EngineKind<K>): Map<string, EngineResource<K>> {
    const stores: { [P in K]?: Map<string, EngineResource<P>> } = this.engines;
    const store = stores[kind.kind] ?? new Map<string, EngineResource<K>>();
    stores[kind.kind] = store;
    return store;
  }

  // ——— the engine's side: what users and the API write ———

  /** Creates the engine as the apiserver does: identity given, status dropped (the status subresource). */
  createEngine<K extends EngineKindName>(kind: EngineKind<K>, engine: EngineResource<K>): EngineResource<K> {
    if (this.store(kind).has(engine.metadata.name))
      throw new MemoryApiError(409, `${kind.plural} "${engine.metadata.name}" already exists`);
    this.uids += 1;
    const { status: _dropped, storedStatus: _none, ...rest } = engine;
    const created: EngineResource<K> = {
      ...structuredClone(rest),
      apiVersion: API_VERSION,
      kind: kind.kind,
      metadata: {
        namespace: 'default',
        ...structuredClone(engine.metadata),
        uid: `uid-${this.uids}`,
        generation: 1,
        resourceVersion: this.nextVersion(),
        creationTimestamp: this.now(),
      },
    };
    this.store(kind).set(created.metadata.name, created);
    return created;
  }

  /** The engine as the apiserver holds it (status subresource and all). */
  stored<K extends EngineKindName>(kind: EngineKind<K>, name: string): EngineResource<K> | undefined {
    return this.store(kind).get(name);
  }

  /** A merge patch of the engine's metadata and spec, as the API writes a user's change. */
  editEngine<K extends EngineKindName>(kind: EngineKind<K>, name: string, body: Json): EngineResource<K> {
    return this.patchEngine(kind, name, body);
  }

  /** A merge patch of the engine's status, as the API writes it (a resume's resumeTime). */
  writeStatus<K extends EngineKindName>(kind: EngineKind<K>, name: string, status: Json): EngineResource<K> {
    return this.patchStatus(kind, name, status);
  }

  /** Deletes the engine: at once without finalizers, else once they are gone. */
  deleteEngine<K extends EngineKindName>(kind: EngineKind<K>, name: string): void {
    const engine = this.existing(kind, name);
    if ((engine.metadata.finalizers ?? []).length === 0) {
      this.store(kind).delete(name);
      return;
    }
    if (engine.metadata.deletionTimestamp !== undefined) return;
    const deleting: EngineResource<K> = {
      ...engine,
      // The apiserver counts the start of a deletion as a change of generation.
      metadata: {
        ...engine.metadata,
        deletionTimestamp: this.now(),
        generation: (engine.metadata.generation ?? 1) + 1,
        resourceVersion: this.nextVersion(),
      },
    };
    this.store(kind).set(name, deleting);
  }

  private existing<K extends EngineKindName>(kind: EngineKind<K>, name: string): EngineResource<K> {
    const engine = this.store(kind).get(name);
    if (engine === undefined) throw new MemoryApiError(404, `${kind.plural} "${name}" not found`);
    return engine;
  }

  /** Refuses a write made on another version of the object than the one stored. */
  private static precondition(stored: EngineResource, body: Json): void {
    const metadata = body['metadata'];
    const wanted = isObject(metadata) ? metadata['resourceVersion'] : undefined;
    if (typeof wanted === 'string' && wanted !== stored.metadata.resourceVersion)
      throw new MemoryApiError(
        409,
        `Operation cannot be fulfilled on "${stored.metadata.name}": the object has been modified`,
      );
  }

  private patchEngine<K extends EngineKindName>(
    kind: EngineKind<K>,
    name: string,
    body: Json,
  ): EngineResource<K> {
    const stored = this.existing(kind, name);
    MemoryCluster.precondition(stored, body);
    const { status: _ignored, ...patch } = body;
    const merged = mergePatch(stored, patch) as EngineResource<K>;
    const specChanged = !isDeepStrictEqual(merged.spec, stored.spec);
    const finalizers = merged.metadata.finalizers ?? [];
    // What only the apiserver sets cannot be patched.
    const metadata = {
      ...merged.metadata,
      name,
      uid: stored.metadata.uid,
      ...(stored.metadata.creationTimestamp !== undefined
        ? { creationTimestamp: stored.metadata.creationTimestamp }
        : {}),
      generation: (stored.metadata.generation ?? 1) + (specChanged ? 1 : 0),
      resourceVersion: this.nextVersion(),
    };
    const engine: EngineResource<K> = { ...merged, metadata };
    if (engine.metadata.deletionTimestamp !== undefined && finalizers.length === 0) {
      this.store(kind).delete(name);
    } else this.store(kind).set(name, engine);
    return structuredClone(engine);
  }

  private patchStatus<K extends EngineKindName>(
    kind: EngineKind<K>,
    name: string,
    status: Json,
  ): EngineResource<K> {
    const stored = this.existing(kind, name);
    const merged = mergePatch(stored.status ?? {}, status) as EngineResource<K>['status'];
    const engine: EngineResource<K> = {
      ...stored,
      metadata: { ...stored.metadata, resourceVersion: this.nextVersion() },
      ...(merged !== undefined ? { status: merged } : {}),
    };
    this.store(kind).set(name, engine);
    return structuredClone(engine);
  }

  // ——— the cluster's side: what the StatefulSet controller, the kubelet and storage do ———

  /**
   * The StatefulSet controller and the volume provisioner at work: the set's pods up to its
   * replicas, each with the claims of its volume claim templates (bound, at the size asked),
   * reporting `status`. Pods already there are left as they are.
   */
  startPods(setName: string, status: V1PodStatus = POD_PENDING): V1Pod[] {
    const set = this.statefulSets.get(setName);
    if (set === undefined) throw new MemoryApiError(404, `statefulsets "${setName}" not found`);
    const started: V1Pod[] = [];
    for (let ordinal = 0; ordinal < (set.spec?.replicas ?? 1); ordinal += 1) {
      const name = `${setName}-${ordinal}`;
      for (const template of set.spec?.volumeClaimTemplates ?? []) this.provision(template, name);
      if (this.pods.get(name) === undefined) started.push(this.pods.put(this.podOf(set, name, status)));
    }
    return started;
  }

  /** The pod of the set named `name`, as its template makes it. */
  private podOf(set: V1StatefulSet, name: string, status: V1PodStatus): V1Pod {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: Object.assign({ name }, labelsOf(set.spec?.template.metadata), this.identity(undefined)),
      status: structuredClone(status),
    };
  }

  /** The claim of the pod `podName` from `template`, bound at the size asked, unless it exists. */
  private provision(template: V1PersistentVolumeClaim, podName: string): void {
    const name = `${template.metadata?.name ?? ''}-${podName}`;
    if (this.claims.get(name) !== undefined) return;
    const spec = structuredClone(template.spec ?? {});
    this.claims.put({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: Object.assign({ name }, labelsOf(template.metadata), this.identity(undefined)),
      spec,
      status: { phase: 'Bound', capacity: { storage: spec.resources?.requests?.['storage'] ?? '0' } },
    });
  }

  /** The object `name` of `objects` with `changes`, its metadata with `metadata`, at a new resourceVersion. */
  private revise<T extends KubernetesObject>(
    objects: MemoryObjects<T>,
    name: string,
    changes: (object: T) => Partial<T>,
    metadata: V1ObjectMeta = {},
  ): T {
    const object = objects.get(name);
    if (object === undefined) throw new MemoryApiError(404, `"${name}" not found`);
    const version = { resourceVersion: this.nextVersion() };
    const revised: T = Object.assign({}, object, changes(object), {
      metadata: Object.assign({}, object.metadata, metadata, version),
    });
    return objects.put(revised);
  }

  /** The kubelet's report of the pod. */
  setPodStatus(name: string, status: V1PodStatus): void {
    this.revise(this.pods, name, () => ({ status: structuredClone(status) }));
  }

  /** The pod is gone (its containers stopped); claims waiting for it go with it. */
  removePod(name: string): void {
    this.pods.remove(name);
    this.releaseClaims();
  }

  /** Whether a StatefulSet, at its replicas, has a pod of that name. */
  private wanted(podName: string): boolean {
    const match = /^(.*)-(\d+)$/.exec(podName);
    if (match === null) return false;
    const set = this.statefulSets.get(match[1] ?? '');
    return set !== undefined && Number(match[2]) < (set.spec?.replicas ?? 1);
  }

  /** The garbage collector and the StatefulSet controller: pods no set (at its replicas) wants are gone. */
  collectGarbage(): void {
    for (const pod of this.pods.all()) {
      const name = pod.metadata?.name ?? '';
      if (!this.wanted(name)) this.pods.remove(name);
    }
    this.releaseClaims();
  }

  /** The volume now holds what its claim asks for. */
  finishResize(name: string): void {
    this.revise(this.claims, name, (claim) => ({
      status: Object.assign({}, claim.status, {
        capacity: { storage: claim.spec?.resources?.requests?.['storage'] ?? '0' },
      }),
    }));
  }

  /** The claim's volume is gone (the claim reads `Lost`). */
  loseClaim(name: string): void {
    this.revise(this.claims, name, (claim) => ({
      status: Object.assign({}, claim.status, { phase: 'Lost' }),
    }));
  }

  /** Claims deleted while a pod of their engine remained go once none does (pvc-protection). */
  private releaseClaims(): void {
    for (const claim of this.claims.all()) {
      if (claim.metadata?.deletionTimestamp === undefined) continue;
      if (this.pods.of(claim.metadata.labels?.[ENGINE_UID_LABEL] ?? '').length === 0)
        this.claims.remove(claim.metadata.name ?? '');
    }
  }

  /** A create: the object stored with the identity the apiserver gives it; 409 when the name is taken. */
  private create<T extends KubernetesObject>(objects: MemoryObjects<KubernetesObject>, object: T): T {
    const name = object.metadata?.name ?? '';
    if (objects.get(name) !== undefined)
      throw new MemoryApiError(409, `${object.kind ?? ''} "${name}" already exists`);
    const answer: T = Object.assign(structuredClone(object), {
      metadata: Object.assign(structuredClone(object.metadata ?? {}), this.identity(undefined)),
    });
    objects.put(answer);
    return structuredClone(answer);
  }

  /** A strategic merge patch as the operator sends it (see the header); 404 when the object is absent. */
  private patchOwned(
    objects: MemoryObjects<KubernetesObject>,
    patch: KubernetesObject,
    replace: readonly string[],
  ): KubernetesObject {
    const name = patch.metadata?.name ?? '';
    const stored = objects.get(name);
    if (stored === undefined) throw new MemoryApiError(404, `${patch.kind ?? ''} "${name}" not found`);
    const { apiVersion: _apiVersion, kind: _kind, ...fields } = patch;
    // A field replaced whole is first removed, then merged in afresh.
    const cleared = mergePatch(stored, Object.fromEntries(replace.map((field) => [field, null])));
    const merged = mergePatch(cleared, fields);
    const metadata = isObject(merged) ? merged['metadata'] : undefined;
    const answer: KubernetesObject = Object.assign({}, merged, {
      metadata: Object.assign({}, metadata, this.identity(stored.metadata)),
    });
    objects.put(answer);
    return structuredClone(answer);
  }

  /** What the apiserver sets of an object it creates, or keeps of one it holds. */
  private identity(existing: V1ObjectMeta | undefined): V1ObjectMeta {
    this.uids += 1;
    return {
      uid: existing?.uid ?? `uid-${this.uids}`,
      resourceVersion: this.nextVersion(),
      creationTimestamp: existing?.creationTimestamp ?? this.clock(),
    };
  }

  // ——— the two faces the reconciler sees ———

  private writesApi(): EngineWrites {
    /** A call as the client makes it: logged, its refusal a rejected promise as a failed request's. */
    const call = <T>(entry: string, write: () => T): Promise<T> => {
      this.writes.push(entry);
      return new Promise((resolve) => {
        resolve(write());
      });
    };
    const remove =
      <T extends KubernetesObject>(what: string, objects: MemoryObjects<T>) =>
      (name: string): Promise<void> =>
        call(`delete ${what}/${name}`, () => {
          objects.remove(name);
        });
    const owned: Record<string, MemoryObjects<KubernetesObject>> = {
      StatefulSet: this.statefulSets,
      Service: this.services,
      ConfigMap: this.configMaps,
      NetworkPolicy: this.networkPolicies,
    };
    const collection = (kind: string | undefined): MemoryObjects<KubernetesObject> => {
      const objects = owned[kind ?? ''];
      if (objects === undefined) throw new MemoryApiError(404, `no ${kind ?? ''} here`);
      return objects;
    };
    return {
      patchEngine: (kind, name, body) =>
        call(`patch ${kind.plural}/${name}`, () => this.patchEngine(kind, name, isObject(body) ? body : {})),
      patchEngineStatus: (kind, name, status) =>
        call(`patch ${kind.plural}/${name}/status`, () =>
          this.patchStatus(kind, name, isObject(status) ? status : {}),
        ),
      create: <T extends KubernetesObject>(object: T): Promise<T> =>
        call(`create ${object.kind ?? ''}/${object.metadata?.name ?? ''}`, () =>
          this.create(collection(object.kind), object),
        ),
      patchOwned: <T extends KubernetesObject>(
        patch: KubernetesObject,
        replace: readonly string[],
      ): Promise<T> =>
        call(
          `patch ${patch.kind ?? ''}/${patch.metadata?.name ?? ''}`,
          // The answer is the object of the kind patched.
          () => this.patchOwned(collection(patch.kind), patch, replace) as T,
        ),
      growClaim: (name, bytes) =>
        call(`patch PersistentVolumeClaim/${name}`, () => {
          const grown = this.revise(this.claims, name, (claim) => ({
            spec: Object.assign({}, claim.spec, {
              resources: Object.assign({}, claim.spec?.resources, {
                requests: { storage: bytes.toString() },
              }),
            }),
          }));
          return structuredClone(grown);
        }),
      deletePod: remove('Pod', this.pods),
      // Claims here have no owner, so orphaning them changes nothing but the record of the call.
      deleteStatefulSet: (name, dependents) =>
        call(
          `delete StatefulSet/${name}${dependents === 'orphan' ? ' orphaning its dependents' : ''}`,
          () => {
            this.statefulSets.remove(name);
          },
        ),
      deleteService: remove('Service', this.services),
      deleteConfigMap: remove('ConfigMap', this.configMaps),
      deleteNetworkPolicy: remove('NetworkPolicy', this.networkPolicies),
      deleteClaim: (name) =>
        call(`delete PersistentVolumeClaim/${name}`, () => {
          if (this.claims.get(name) !== undefined)
            this.revise(this.claims, name, () => ({}), { deletionTimestamp: this.clock() });
          this.releaseClaims();
        }),
    };
  }

  private readsApi(): EngineReads {
    return {
      engine: (kind, name) => {
        const engine = this.stored(kind, name);
        return engine === undefined ? undefined : engineView(structuredClone(engine));
      },
      wroteEngine: (_kind, engine) => engineView(engine),
      statefulSets: trimmedReads(this.statefulSets, trimStatefulSet),
      pods: trimmedReads(this.pods, trimPod),
      claims: trimmedReads(this.claims, trimClaim),
      services: trimmedReads(this.services, trimToMetadata),
      configMaps: trimmedReads(this.configMaps, trimToMetadata),
      networkPolicies: trimmedReads(this.networkPolicies, trimToMetadata),
    };
  }
}

/** A collection as reconciles read it: each object as the real view keeps it (trim.ts). */
function trimmedReads<T extends KubernetesObject>(
  objects: MemoryObjects<T>,
  trim: (object: T) => T,
): OwnedObjects<T> {
  return {
    get: (name) => {
      const object = objects.get(name);
      return object === undefined ? undefined : trim(object);
    },
    of: (uid) => objects.of(uid).map(trim),
    wrote: (object) => {
      objects.wrote(object);
    },
  };
}
