/**
 * A watch-fed cache of one kind's custom resources (shared/watched-collection.ts lists and
 * watches, and says when it is in sync). Reads are served from memory, already converted into
 * API messages; nothing but what the API needs of an object is kept (no managedFields, no raw
 * spec). A writer hands its write to the cache (`wrote`), so that a caller reads its own writes
 * from this replica at once; `seen` and `gone` let a writer wait until the watch has brought a
 * write (its own or another replica's).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ResourceKind } from '../../../shared/resources.ts';
import { GroupIndex } from '../../../shared/group-index.ts';
import { deepFreeze, SharedParts } from '../../../shared/shared-parts.ts';
import { customResources, WatchedCollection } from '../../../shared/watched-collection.ts';
import { OrderedIndex, type IndexSpec, type OrderedRun } from '../list/ordered-index.ts';
import { fromCustomResource, identityOf, intentOf, type CustomResource } from './objects.ts';
import type { Stored } from './store-interface.ts';

/** What the cache keeps of one object. */
export interface CachedObject {
  /** The object's metadata without managedFields: what a replace must carry over. */
  metadata: CustomResource['metadata'];
  workspace: string;
  id: string;
  stored: Stored;
}

/**
 * Ordered indexes a kind's cache keeps at most: each is built on the first list that asks for its
 * order (and grouping), kept up to date from then on, and dropped when it has been asked for
 * least recently of more. An index costs a reference (8 bytes) per object.
 */
const MAX_INDEXES = 16;

/** A run of cached objects read as the stored resources they hold. */
function storedRun(run: OrderedRun<CachedObject>): OrderedRun<Stored> {
  return {
    get size() {
      return run.size;
    },
    at: (index) => run.at(index)?.stored,
    after: (key) => run.after(key),
  };
}

/**
 * One kind's custom resources, kept as the API messages they read as (shared/watched-collection.ts
 * keeps them current), indexed by workspace.
 */
export class KindCache {
  readonly kind: ResourceKind;
  private readonly collection: WatchedCollection<CachedObject>;
  private readonly workspaces = new GroupIndex<CachedObject>();
  /** Equal parts of messages (profile and version snapshots…) kept once. */
  private readonly shared = new SharedParts();
  /** Ordered indexes by id, the most recently asked for last. */
  private readonly indexes = new Map<string, OrderedIndex<CachedObject>>();

  constructor(kubeConfig: KubeConfig, namespace: string, kind: ResourceKind, log: Logger) {
    this.kind = kind;
    this.collection = new WatchedCollection<CachedObject>({
      kubeConfig,
      ...customResources(kubeConfig, namespace, kind.plural),
      // This replica's own write, held since it was answered (wrote), is read once.
      keep: (object) => this.held(object as CustomResource) ?? this.entry(object as CustomResource),
      onChange: (name, before, after) => {
        this.workspaces.update(name, before, after, (o) => o.workspace);
        for (const index of this.indexes.values()) index.update(before, after);
      },
      log,
      what: kind.kind,
    });
  }

  /** Starts listing and watching; resolves once the cache first holds the whole kind. */
  start(): Promise<void> {
    return this.collection.start();
  }

  stop(): Promise<void> {
    return this.collection.stop();
  }

  /** See WatchedCollection.resumeFrom. For tests. */
  resumeFrom(resourceVersion: string): void {
    this.collection.resumeFrom(resourceVersion);
  }

  /** How many times the cache has listed the whole kind. */
  get lists(): number {
    return this.collection.lists;
  }

  /** Whether reads may be served: listed, and the watch has not failed since. */
  get synced(): boolean {
    return this.collection.synced;
  }

  /** The object of that Kubernetes name. */
  object(name: string): CachedObject | undefined {
    return this.collection.get(name);
  }

  /** The objects of a workspace, or of all workspaces for `-`. */
  inWorkspace(workspace: string): Iterable<CachedObject> {
    return workspace === '-' ? this.collection.values() : this.workspaces.of(workspace);
  }

  /**
   * The objects of a workspace (or of all workspaces for `-`) that `spec` puts in `group`, in
   * the order of `spec`, as an index kept up to date with every change (built now if no list
   * asked for it lately). The run is live: read it before anything awaits.
   */
  ordered(workspace: string, spec: IndexSpec<Stored>, group: string): OrderedRun<Stored> {
    const everywhere = workspace === '-';
    const id = `${spec.id}\u0000${everywhere ? 'all' : 'workspace'}`;
    let index = this.indexes.get(id);
    if (index === undefined) {
      index = new OrderedIndex<CachedObject>(
        {
          id,
          key: (object) => spec.key(object.stored),
          compare: (a, b) => spec.compare(a, b),
          group: (object) => {
            const value = spec.group(object.stored);
            return value === undefined ? undefined : `${everywhere ? '' : object.workspace}\u0000${value}`;
          },
        },
        this.collection.values(),
      );
    } else this.indexes.delete(id);
    this.indexes.set(id, index);
    if (this.indexes.size > MAX_INDEXES) {
      const [oldest] = this.indexes.keys();
      if (oldest !== undefined) this.indexes.delete(oldest);
    }
    return storedRun(index.group(`${everywhere ? '' : workspace}\u0000${group}`));
  }

  /** Holds an object this replica has just written, until its watch event arrives (see WatchedCollection.hold). */
  wrote(object: CustomResource): void {
    const entry = this.entry(object);
    if (entry !== undefined)
      this.collection.hold(object.metadata.name, object.metadata.resourceVersion, entry);
  }

  /** Waits until the cache has seen the resourceVersion of a write, at most `timeoutMs`. */
  seen(resourceVersion: string | undefined, timeoutMs: number): Promise<boolean> {
    return this.collection.seen(resourceVersion, timeoutMs);
  }

  /** Waits until the object of that name is there and `test` holds for it, at most `timeoutMs`. */
  when(
    name: string,
    test: (object: CachedObject) => boolean,
    timeoutMs: number,
  ): Promise<CachedObject | undefined> {
    return this.collection.when(name, test, timeoutMs);
  }

  /** Waits until the object of that name is gone from the cache, at most `timeoutMs`. */
  gone(name: string, timeoutMs: number): Promise<boolean> {
    return this.collection.gone(name, timeoutMs);
  }

  /** What the cache holds of this very version of the object, if anything. */
  private held(object: CustomResource): CachedObject | undefined {
    const current = this.collection.get(object.metadata.name);
    const version = object.metadata.resourceVersion;
    return current !== undefined && version !== undefined && current.stored.resourceVersion === version
      ? current
      : undefined;
  }

  /** What is kept of an object: its message and what a replace needs; nothing when no API name reaches it. */
  private entry(object: CustomResource): CachedObject | undefined {
    const identity = identityOf(object);
    // Written by hand, or by a release with looser rules: no API name can reach it.
    if (identity === undefined) return undefined;
    const { managedFields: _dropped, ...metadata } = object.metadata as CustomResource['metadata'] & {
      managedFields?: unknown;
    };
    return {
      metadata,
      ...identity,
      stored: deepFreeze({
        message: this.shared.intern(fromCustomResource(this.kind, object)),
        resourceVersion: object.metadata.resourceVersion ?? '',
        intent: intentOf(this.kind, object),
      }),
    };
  }
}
