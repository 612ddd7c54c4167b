/**
 * The resources' storage in memory, for unit tests of the services' rules without a cluster. It
 * keeps the same custom resources the Kubernetes store writes (object-writes.ts makes them the
 * same way) and answers as the apiserver and the gateway's watch cache do: a fresh
 * resourceVersion for every write that changes something (and none for one that does not),
 * ABORTED for a stale one, ALREADY_EXISTS and NOT_FOUND with the Kubernetes store's errors,
 * status kept apart from the rest of the object, reads that include the caller's writes at once,
 * frozen messages from reads, and lists in the cache's order. test/store/store-contract.ts holds
 * it to the Kubernetes store's behaviour.
 *
 * What it does not do: validate against the CRD schemas, run the operator (no finalizers, no
 * reported states), or review kubectl writes (admission).
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { notFound } from '../errors/api-error.ts';
import { WORKSPACE_LABEL, type ResourceKind } from '../../../shared/resources.ts';
import { deepFreeze } from '../../../shared/shared-parts.ts';
import { isNewer } from '../../../shared/watched-collection.ts';
import { sortedRun, type IndexSpec, type OrderedRun } from '../list/ordered-index.ts';
import type { Held } from './lease-lock.ts';
import { objectName } from './names.ts';
import { creation, replacement, stored } from './object-writes.ts';
import { splitName, toCustomResource, type CustomResource } from './objects.ts';
import { storeError, unstorableName } from './store-errors.ts';
import type { Locks, Store, Stored, WriteOptions } from './store-interface.ts';

/** The namespace the objects name; nothing reads it back. */
const NAMESPACE = 'in-memory';

/** One object, and when it was last written (the watch cache lists a workspace in that order). */
interface Entry {
  object: CustomResource;
  written: number;
}

export interface InMemoryStoreOptions {
  /** The clock that stamps creation times; the system clock by default. */
  now?: () => Date;
}

export class InMemoryStore implements Store {
  readonly locks: Locks = new InMemoryLocks();
  /** Objects per kind, by object name, in the order they were created. */
  private readonly objects = new Map<string, Map<string, Entry>>();
  /** The cluster-wide revision: every change takes the next one, as etcd's does. */
  private revision = 0;
  /** The newest resourceVersion this store wrote, per kind. */
  private readonly written = new Map<string, string>();
  private readonly now: () => Date;

  constructor(options: InMemoryStoreOptions = {}) {
    this.now = options.now ?? (() => new Date());
  }

  create(kind: ResourceKind, message: { name: string }, options: WriteOptions = {}): Promise<Stored> {
    return later(() => {
      const { workspace, id } = splitName(kind, message.name);
      if (objectName(workspace, id) === undefined) throw unstorableName(message.name);
      const { body, statusLeft } = creation(toCustomResource(kind, message, NAMESPACE, options.intent));
      const objects = this.of(kind);
      if (objects.has(body.metadata.name)) throw storeError({ code: 409 }, message.name, 'create');
      // The apiserver keeps no status from a create (status is a subresource), and stamps the rest.
      const { status: _ignored, ...object } = structuredClone(body);
      const created: CustomResource = {
        ...object,
        metadata: {
          ...object.metadata,
          uid: randomUUID(),
          creationTimestamp: kubernetesTime(this.now()),
          resourceVersion: this.next(),
        },
      };
      objects.set(created.metadata.name, { object: created, written: this.revision });
      const result = statusLeft === undefined ? created : this.patchStatus(kind, created, statusLeft);
      return this.wrote(kind, result);
    });
  }

  get(kind: ResourceKind, name: string): Promise<Stored> {
    return later(() => read(kind, this.locate(kind, name)));
  }

  list(kind: ResourceKind, workspace: string): Promise<Stored[]> {
    return later(() => {
      const all = [...this.of(kind).values()];
      // The cache lists all workspaces in the order objects appeared, a workspace in the order of
      // their latest writes (shared/group-index.ts moves a changed object to the end).
      const listed =
        workspace === '-'
          ? all
          : all
              .filter((entry) => entry.object.metadata.labels?.[WORKSPACE_LABEL] === workspace)
              .sort((a, b) => a.written - b.written);
      return listed.map((entry) => read(kind, entry.object));
    });
  }

  /** Sorted on each call: the reference the gateway's ordered indexes are held to. */
  async ordered(
    kind: ResourceKind,
    workspace: string,
    spec: IndexSpec<Stored>,
    group: string,
  ): Promise<OrderedRun<Stored>> {
    return sortedRun(await this.list(kind, workspace), spec, group);
  }

