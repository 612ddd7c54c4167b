/**
 * The operator's only door for writes to the Kubernetes API (reads come from the ClusterView):
 * typed calls that return what the apiserver answered or throw. Every call waits for the
 * client-side rate limit, is counted by verb and answer, and is refused outright while this
 * replica may not act (it has not renewed its leadership in time): a paused leader that wakes
 * up after a successor took over writes nothing. "Not found" is recognised here, once.
 */
import {
  AppsV1Api,
  NetworkingV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
// The client's own (typed → wire) serializer: a strategic merge patch's directives must be added
// to the wire form, which the typed calls would drop as unknown fields.
import { ObjectSerializer } from '@kubernetes/client-node/dist/serializer.js';
import { GROUP, VERSION } from '../../../shared/resources.ts';
import { statusCode } from '../../../shared/watched-collection.ts';
import type { EngineKind, EngineKindName, EngineResource } from '../kinds/kind.ts';
import {
  KUEUE_GROUP,
  KUEUE_KINDS,
  KUEUE_VERSION,
  type KueueKind,
  type KueueObject,
} from '../queueing/kueue-objects.ts';
import type { Logger } from 'pino';
import type { ControllerMetrics } from '../runtime/metrics.ts';
import { TokenBucket } from './token-bucket.ts';

/** Every object the operator writes is written by this one field manager. */
export const FIELD_MANAGER = 'ai-engine-manager-operator';
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategicMergePatch = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

/**
 * The wire form of a strategic merge patch: `patch` as the apiserver reads it (the client's
 * typed field names, such as a NetworkPolicy's `_from`, written as Kubernetes spells them), each
 * top-level field named in `replace` marked to replace what is there whole.
 */
function strategicPatchBody(patch: KubernetesObject, replace: readonly string[]): object {
  // All the kinds the operator owns are v1 of their group: the serializer's type is V1<Kind>.
  const serialized: unknown = ObjectSerializer.serialize(patch, `V1${patch.kind ?? ''}`);
  if (typeof serialized !== 'object' || serialized === null) throw new TypeError('unserializable patch');
  const wire = new Map<string, unknown>(Object.entries(serialized));
  for (const field of replace) {
    const value: unknown = wire.get(field);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      wire.set(field, { ...value, $patch: 'replace' });
  }
  return Object.fromEntries(wire);
}

/** A write refused because this replica may not act now (see LeaderElector). */
export class NotLeading extends Error {
  constructor() {
    super('not leading: this replica has not renewed its leadership in time, so it writes nothing');
    this.name = 'NotLeading';
  }
}

async function unlessNotFound<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error: unknown) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

export interface KubeClientOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  metrics: Pick<ControllerMetrics, 'kubeRequests' | 'kubeLatency'>;
  /** Calls per second and burst of the client-side rate limit; qps ≤ 0 means none. */
  qps?: number;
  burst?: number;
  /** Whether this replica may write now; always, when not given. */
  mayAct?: () => boolean;
  /** Hears each call as it leaves, at debug level. */
  log?: Logger;
}

type Verb = 'create' | 'patch' | 'delete' | 'get';

/**
 * The writes a reconcile makes: what the reconciler needs of the client, so that it can also run
 * on a cluster kept in memory (memory-cluster.ts).
 */
/** What becomes of the objects a deleted object owns: deleted with it, or left without an owner. */
export type Dependents = 'delete' | 'orphan';

export type EngineWrites = Pick<
  KubeClient,
  | 'patchEngine'
  | 'patchEngineStatus'
  | 'create'
  | 'patchOwned'
  | 'growClaim'
  | 'deletePod'
  | 'deleteStatefulSet'
  | 'deleteService'
  | 'deleteConfigMap'
  | 'deleteNetworkPolicy'
  | 'deleteClaim'
>;

export class KubeClient {
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly apps: AppsV1Api;
  private readonly networking: NetworkingV1Api;
  private readonly objects: KubernetesObjectApi;
  private readonly bucket: TokenBucket;
  private readonly options: KubeClientOptions;
  readonly namespace: string;

  constructor(options: KubeClientOptions) {
    const { kubeConfig } = options;
    this.options = options;
    this.namespace = options.namespace;
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.apps = kubeConfig.makeApiClient(AppsV1Api);
    this.networking = kubeConfig.makeApiClient(NetworkingV1Api);
    this.objects = KubernetesObjectApi.makeApiClient(kubeConfig);
    this.bucket = new TokenBucket(options.qps ?? 0, options.burst ?? 1);
  }

