/**
 * What the operator reads: watch-fed copies of its engines and of everything they own
 * (StatefulSets, pods, volume claims, Services, ConfigMaps), so that a reconcile reads memory,
 * not the apiserver. Each copy keeps only what the operator reads of an object (no
 * managedFields, no pod templates, no file contents), and owned objects are indexed by their
 * engine's uid.
 *
 * A copy may be a moment behind the operator's own writes, so every write's answer is noted
 * here and read instead of the copy until the copy has caught up (read-your-writes); the events
 * of the operator's own status writes queue nothing, since nothing changed that it did not know.
 * Everything else — a copy behind someone else's change — is what level-triggered reconciling
 * mends: the change's event queues the engine again.
 */
import {
  AppsV1Api,
  CoreV1Api,
  NetworkingV1Api,
  type KubeConfig,
  type KubernetesObject,
  type V1ConfigMap,
  type V1NetworkPolicy,
  type V1ObjectMeta,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1Service,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { ENGINE_KIND_LABEL, ENGINE_UID_LABEL } from '../../../shared/resources.ts';
import { outputFields, RECORDED_ANNOTATION } from '../../../shared/recorded.ts';
import { GroupIndex } from '../../../shared/group-index.ts';
import { SharedParts } from '../../../shared/shared-parts.ts';
import {
  customResources,
  isNewer,
  oneAtATime,
  WatchedCollection,
  type CollectionOptions,
  type ListPage,
} from '../../../shared/watched-collection.ts';
import { ENGINE_ANNOTATION } from '../desired/workload.ts';
import type { EngineKind, EngineKindName, EngineResource } from '../kinds/kind.ts';
import { trimClaim, trimPod, trimStatefulSet, trimToMetadata } from './trim.ts';

/** Hears which engine (kind and name) a change concerns. */
export type EngineChanged = (kind: string, name: string) => void;

type Page = (limit: number, token: string | undefined) => Promise<ListPage>;
/** Turns for the collections' lists, taken one at a time. */
type Turns = NonNullable<CollectionOptions<unknown>['takeTurn']>;

const OWNED_SELECTOR = ENGINE_KIND_LABEL;
/** Reports remembered before those already seen are swept out. */
const MAX_OWN_REPORTS = 1_000;
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The metadata the operator reads: no managedFields, no kubectl's copy of the last applied object, nor the annotations `dropped`. */
function trimMetadata<M extends Pick<V1ObjectMeta, 'managedFields' | 'annotations'>>(
  metadata: M,
  ...dropped: string[]
): M {
  const { managedFields: _managed, annotations, ...rest } = metadata;
  if (annotations === undefined) return rest as M;
  const drop = new Set([LAST_APPLIED, ...dropped]);
  const kept = Object.fromEntries(Object.entries(annotations).filter(([key]) => !drop.has(key)));
  return { ...rest, annotations: kept } as M;
}

/** Objects whose writes are tracked by name and resourceVersion. */
type Versioned = { metadata?: { name?: string; resourceVersion?: string } };

/** Equal parts of engines' status (profile and version snapshots, conditions) kept once. */
const PARTS = new SharedParts();

/**
 * An engine as reconciles read it, and as the copy keeps it: the output fields merged once
 * (status over what the API recorded at creation, shared/recorded.ts), the status as stored
 * beside them, equal parts shared, and the recorded annotation's text, now merged, dropped.
 */
export function engineView<K extends EngineKindName>(engine: EngineResource<K>): EngineResource<K> {
  return {
    ...engine,
    metadata: trimMetadata(engine.metadata, RECORDED_ANNOTATION),
    status: PARTS.intern(outputFields(engine)),
    storedStatus: PARTS.intern(engine.status ?? {}),
  };
}

/** The writes of the operator not yet seen by a copy, newest per object. */
class OwnWrites<T extends Versioned> {
  private readonly written = new Map<string, T>();

  note(object: T): void {
    const name = object.metadata?.name ?? '';
    const known = this.written.get(name);
    if (known === undefined || isNewer(object.metadata?.resourceVersion, known.metadata?.resourceVersion))
      this.written.set(name, object);
  }

  /** The newer of the copy's object and the operator's own write. */
  pick(name: string, copy: T | undefined): T | undefined {
    const written = this.written.get(name);
    if (written === undefined) return copy;
    if (copy !== undefined && !isNewer(written.metadata?.resourceVersion, copy.metadata?.resourceVersion)) {
      this.written.delete(name);
      return copy;
    }
    return written;
  }

  /**
   * Hears the copy's object of that name change: a write the copy has caught up with (or an
   * object gone) is forgotten, so that writes are not kept beside the copy until the next read.
   */
  changed(name: string, copy: T | undefined): void {
    if (copy === undefined) this.written.delete(name);
    else if (this.written.has(name)) this.pick(name, copy);
  }
}

/** What a reconcile reads of one owned collection, and tells it of its writes. */
export interface OwnedObjects<T extends KubernetesObject> {
  get(name: string): T | undefined;
  /** The objects of the engine with that uid. */
  of(uid: string): T[];
  /** Notes the answer to a write of the object. */
  wrote(object: T): void;
}

/**
 * What a reconcile reads of the cluster, and tells it of its writes: what the reconciler needs of
 * the view, so that it can also run on a cluster kept in memory (memory-cluster.ts).
 */
export interface EngineReads {
  engine<K extends EngineKindName>(kind: EngineKind<K>, name: string): EngineResource<K> | undefined;
  wroteEngine<K extends EngineKindName>(
    kind: EngineKind<K>,
    engine: EngineResource<K>,
    report?: boolean,
  ): EngineResource<K>;
  readonly statefulSets: OwnedObjects<V1StatefulSet>;
  readonly pods: OwnedObjects<V1Pod>;
  readonly claims: OwnedObjects<V1PersistentVolumeClaim>;
  readonly services: OwnedObjects<V1Service>;
  readonly configMaps: OwnedObjects<V1ConfigMap>;
  readonly networkPolicies: OwnedObjects<V1NetworkPolicy>;
}

/** A copy of one owned collection, indexed by engine uid. */
export class OwnedCopy<T extends KubernetesObject> implements OwnedObjects<T> {
  readonly collection: WatchedCollection<T>;
  private readonly byEngine = new GroupIndex<T>();
  private readonly own = new OwnWrites<T>();
  private readonly trim: (object: T) => T;

  constructor(
    options: {
      kubeConfig: KubeConfig;
      path: string;
      listPage: Page;
      log: Logger;
      what: string;
      takeTurn: Turns;
    },
    trim: (object: T) => T,
    changed: EngineChanged,
  ) {
    this.trim = trim;
    this.collection = new WatchedCollection<T>({
      ...options,
      labelSelector: OWNED_SELECTOR,
      keep: (object) => trim(object as T),
      onChange: (name, before, after) => {
        this.index(name, before, after);
        const object = after ?? before;
        const kind = object?.metadata?.labels?.[ENGINE_KIND_LABEL];
        const engine = object?.metadata?.annotations?.[ENGINE_ANNOTATION];
        if (kind !== undefined && engine !== undefined) changed(kind, engine);
      },
    });
  }

  get(name: string): T | undefined {
    return this.own.pick(name, this.collection.get(name));
  }

  /** The objects of the engine with that uid. */
  of(uid: string): T[] {
    return [...this.byEngine.of(uid)];
  }

  /** Notes the answer to a write of the object. */
  wrote(object: T): void {
    this.own.note(this.trim(object));
  }

  private index(name: string, before: T | undefined, after: T | undefined): void {
    this.own.changed(name, after);
    this.byEngine.update(name, before, after, (o) => o.metadata?.labels?.[ENGINE_UID_LABEL]);
  }
}

/** A copy of one kind's engines. */
class EngineCopy<K extends EngineKindName> {
  readonly collection: WatchedCollection<EngineResource<K>>;
  private readonly own = new OwnWrites<EngineResource<K>>();
  /** resourceVersions of the operator's own status writes, whose events queue nothing. */
  private readonly ownReports = new Set<string>();
  /** The size at which `ownReports` is swept of the reports the copy has seen. */
  private sweepAbove = MAX_OWN_REPORTS;

  constructor(
    options: { kubeConfig: KubeConfig; namespace: string; log: Logger; takeTurn: Turns },
    kind: EngineKind<K>,
    changed: EngineChanged,
  ) {
    this.collection = new WatchedCollection<EngineResource<K>>({
      kubeConfig: options.kubeConfig,
      ...customResources(options.kubeConfig, options.namespace, kind.plural),
      // The apiserver's objects of the kind's collection, which its CRD's schema checked.
      keep: (object) => engineView(object as EngineResource<K>),
      onChange: (name, _before, after) => {
        this.own.changed(name, after);
        const version = after?.metadata.resourceVersion;
        if (version !== undefined && this.ownReports.delete(version)) return;
        changed(kind.kind, name);
      },
      log: options.log,
      what: kind.kind,
      takeTurn: options.takeTurn,
    });
  }

  get(name: string): EngineResource<K> | undefined {
    return this.own.pick(name, this.collection.get(name));
  }

  /** Notes a write's answer; `report` marks a status write, whose event need not queue the engine. */
  /** Notes the operator's write of an engine; the engine as reconciles read it. */
  wrote(engine: EngineResource<K>, report: boolean): EngineResource<K> {
    const view = engineView(engine);
    this.own.note(view);
    const version = engine.metadata.resourceVersion;
    if (report && version !== undefined && !this.collection.has(version)) this.ownReports.add(version);
    // A report whose event came first (or never came: a relist passed it) is forgotten here, in
    // sweeps spaced so that a set of reports still unseen is not scanned on every write.
    if (this.ownReports.size > this.sweepAbove) {
      for (const seen of this.ownReports) if (this.collection.has(seen)) this.ownReports.delete(seen);
      this.sweepAbove = Math.max(MAX_OWN_REPORTS, 2 * this.ownReports.size);
    }
    return view;
  }
}

/** The copy of each kind's engines. */
type EngineCopies = { [K in EngineKindName]?: EngineCopy<K> };

export class ClusterView implements EngineReads {
  private readonly engines: EngineCopies = {};
  readonly statefulSets: OwnedCopy<V1StatefulSet>;
  readonly pods: OwnedCopy<V1Pod>;
  readonly claims: OwnedCopy<V1PersistentVolumeClaim>;
  readonly services: OwnedCopy<V1Service>;
  readonly configMaps: OwnedCopy<V1ConfigMap>;
  readonly networkPolicies: OwnedCopy<V1NetworkPolicy>;

  constructor(
    options: { kubeConfig: KubeConfig; namespace: string; log: Logger; kinds: readonly EngineKind[] },
    changed: EngineChanged,
  ) {
    const { kubeConfig, namespace, log } = options;
    // The collections list one at a time: thousands of objects of each listed at once are
    // several pages of whole objects in memory at the same time, a peak the heap keeps.
    const takeTurn = oneAtATime();
    for (const kind of options.kinds) this.addEngineCopy({ ...options, takeTurn }, kind, changed);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const apps = kubeConfig.makeApiClient(AppsV1Api);
    const networking = kubeConfig.makeApiClient(NetworkingV1Api);
    const query = (limit: number, token: string | undefined) => ({
      namespace,
      labelSelector: OWNED_SELECTOR,
      limit,
      ...(token === undefined ? {} : { _continue: token }),
    });
    const copy = <T extends KubernetesObject>(
      path: string,
      listPage: Page,
      trim: (object: T) => T,
    ): OwnedCopy<T> =>
      new OwnedCopy<T>({ kubeConfig, path, listPage, log, what: path, takeTurn }, trim, changed);
    const ns = `/namespaces/${namespace}`;
    this.statefulSets = copy(
      `/apis/apps/v1${ns}/statefulsets`,
      (l, t) => apps.listNamespacedStatefulSet(query(l, t)),
      trimStatefulSet,
    );
    this.pods = copy(`/api/v1${ns}/pods`, (l, t) => core.listNamespacedPod(query(l, t)), trimPod);
    this.claims = copy(
      `/api/v1${ns}/persistentvolumeclaims`,
      (l, t) => core.listNamespacedPersistentVolumeClaim(query(l, t)),
      trimClaim,
    );
    this.services = copy(
      `/api/v1${ns}/services`,
      (l, t) => core.listNamespacedService(query(l, t)),
      trimToMetadata,
    );
    this.configMaps = copy(
      `/api/v1${ns}/configmaps`,
      (l, t) => core.listNamespacedConfigMap(query(l, t)),
      trimToMetadata,
    );
    this.networkPolicies = copy(
      `/apis/networking.k8s.io/v1${ns}/networkpolicies`,
      (l, t) => networking.listNamespacedNetworkPolicy(query(l, t)),
      trimToMetadata,
    );
  }

  private get collections(): WatchedCollection<unknown>[] {
    return [
      ...Object.values(this.engines).map((e) => e.collection),
      this.statefulSets.collection,
      this.pods.collection,
      this.claims.collection,
      this.services.collection,
      this.configMaps.collection,
      this.networkPolicies.collection,
    ] as WatchedCollection<unknown>[];
  }

  /**
   * Lists and starts watching everything; resolves once every copy holds its whole collection.
   * The collections list one at a time (see the constructor).
   */
  async start(): Promise<void> {
    await Promise.all(this.collections.map((c) => c.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.collections.map((c) => c.stop()));
  }

  /** Whether every copy mirrors the apiserver now. */
  get synced(): boolean {
    return this.collections.every((c) => c.synced);
  }

  /** Objects held, for the metrics. */
  get size(): number {
    return this.collections.reduce((sum, c) => sum + c.size, 0);
  }

  private addEngineCopy<K extends EngineKindName>(
    options: { kubeConfig: KubeConfig; namespace: string; log: Logger; takeTurn: Turns },
    kind: EngineKind<K>,
    changed: EngineChanged,
  ): void {
    const copies: { [P in K]?: EngineCopy<P> } = this.engines;
    copies[kind.kind] = new EngineCopy(options, kind, changed);
  }

  /** The engine as reconciles read it (see engineView). */
  engine<K extends EngineKindName>(kind: EngineKind<K>, name: string): EngineResource<K> | undefined {
    return this.engineCopy(kind).get(name);
  }

  /** Notes the operator's write of an engine; the engine as reconciles read it. */
  wroteEngine<K extends EngineKindName>(
    kind: EngineKind<K>,
    engine: EngineResource<K>,
    report = false,
  ): EngineResource<K> {
    return this.engineCopy(kind).wrote(engine, report);
  }

  private engineCopy<K extends EngineKindName>(kind: EngineKind<K>): EngineCopy<K> {
    const copies: { [P in K]?: EngineCopy<P> } = this.engines;
    const copy = copies[kind.kind];
    if (copy === undefined) throw new TypeError(`no copy of ${kind.plural}`);
    return copy;
  }
}