  /** Nothing is written elsewhere: every write is already in what {@link list} reads. */
  listHeld(kind: ResourceKind, workspace: string, _held: Held): Promise<Stored[]> {
    return this.list(kind, workspace);
  }

  update(
    kind: ResourceKind,
    message: { name: string },
    resourceVersion: string,
    options: WriteOptions = {},
  ): Promise<Stored> {
    return later(() => {
      const resource = toCustomResource(kind, message, NAMESPACE, options.intent);
      const current = this.locate(kind, message.name);
      // As store.ts writes it: the object's own metadata kept, the recorded fields cleared.
      const { body, status } = replacement(resource, {
        current: current.metadata,
        resourceVersion,
        statusFields: options.statusFields,
      });
      const replaced = this.replace(kind, message.name, current, body);
      return this.wrote(kind, this.patchStatus(kind, replaced, status));
    });
  }

  annotate(kind: ResourceKind, name: string, annotations: Readonly<Record<string, string>>): Promise<void> {
    return later(() => {
      const current = this.locate(kind, name);
      const patched = { ...current.metadata.annotations, ...annotations };
      const changed = this.change(kind, current, {
        ...current,
        metadata: { ...current.metadata, annotations: patched },
      });
      this.wrote(kind, changed);
    });
  }

  delete(kind: ResourceKind, name: string, resourceVersion?: string): Promise<void> {
    return later(() => {
      const current = this.locate(kind, name);
      if (resourceVersion !== undefined && resourceVersion !== current.metadata.resourceVersion)
        throw storeError({ code: 409 }, name, 'delete');
      // An object with finalizers (engines are written with the operator's) stays, marked for
      // deletion, until they are gone, as on a cluster; one without is gone at once.
      if ((current.metadata.finalizers ?? []).length > 0) {
        if (current.metadata.deletionTimestamp !== undefined) return;
        const marked: CustomResource = {
          ...current,
          metadata: {
            ...current.metadata,
            deletionTimestamp: kubernetesTime(this.now()),
            resourceVersion: this.next(),
          },
        };
        this.of(kind).set(current.metadata.name, { object: marked, written: this.revision });
        this.wrote(kind, marked);
        return;
      }
      this.of(kind).delete(current.metadata.name);
      this.next();
    });
  }

  /**
   * Plays the operator's release of an object's finalizers: one marked for deletion is then
   * gone, as on a cluster. Not part of the Store: only the operator takes finalizers off.
   */
  release(kind: ResourceKind, name: string): void {
    const current = this.locate(kind, name);
    if (current.metadata.deletionTimestamp !== undefined) {
      this.of(kind).delete(current.metadata.name);
      this.next();
      return;
    }
    const released: CustomResource = {
      ...current,
      metadata: { ...current.metadata, finalizers: [], resourceVersion: this.next() },
    };
    this.of(kind).set(current.metadata.name, { object: released, written: this.revision });
  }

  /** Reads include every write at once. */
  caughtUp(_kind: ResourceKind, _resourceVersion: string): Promise<boolean> {
    return Promise.resolve(true);
  }

  newestWrite(kind: ResourceKind): string | undefined {
    return this.written.get(kind.kind);
  }

  private of(kind: ResourceKind): Map<string, Entry> {
    let objects = this.objects.get(kind.kind);
    if (objects === undefined) {
      objects = new Map();
      this.objects.set(kind.kind, objects);
    }
    return objects;
  }

  /** The object of the resource `name`; NOT_FOUND when there is none. */
  private locate(kind: ResourceKind, name: string): CustomResource {
    const { workspace, id } = splitName(kind, name);
    const object = objectName(workspace, id);
    const entry = object === undefined ? undefined : this.of(kind).get(object);
    if (entry === undefined) throw notFound(name);
    return entry.object;
  }

  /** A replace as the apiserver takes it: guarded by its resourceVersion, status left as it was. */
  private replace(
    kind: ResourceKind,
    name: string,
    current: CustomResource,
    body: CustomResource,
  ): CustomResource {
    if (body.metadata.resourceVersion === '' || body.metadata.resourceVersion === undefined)
      throw storeError({ code: 422, body: { message: RESOURCE_VERSION_REQUIRED } }, name, 'update');
    if (body.metadata.resourceVersion !== current.metadata.resourceVersion)
      throw storeError({ code: 409 }, name, 'update');
    const { status: _ignored, ...rest } = structuredClone(body);
    return this.change(kind, current, {
      ...rest,
      metadata: {
        ...rest.metadata,
        uid: current.metadata.uid,
        creationTimestamp: current.metadata.creationTimestamp,
      },
      ...(current.status === undefined ? {} : { status: current.status }),
    });
  }

