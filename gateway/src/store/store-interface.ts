/**
 * What the services need of the resources' storage, apart from where it lives: the Kubernetes
 * store (store.ts) serves the gateway, an in-memory one (memory-store.ts) serves unit tests of
 * the services' rules. test/store/store-contract.ts holds both to the same behaviour.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { ResourceKind } from '../../../shared/resources.ts';
import type { IndexSpec, OrderedRun } from '../list/ordered-index.ts';
import type { Held } from './lease-lock.ts';
import type { Intent } from './objects.ts';

/** An API message as stored, with the resourceVersion that guards its next update. */
export interface Stored {
  message: Record<string, unknown>;
  resourceVersion: string;
  /** An engine's wanted lifecycle; empty for other kinds. */
  intent: Intent;
}

/** How a write treats what is not in the API message. */
export interface WriteOptions {
  /** An engine's wanted lifecycle, written to its spec. */
  intent?: Intent;
  /**
   * The status fields (JSON names) this write sets, when not all: status fields that the
   * operator reports (state, urls, disk sizes…) must not be overwritten with what the gateway
   * read earlier.
   */
  statusFields?: readonly string[];
}

/** Locks every gateway replica honours, one per key (quota checks, alias moves). */
export interface Locks {
  /**
   * Runs `action` holding the lock of `key`; `action` returns its result and the resourceVersion
   * it wrote (if any), which the next holder is told.
   */
  run<T>(key: string, action: (held: Held) => Promise<{ result: T; wrote?: string }>): Promise<T>;
}

/**
 * API resources of every kind, by resource name. Updates and deletes carry the resourceVersion
 * the caller read: a concurrent change makes them fail with ABORTED instead of silently
 * overwriting it. A caller reads its own writes at once, in gets and lists. Lists come in no
 * promised order: callers sort.
 */
export interface Store {
  /** Locks every replica honours (quota checks). */
  readonly locks: Locks;
  /** Creates the resource; ALREADY_EXISTS when its name is taken. */
  create(kind: ResourceKind, message: { name: string }, options?: WriteOptions): Promise<Stored>;
  /** The resource of `name`; NOT_FOUND when there is none. */
  get(kind: ResourceKind, name: string): Promise<Stored>;
  /** Every resource of `kind` in a workspace, or in all workspaces for `-`. */
  list(kind: ResourceKind, workspace: string): Promise<Stored[]>;
  /**
   * The resources of `kind` in a workspace (or in all workspaces for `-`) that `spec` puts in
   * `group`, in the order of `spec`: what a list page reads. The gateway's watch cache keeps
   * such runs sorted as resources change (list/ordered-index.ts); without one they are sorted
   * on each call. The run may be live: read it before anything awaits.
   */
  ordered(
    kind: ResourceKind,
    workspace: string,
    spec: IndexSpec<Stored>,
    group: string,
  ): Promise<OrderedRun<Stored>>;
  /**
   * Every resource of `kind` in a workspace, for a decision taken under a lock: including what
   * the previous holder wrote, wherever it ran.
   */
  listHeld(kind: ResourceKind, workspace: string, held: Held): Promise<Stored[]>;
  /** Replaces the resource if it is still at `resourceVersion`; ABORTED otherwise. */
  update(
    kind: ResourceKind,
    message: { name: string },
    resourceVersion: string,
    options?: WriteOptions,
  ): Promise<Stored>;
  /**
   * Sets annotations on the resource's object (not part of the API message), e.g. the time of a
   * user's latest activity, which the operator reads. NOT_FOUND when it is gone.
   */
  annotate(kind: ResourceKind, name: string, annotations: Readonly<Record<string, string>>): Promise<void>;
  /** Deletes the resource, if given only while it is at `resourceVersion`; NOT_FOUND when gone. */
  delete(kind: ResourceKind, name: string, resourceVersion?: string): Promise<void>;
  /**
   * Waits (bounded) until reads include the write of that resourceVersion, which may have been
   * made by another replica; true when they do.
   */
  caughtUp(kind: ResourceKind, resourceVersion: string): Promise<boolean>;
  /** The newest resourceVersion this store has written of `kind`: what a lock's next holder awaits. */
  newestWrite(kind: ResourceKind): string | undefined;
}

/**
 * Where the stored resources live: the cluster and namespace where their engines' pods run too.
 * Kept apart from {@link Store}: only the calls that reach into engines' pods need it.
 */
export interface ClusterPlacement {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
}