  /** One call: fenced by leadership, rate-limited, counted. */
  private async call<T>(verb: Verb, what: string, request: () => Promise<T>): Promise<T> {
    const { metrics, mayAct } = this.options;
    if (mayAct !== undefined && !mayAct()) throw new NotLeading();
    const stop = metrics.kubeLatency.startTimer({ verb });
    await this.bucket.acquire();
    // The wait may have been long: ask again just before the call leaves.
    if (mayAct !== undefined && !mayAct()) throw new NotLeading();
    this.options.log?.debug({ verb, what }, 'apiserver call');
    try {
      const answer = await request();
      metrics.kubeRequests.inc({ verb, code: '200' });
      return answer;
    } catch (error: unknown) {
      metrics.kubeRequests.inc({ verb, code: String(statusCode(error) ?? 'error') });
      throw error;
    } finally {
      stop();
    }
  }

  private engineTarget(plural: string, name: string) {
    return { group: GROUP, version: VERSION, namespace: this.namespace, plural, name };
  }

  /**
   * A JSON merge patch of an engine's metadata or spec (with resourceVersion: fails on a race);
   * the engine of that kind as the apiserver answers it.
   */
  async patchEngine<K extends EngineKindName>(
    kind: EngineKind<K>,
    name: string,
    body: object,
  ): Promise<EngineResource<K>> {
    const { plural } = kind;
    return (await this.call('patch', `${plural}/${name}`, () =>
      this.custom.patchNamespacedCustomObject({ ...this.engineTarget(plural, name), body }, mergePatch),
    )) as EngineResource<K>;
  }

  async patchEngineStatus<K extends EngineKindName>(
    kind: EngineKind<K>,
    name: string,
    status: object,
  ): Promise<EngineResource<K>> {
    const { plural } = kind;
    return (await this.call('patch', `${plural}/${name}/status`, () =>
      this.custom.patchNamespacedCustomObjectStatus(
        { ...this.engineTarget(plural, name), body: { status } },
        mergePatch,
      ),
    )) as EngineResource<K>;
  }

  /** Creates an object the operator owns (409 when it exists); the object as created. */
  async create<T extends KubernetesObject>(object: T): Promise<T> {
    return this.call('create', `${object.kind ?? ''}/${object.metadata?.name ?? ''}`, () =>
      this.objects.create(object, undefined, undefined, FIELD_MANAGER),
    );
  }

  /**
   * A strategic merge patch of an object the operator owns (desired/digest.ts): `patch` names
   * the object and holds the fields to write; each of its top-level fields named in `replace`
   * replaces what is there whole (`$patch: replace`), the rest merges. The object as patched.
   */
  async patchOwned<T extends KubernetesObject>(
    patch: KubernetesObject,
    replace: readonly string[],
  ): Promise<T> {
    const kind = patch.kind ?? '';
    const name = patch.metadata?.name ?? '';
    const send = this.patchers[kind];
    if (send === undefined) throw new TypeError(`the operator does not patch ${kind} objects`);
    const body = strategicPatchBody(patch, replace);
    // The answer is the object of the kind patched, as the typed call deserialized it.
    return (await this.call('patch', `${kind}/${name}`, () => send(name, body))) as T;
  }

  /** The typed patch call of each kind the operator owns, its body sent as it is. */
  private readonly patchers: Record<string, (name: string, body: object) => Promise<KubernetesObject>> = {
    StatefulSet: (name, body) =>
      this.apps.patchNamespacedStatefulSet(this.patchOf(name, body), strategicMergePatch),
    Service: (name, body) => this.core.patchNamespacedService(this.patchOf(name, body), strategicMergePatch),
    ConfigMap: (name, body) =>
      this.core.patchNamespacedConfigMap(this.patchOf(name, body), strategicMergePatch),
    NetworkPolicy: (name, body) =>
      this.networking.patchNamespacedNetworkPolicy(this.patchOf(name, body), strategicMergePatch),
  };

  /** A patch request of an owned object in the namespace, by the operator's field manager. */
  private patchOf(
    name: string,
    body: object,
  ): { name: string; namespace: string; body: object; fieldManager: string } {
    return { name, namespace: this.namespace, body, fieldManager: FIELD_MANAGER };
  }

