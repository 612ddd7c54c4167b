import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout } from 'node:timers/promises';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { ApiError, notFound } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import {
  GROUP,
  RESOURCE_KINDS,
  VERSION,
  WORKSPACE_LABEL,
  type ResourceKind,
} from '../../../shared/resources.ts';
import { log } from '../log.ts';
import { isNewer, statusCode } from '../../../shared/watched-collection.ts';
import { sortedRun, type IndexSpec, type OrderedRun } from '../list/ordered-index.ts';
import { KindCache } from './watch-cache.ts';
import { LeaseLock, type Held } from './lease-lock.ts';
import { storeError, unstorableName } from './store-errors.ts';
import { earlierObjectNames, objectName } from './names.ts';
import { identityOf, splitName, toCustomResource, type CustomResource } from './objects.ts';
import { creation, replacement, stored } from './object-writes.ts';
import type { ClusterPlacement, Store, Stored, WriteOptions } from './store-interface.ts';

export type { Stored, WriteOptions } from './store-interface.ts';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Tries of a status write that the cluster did not answer, and the growing wait between them. */
const STATUS_ATTEMPTS = 3;
const STATUS_RETRY_MS = 200;

/**
 * How long a decision under a lock waits for the cache to see the previous holder's write, and
 * a delete for the cache to drop the object, before reading from the apiserver instead.
 */
const READ_OWN_WRITE_MS = 2_000;

/** An object found for a resource name: its metadata and its message. */
export interface Located {
  metadata: CustomResource['metadata'];
  stored: Stored;
}

/**
 * API resources as custom resources in one namespace. Updates and deletes carry the
 * resourceVersion the caller read: a concurrent change makes them fail with ABORTED instead of
 * silently overwriting it.
 *
 * Reads come from watch-fed caches once {@link startCaches} ran (ARCHITECTURE.md, "Reads from
 * the cache"): every write is held by the cache as the apiserver answered it until its watch
 * event arrives, so a caller reads its own writes at once; a name the cache does not hold is looked up at the apiserver, so a resource just created
 * through another replica is found too; while a cache is not in sync, reads answer UNAVAILABLE
 * rather than anything stale. Without caches, every read goes to the apiserver.
 */
export class ResourceStore implements Store, ClusterPlacement {
  private readonly api: CustomObjectsApi;
  private readonly caches = new Map<string, KindCache>();
  /** Locks every replica honours (quota checks), as Leases beside the resources. */
  readonly locks: LeaseLock;
  /** The newest resourceVersion this store wrote, per kind. */
  private readonly written = new Map<string, string>();
  /** The cluster and namespace of the resources, where their engines' pods run too. */
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;