  /** A merge patch of the status (a null field removes it), as a status write makes it. */
  private patchStatus(
    kind: ResourceKind,
    current: CustomResource,
    status: CustomResource['status'],
  ): CustomResource {
    const patched = mergePatch(current.status ?? {}, structuredClone(status ?? {}));
    return this.change(kind, current, { ...current, status: patched });
  }

  /**
   * Stores `next` in place of `current` under a fresh resourceVersion, unless it changes nothing:
   * the apiserver then writes nothing and keeps the resourceVersion.
   */
  private change(kind: ResourceKind, current: CustomResource, next: CustomResource): CustomResource {
    // As JSON, the way the apiserver compares them: an unset field and an absent one are alike.
    const unversioned = (object: CustomResource): CustomResource =>
      asJson({ ...object, metadata: { ...object.metadata, resourceVersion: '' } });
    if (isDeepStrictEqual(unversioned(current), unversioned(next))) return current;
    const changed = asJson({ ...next, metadata: { ...next.metadata, resourceVersion: this.next() } });
    this.of(kind).set(changed.metadata.name, { object: changed, written: this.revision });
    return changed;
  }

  /** Notes a write of `object` as the newest of its kind, if it is; the caller's copy of it. */
  private wrote(kind: ResourceKind, object: CustomResource): Stored {
    const version = object.metadata.resourceVersion;
    const newest = this.written.get(kind.kind);
    if (version !== undefined && (newest === undefined || isNewer(version, newest)))
      this.written.set(kind.kind, version);
    return stored(kind, structuredClone(object));
  }

  private next(): string {
    this.revision += 1;
    return String(this.revision);
  }
}

/**
 * Locks of one process: callers of a key take turns, each told what the previous one wrote.
 * Nobody can die holding one, so nobody ever takes one over.
 */
class InMemoryLocks implements Locks {
  /** Per key, what the next caller waits for: the current holder and those queued before it. */
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly lastWrites = new Map<string, string>();

  async run<T>(key: string, action: (held: Held) => Promise<{ result: T; wrote?: string }>): Promise<T> {
    const before = this.queues.get(key) ?? Promise.resolve();
    const turn = Promise.withResolvers<undefined>();
    const queue = before.then(() => turn.promise);
    this.queues.set(key, queue);
    await before;
    const held: Held = { lastWrite: this.lastWrites.get(key), tookOver: false };
    let wrote: string | undefined;
    try {
      const outcome = await action(held);
      wrote = outcome.wrote;
      return outcome.result;
    } finally {
      const told = wrote ?? held.lastWrite;
      if (told !== undefined) this.lastWrites.set(key, told);
      if (this.queues.get(key) === queue) this.queues.delete(key);
      turn.resolve(undefined);
    }
  }
}

/** What the apiserver answers a replace without a resourceVersion (custom resources need one). */
const RESOURCE_VERSION_REQUIRED =
  'metadata.resourceVersion: Invalid value: 0x0: must be specified for an update';

/**
 * Runs `step` as a call to the store: asynchronously, as every answer from a cluster is, with its
 * failures as a rejected promise.
 */
async function later<T>(step: () => T): Promise<T> {
  await Promise.resolve();
  return step();
}

/** A read's copy of an object: frozen, as the watch cache serves it. */
function read(kind: ResourceKind, object: CustomResource): Stored {
  return deepFreeze(stored(kind, structuredClone(object)));
}

/** Kubernetes metadata times: RFC 3339 in whole seconds. */
function kubernetesTime(time: Date): string {
  return `${time.toISOString().slice(0, 19)}Z`;
}

type Json = NonNullable<CustomResource['status']>;

/** An RFC 7386 JSON merge patch of `patch` onto `target`. */
function mergePatch(target: Json, patch: Json): Json {
  const result: Json = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) continue;
    if (isObject(value) && isObject(result[key])) result[key] = mergePatch(result[key], value);
    else if (isObject(value)) result[key] = mergePatch({}, value);
    else result[key] = value;
  }
  return Object.fromEntries(Object.entries(result).filter(([key]) => patch[key] !== null));
}

/** The object as JSON carries it (what the apiserver stores): no unset fields. */
function asJson(object: CustomResource): CustomResource {
  return JSON.parse(JSON.stringify(object)) as CustomResource;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