  async growClaim(name: string, bytes: bigint): Promise<V1PersistentVolumeClaim> {
    return this.call('patch', `PersistentVolumeClaim/${name}`, () =>
      this.core.patchNamespacedPersistentVolumeClaim(
        {
          name,
          namespace: this.namespace,
          body: { spec: { resources: { requests: { storage: bytes.toString() } } } },
        },
        mergePatch,
      ),
    );
  }

  async deletePod(name: string): Promise<void> {
    await this.remove(`Pod/${name}`, (namespace) => this.core.deleteNamespacedPod({ name, namespace }));
  }

  /**
   * Deletes an engine's StatefulSet: its pods go with it; or, `orphan`ing what it owns, the
   * garbage collector first takes the set off its claims (and revisions), which then outlive it
   * whatever its claim retention policy says — a set made anew under the name adopts them.
   */
  async deleteStatefulSet(name: string, dependents: Dependents = 'delete'): Promise<void> {
    const propagationPolicy = dependents === 'orphan' ? 'Orphan' : 'Background';
    await this.remove(`StatefulSet/${name}`, (namespace) =>
      this.apps.deleteNamespacedStatefulSet({ name, namespace, propagationPolicy }),
    );
  }

  async deleteService(name: string): Promise<void> {
    await this.remove(`Service/${name}`, (namespace) =>
      this.core.deleteNamespacedService({ name, namespace }),
    );
  }

  async deleteConfigMap(name: string): Promise<void> {
    await this.remove(`ConfigMap/${name}`, (namespace) =>
      this.core.deleteNamespacedConfigMap({ name, namespace }),
    );
  }

  async deleteNetworkPolicy(name: string): Promise<void> {
    await this.remove(`NetworkPolicy/${name}`, (namespace) =>
      this.networking.deleteNamespacedNetworkPolicy({ name, namespace }),
    );
  }

  async deleteClaim(name: string): Promise<void> {
    await this.remove(`PersistentVolumeClaim/${name}`, (namespace) =>
      this.core.deleteNamespacedPersistentVolumeClaim({ name, namespace }),
    );
  }

  /** Where a Kueue object of `kind` named `name` lives: in the namespace when its kind is namespaced. */
  private kueueTarget(
    kind: KueueKind,
    name: string,
  ): { group: string; version: string; plural: string; name: string } {
    return { group: KUEUE_GROUP, version: KUEUE_VERSION, plural: KUEUE_KINDS[kind].plural, name };
  }

  /** Creates a Kueue object the operator manages (409 when it exists). */
  async createKueueObject(object: KueueObject): Promise<void> {
    const { name: _name, ...target } = this.kueueTarget(object.kind, object.metadata.name);
    const body = object;
    await this.call('create', `${object.kind}/${object.metadata.name}`, () =>
      KUEUE_KINDS[object.kind].namespaced
        ? this.custom.createNamespacedCustomObject({ ...target, namespace: this.namespace, body })
        : this.custom.createClusterCustomObject({ ...target, body }),
    );
  }

  /**
   * A Kueue object as the apiserver holds it; undefined when there is none. The operator reads
   * them only when one it would create already exists (to compare), so they are not watched.
   */
  async readKueueObject(kind: KueueKind, name: string): Promise<Record<string, unknown> | undefined> {
    const target = this.kueueTarget(kind, name);
    const read: unknown = await unlessNotFound(
      this.call('get', `${kind}/${name}`, () =>
        KUEUE_KINDS[kind].namespaced
          ? this.custom.getNamespacedCustomObject({ ...target, namespace: this.namespace })
          : this.custom.getClusterCustomObject(target),
      ),
    );
    return typeof read === 'object' && read !== null ? (read as Record<string, unknown>) : undefined;
  }

  /** A JSON merge patch of a Kueue object the operator manages. */
  async patchKueueObject(kind: KueueKind, name: string, body: object): Promise<void> {
    const target = this.kueueTarget(kind, name);
    await this.call('patch', `${kind}/${name}`, () =>
      KUEUE_KINDS[kind].namespaced
        ? this.custom.patchNamespacedCustomObject({ ...target, namespace: this.namespace, body }, mergePatch)
        : this.custom.patchClusterCustomObject({ ...target, body }, mergePatch),
    );
  }

  /** A delete in the namespace; what is already gone is fine. */
  private async remove(what: string, request: (namespace: string) => Promise<unknown>): Promise<void> {
    await unlessNotFound(this.call('delete', what, () => request(this.namespace)));
  }
}