  constructor(kubeConfig: KubeConfig, namespace: string) {
    this.api = kubeConfig.makeApiClient(CustomObjectsApi);
    this.kubeConfig = kubeConfig;
    this.namespace = namespace;
    this.locks = new LeaseLock(
      kubeConfig,
      namespace,
      `gateway-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
    );
  }

  /** Serves reads of every kind from watch-fed caches; resolves once all of them are in sync. */
  async startCaches(kinds: readonly ResourceKind[] = Object.values(RESOURCE_KINDS)): Promise<void> {
    for (const kind of kinds) {
      this.caches.set(kind.kind, new KindCache(this.kubeConfig, this.namespace, kind, log));
    }
    await Promise.all([...this.caches.values()].map((cache) => cache.start()));
  }

  async stopCaches(): Promise<void> {
    await Promise.all([...this.caches.values()].map((cache) => cache.stop()));
  }

  /** Whether every cache is in sync (always, without caches): the gateway's readiness. */
  get ready(): boolean {
    return [...this.caches.values()].every((cache) => cache.synced);
  }

  /** The kind's cache, if reads are cached (for tests and metrics). */
  cache(kind: ResourceKind): KindCache | undefined {
    return this.caches.get(kind.kind);
  }

  /** The kind's cache, if reads are cached; UNAVAILABLE while it is not in sync. */
  private cacheOf(kind: ResourceKind): KindCache | undefined {
    const cache = this.caches.get(kind.kind);
    if (cache !== undefined && !cache.synced) {
      throw new ApiError(Code.UNAVAILABLE, 'The gateway is catching up with the cluster; retry shortly', {
        reason: 'CACHE_NOT_SYNCED',
      });
    }
    return cache;
  }

  /**
   * Waits (bounded) until the kind's cache has seen the write of that resourceVersion, which
   * may have been made by another replica; true when it has (or there is no cache).
   */
  async caughtUp(kind: ResourceKind, resourceVersion: string): Promise<boolean> {
    const cache = this.caches.get(kind.kind);
    return cache === undefined || (await cache.seen(resourceVersion, READ_OWN_WRITE_MS));
  }

  /** The newest resourceVersion this store has written of `kind`: what a lock's next holder awaits. */
  newestWrite(kind: ResourceKind): string | undefined {
    return this.written.get(kind.kind);
  }

  /**
   * Every resource of `kind` in a workspace, for a decision taken under a lock: from the cache
   * once it holds the previous holder's write, else from the apiserver.
   */
  async listHeld(kind: ResourceKind, workspace: string, held: Held): Promise<Stored[]> {
    // The newer of the previous holder's write and this replica's own newest write of the kind
    // (a pause just made outside the lock counts too, even when its watch event is slow to
    // arrive): a cache that has seen it has seen both.
    const own = this.written.get(kind.kind);
    const awaited = isNewer(own, held.lastWrite) ? own : (held.lastWrite ?? own);
    const fresh = held.tookOver || (awaited !== undefined && !(await this.caughtUp(kind, awaited)));
    return fresh ? await this.listDirect(kind, workspace) : await this.list(kind, workspace);
  }

  /**
   * Notes a write of this replica: the newest resourceVersion it wrote of the kind (what a lock's
   * next holder awaits), and the object, which the cache holds at once so that the writer reads
   * it next, without waiting for its watch event.
   */
  private noteWrite(kind: ResourceKind, object: CustomResource): void {
    const resourceVersion = object.metadata.resourceVersion ?? '';
    const newest = this.written.get(kind.kind);
    if (newest === undefined || BigInt(resourceVersion || '0') > BigInt(newest))
      this.written.set(kind.kind, resourceVersion);
    this.caches.get(kind.kind)?.wrote(object);
  }

  /** Creates the resource; ALREADY_EXISTS when its name is taken. */
  async create(kind: ResourceKind, message: { name: string }, options: WriteOptions = {}): Promise<Stored> {
    const { workspace, id } = splitName(kind, message.name);
    if (objectName(workspace, id) === undefined) throw unstorableName(message.name);
    // An object of an earlier release may hold the identity under another name.
    if (earlierObjectNames(workspace, id).length > 0 && (await this.find(kind, message.name)) !== undefined) {
      throw storeError({ code: 409 }, message.name, 'create');
    }
    const { body, statusLeft } = creation(toCustomResource(kind, message, this.namespace, options.intent));
    const created = await this.call(message.name, 'create', () =>
      this.api.createNamespacedCustomObject({ ...this.target(kind), body }),
    );
    if (statusLeft === undefined) {
      this.noteWrite(kind, created);
      return stored(kind, created);
    }
    // Too large for the annotation: status in a second write, and if that fails the creation
    // is undone so that no half-written resource remains.
    try {
      return await this.writeStatus(kind, message.name, created.metadata.name, statusLeft);
    } catch (error: unknown) {
      await this.api
        .deleteNamespacedCustomObject({ ...this.target(kind), name: created.metadata.name })
        .catch(() => undefined);
      throw error;
    }
  }

  /** The resource of `name`; NOT_FOUND when there is none. */
  async get(kind: ResourceKind, name: string): Promise<Stored> {
    return (await this.locate(kind, name)).stored;
  }

  /** The object of `name`; NOT_FOUND when there is none. */
  private async locate(kind: ResourceKind, name: string): Promise<Located> {
    const found = await this.find(kind, name);
    if (found === undefined) throw notFound(name);
    return found;
  }

  /**
   * The object that holds the resource `name`: under its current object name or one an earlier
   * release gave it, and only if its labels name exactly this resource (an object named alike
   * may belong to another workspace or have been written by hand). From the cache when there
   * is one; what it does not hold is looked up at the apiserver.
   */
  async find(kind: ResourceKind, name: string): Promise<Located | undefined> {
    const { workspace, id } = splitName(kind, name);
    const current = objectName(workspace, id);
    if (current === undefined) return undefined;
    const candidates = [current, ...earlierObjectNames(workspace, id)];
    const cache = this.cacheOf(kind);
    const cached = candidates
      .map((candidate) => cache?.object(candidate))
      .find((object) => object?.workspace === workspace && object.id === id);
    return cached ?? this.fetch(kind, name, candidates);
  }

  /** The first of `candidates` (object names) whose labels name the resource, at the apiserver. */
  private async fetch(
    kind: ResourceKind,
    name: string,
    candidates: readonly string[],
  ): Promise<Located | undefined> {
    const { workspace, id } = splitName(kind, name);
    for (const candidate of candidates) {
      const found = await this.call(name, 'get', () =>
        this.api.getNamespacedCustomObject({ ...this.target(kind), name: candidate }),
      ).catch((error: unknown) => {
        if (error instanceof ApiError && error.code === Code.NOT_FOUND) return undefined;
        throw error;
      });
      const identity = found === undefined ? undefined : identityOf(found);
      if (found !== undefined && identity?.workspace === workspace && identity.id === id) {
        return { metadata: found.metadata, stored: stored(kind, found) };
      }
    }
    return undefined;
  }

  /** Every resource of `kind` in a workspace, or in all workspaces for `-`. */
  async list(kind: ResourceKind, workspace: string): Promise<Stored[]> {
    const cache = this.cacheOf(kind);
    return cache === undefined
      ? await this.listDirect(kind, workspace)
      : Array.from(cache.inWorkspace(workspace), (object) => object.stored);
  }

  async ordered(
    kind: ResourceKind,
    workspace: string,
    spec: IndexSpec<Stored>,
    group: string,
  ): Promise<OrderedRun<Stored>> {
    const cache = this.cacheOf(kind);
    return cache === undefined
      ? sortedRun(await this.listDirect(kind, workspace), spec, group)
      : cache.ordered(workspace, spec, group);
  }

  private async listDirect(kind: ResourceKind, workspace: string): Promise<Stored[]> {
    const list = await this.call<{ items: CustomResource[] }>(`workspaces/${workspace}`, 'list', () =>
      this.api.listNamespacedCustomObject({
        ...this.target(kind),
        labelSelector: workspace === '-' ? WORKSPACE_LABEL : `${WORKSPACE_LABEL}=${workspace}`,
      }),
    );
    return list.items.flatMap((item) => {
      if (identityOf(item) !== undefined) return [stored(kind, item)];
      // Written by hand, or by a release with looser workspace rules: no API name can reach it.
      log.warn(
        { kind: kind.kind, object: item.metadata.name },
        'object without a valid workspace and id skipped',
      );
      return [];
    });
  }

  /** Replaces the resource if it is still at `resourceVersion`; ABORTED otherwise. */
  async update(
    kind: ResourceKind,
    message: { name: string },
    resourceVersion: string,
    options: WriteOptions = {},
  ): Promise<Stored> {
    const resource = toCustomResource(kind, message, this.namespace, options.intent);
    const current = await this.locate(kind, message.name);
    // The resourceVersion the caller read guards the whole write.
    const { body, status } = replacement(resource, {
      current: current.metadata,
      resourceVersion,
      statusFields: options.statusFields,
    });
    const replaced = await this.call(message.name, 'update', async () => {
      return (await this.api.replaceNamespacedCustomObject({
        ...this.target(kind),
        name: current.metadata.name,
        body,
      })) as CustomResource;
    });
    return this.writeStatus(kind, message.name, replaced.metadata.name, status);
  }

  /**
   * Sets annotations on the resource's object (not part of the API message), e.g. the time of a
   * user's latest activity, which the operator reads. NOT_FOUND when it is gone.
   */
  async annotate(
    kind: ResourceKind,
    name: string,
    annotations: Readonly<Record<string, string>>,
  ): Promise<void> {
    const { metadata } = await this.locate(kind, name);
    const patched = await this.call(name, 'update', () =>
      this.api.patchNamespacedCustomObject(
        { ...this.target(kind), name: metadata.name, body: { metadata: { annotations } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    this.noteWrite(kind, patched);
  }

  /** Deletes the resource, if given only while it is at `resourceVersion`; NOT_FOUND when gone. */
  async delete(kind: ResourceKind, name: string, resourceVersion?: string): Promise<void> {
    const { metadata } = await this.locate(kind, name);
    // The uid makes sure that what is deleted is the object whose labels were just checked.
    const preconditions = {
      uid: metadata.uid,
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
    };
    const answer = await this.call(name, 'delete', () =>
      this.api.deleteNamespacedCustomObject({
        ...this.target(kind),
        name: metadata.name,
        body: { preconditions },
      }),
    );
    // An object with finalizers stays, marked for deletion (a write to wait for); one without
    // is gone (the answer is a Status, and the cache must drop it).
    const cache = this.caches.get(kind.kind);
    if (answer.kind === kind.kind) this.noteWrite(kind, answer);
    else await cache?.gone(metadata.name, READ_OWN_WRITE_MS);
  }

  /**
   * Waits (bounded) until the object of that name has been stored at another resourceVersion
   * than `previous` (or at all, for a create): an admitted change landing. Its resourceVersion,
   * or undefined when it did not land in time.
   */
  async landing(
    kind: ResourceKind,
    objectName: string,
    previous: string | undefined,
    timeoutMs: number,
  ): Promise<string | undefined> {
    const cache = this.caches.get(kind.kind);
    const landed = await cache?.when(
      objectName,
      (object) => object.stored.resourceVersion !== previous,
      timeoutMs,
    );
    if (landed !== undefined) this.written.set(kind.kind, landed.stored.resourceVersion);
    return landed?.stored.resourceVersion;
  }

  /**
   * Writes the status of an object whose spec was just written. A merge patch of the whole status
   * is idempotent, so a write the cluster did not answer is retried a few times before the call
   * fails: an update has no compensation, and a lost status write would leave stale audit fields.
   */
  async writeStatus(
    kind: ResourceKind,
    name: string,
    objectName: string,
    status: CustomResource['status'],
  ): Promise<Stored> {
    const write = (): Promise<CustomResource> =>
      this.call(name, 'update', () =>
        this.api.patchNamespacedCustomObjectStatus(
          { ...this.target(kind), name: objectName, body: { status } },
          mergePatch,
        ),
      );
    for (let attempt = 1; ; attempt++) {
      try {
        const written = await write();
        this.noteWrite(kind, written);
        return stored(kind, written);
      } catch (error: unknown) {
        const retryable = error instanceof ApiError && error.code === Code.UNAVAILABLE;
        if (!retryable || attempt >= STATUS_ATTEMPTS) throw error;
        await setTimeout(STATUS_RETRY_MS * attempt);
      }
    }
  }

  private target(kind: ResourceKind): { group: string; version: string; namespace: string; plural: string } {
    return { group: GROUP, version: VERSION, namespace: this.namespace, plural: kind.plural };
  }

  /** Runs one apiserver call, translating its failures into API errors about `name`. */
  private async call<Answer = CustomResource>(
    name: string,
    verb: 'create' | 'get' | 'list' | 'update' | 'delete',
    request: () => Promise<object>,
  ): Promise<Answer> {
    for (let attempt = 1; ; attempt++) {
      try {
        // The custom objects client answers untyped JSON: an object, or a list of them.
        return (await request()) as Answer;
      } catch (error: unknown) {
        // 429 means the apiserver did not act (a new kind's storage starting, or priority and
        // fairness shedding load): waiting as it asks and retrying is safe for every verb.
        const wait = statusCode(error) === 429 ? retryAfterMs(error) : undefined;
        if (wait === undefined || attempt >= THROTTLED_ATTEMPTS) throw storeError(error, name, verb);
        await setTimeout(wait);
      }
    }
  }
}

/** Tries of a call that the apiserver answers with 429 Too Many Requests. */
const THROTTLED_ATTEMPTS = 10;

/** The Retry-After of a 429, at most 2 s; 250 ms when the answer names none. */
function retryAfterMs(error: unknown): number {
  const headers =
    typeof error === 'object' && error !== null && 'headers' in error ? error.headers : undefined;
  const value = (headers as Record<string, string> | undefined)?.['retry-after'];
  const seconds = Number(value);
  return value === undefined || !Number.isFinite(seconds) ? 250 : Math.min(seconds * 1000, 2000);
}
