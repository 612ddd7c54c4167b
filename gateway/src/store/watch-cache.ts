/**
 * A watch-fed cache of one kind's custom resources: listed once, then kept current by a watch
 * from the list's resourceVersion, with bookmarks. Reads are served from memory, already
 * converted into API messages; nothing but what the API needs of an object is kept (no
 * managedFields, no raw spec).
 *
 * Freshness, as ResourceStore relies on it:
 * - `synced` is true only while the cache mirrors the apiserver: after the first list and until
 *   a watch fails. A watch that fails (the apiserver restarting, the network) makes the cache
 *   stale until a new list has replaced its contents; a watch the server or the client library
 *   ends quietly (timeouts) is resumed from the last resourceVersion, which loses nothing, and
 *   a resume refused with 410 Gone lists again.
 * - `seen` and `gone` let a writer wait until the cache has seen its write, so that a caller reads its
 *   own writes from this replica.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CustomObjectsApi, Watch, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { GROUP, VERSION, type ResourceKind } from '../../../shared/resources.ts';
import { fromCustomResource, identityOf, intentOf, type CustomResource } from './objects.ts';
import type { Stored } from './store.ts';

/** What the cache keeps of one object. */
export interface CachedObject {
  /** The object's metadata without managedFields: what a replace must carry over. */
  metadata: CustomResource['metadata'];
  workspace: string;
  id: string;
  stored: Stored;
}

/** Objects per list page while (re)listing: bounded memory per response. */
const LIST_PAGE = 500;
/** Seconds after which the apiserver ends a watch (resumed at once from where it was). */
const WATCH_SECONDS = 20;
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5_000;

type WatchEnd = { kind: 'closed' } | { kind: 'gone' } | { kind: 'failed'; error: unknown };

export class KindCache {
  readonly kind: ResourceKind;
  private readonly objects = new Map<string, CachedObject>();
  private readonly workspaces = new Map<string, Map<string, CachedObject>>();
  private readonly api: CustomObjectsApi;
  private readonly watcher: Watch;
  private readonly path: string;
  private resourceVersion = '';
  /** The newest resourceVersion seen (list, event or bookmark), as a number for comparisons. */
  private newest = -1n;
  private isSynced = false;
  private listCount = 0;
  /** The current watch is being ended on purpose, to resume at once. */
  private resuming = false;
  private stopped = false;
  private current: AbortController | undefined;
  private readonly waiters = new Set<() => void>();
  /** Equal parts of messages (profile and version snapshots…) kept once. */
  private readonly shared = new SharedParts();
  private loop: Promise<void> | undefined;
  private firstSync: PromiseWithResolvers<void> = Promise.withResolvers();

  private readonly namespace: string;
  private readonly log: Logger;

  constructor(kubeConfig: KubeConfig, namespace: string, kind: ResourceKind, log: Logger) {
    this.kind = kind;
    this.namespace = namespace;
    this.log = log;
    this.api = kubeConfig.makeApiClient(CustomObjectsApi);
    this.watcher = new Watch(kubeConfig);
    this.path = `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${kind.plural}`;
  }

  /** Starts listing and watching; resolves once the cache first holds the whole kind. */
  start(): Promise<void> {
    this.loop ??= this.run();
    return this.firstSync.promise;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.abort();
    this.firstSync.resolve();
    this.wake();
    await this.loop;
  }

  /**
   * Ends the watch and resumes it from `resourceVersion`, as after a long disconnection; a
   * version the apiserver no longer holds makes it list again (410 Gone). For tests.
   */
  resumeFrom(resourceVersion: string): void {
    this.resourceVersion = resourceVersion;
    this.resuming = true;
    this.current?.abort();
  }

  /** How many times the cache has listed the whole kind. */
  get lists(): number {
    return this.listCount;
  }

  /** Whether reads may be served: listed, and the watch has not failed since. */
  get synced(): boolean {
    return this.isSynced;
  }

  /** The object of that Kubernetes name. */
  object(name: string): CachedObject | undefined {
    return this.objects.get(name);
  }

  /** The objects of a workspace, or of all workspaces for `-`. */
  inWorkspace(workspace: string): Iterable<CachedObject> {
    return workspace === '-' ? this.objects.values() : (this.workspaces.get(workspace)?.values() ?? []);
  }

  /**
   * Waits until the cache has seen the given resourceVersion (of a write to this kind), at most
   * `timeoutMs`; false when it has not by then.
   */
  seen(resourceVersion: string | undefined, timeoutMs: number): Promise<boolean> {
    const target = versionNumber(resourceVersion);
    if (target === undefined) return Promise.resolve(false);
    return this.until(() => this.newest >= target, timeoutMs);
  }

  /** Waits until the object of that name is gone from the cache, at most `timeoutMs`. */
  gone(name: string, timeoutMs: number): Promise<boolean> {
    return this.until(() => !this.objects.has(name), timeoutMs);
  }

  /** Waits until `condition` holds after some change, at most `timeoutMs`. */
  private async until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      const left = deadline - Date.now();
      if (left <= 0 || this.stopped) return false;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.waiters.add(done);
      });
    }
    return true;
  }

  private wake(): void {
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const resolve of waiting) resolve();
  }

  private async run(): Promise<void> {
    let backoff = BACKOFF_MIN_MS;
    let listed = false;
    while (!this.stopped) {
      try {
        if (!listed) {
          await this.relist();
          listed = true;
        }
        const end = await this.watchOnce();
        backoff = BACKOFF_MIN_MS;
        if (end.kind === 'gone') listed = false;
        if (end.kind === 'failed') throw end.error;
      } catch (error: unknown) {
        if (this.halted) break;
        this.markStale(error);
        listed = false;
        await sleep(backoff);
        backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
      }
    }
  }

  /** Whether stop() ran (a getter: it may have run during any await). */
  private get halted(): boolean {
    return this.stopped;
  }

  private markStale(error: unknown): void {
    if (this.isSynced)
      this.log.warn({ err: error, kind: this.kind.kind }, 'watch failed; cache stale until relisted');
    else this.log.debug({ err: error, kind: this.kind.kind }, 'list or watch failed; retrying');
    this.isSynced = false;
  }

  /** Replaces the contents with a fresh list, page by page, then serves again. */
  private async relist(): Promise<void> {
    const fresh = new Map<string, CustomResource>();
    let token: string | undefined;
    let version = '';
    do {
      const page = (await this.api.listNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: this.namespace,
        plural: this.kind.plural,
        limit: LIST_PAGE,
        ...(token === undefined ? {} : { _continue: token }),
      })) as { items: CustomResource[]; metadata?: { continue?: string; resourceVersion?: string } };
      for (const item of page.items) fresh.set(item.metadata.name, item);
      token = page.metadata?.continue || undefined;
      version = page.metadata?.resourceVersion ?? version;
    } while (token !== undefined && !this.stopped);
    this.objects.clear();
    this.workspaces.clear();
    for (const item of fresh.values()) this.put(item);
    this.advance(version);
    this.listCount++;
    this.isSynced = true;
    this.firstSync.resolve();
  }

  /** One watch from the current resourceVersion, until it ends. */
  private watchOnce(): Promise<WatchEnd> {
    return new Promise<WatchEnd>((resolve) => {
      let gone = false;
      const onEvent = (type: string, object: CustomResource & { code?: number }): void => {
        if (type === 'ERROR') {
          // 410 Gone: the resourceVersion left the apiserver's window; list again.
          gone = object.code === 410;
          this.current?.abort();
          return;
        }
        this.apply(type, object);
      };
      const onDone = (error: unknown): void => {
        const resumed = this.resuming;
        this.resuming = false;
        if (gone) resolve({ kind: 'gone' });
        else if (resumed || error === null || error === undefined || isQuietEnd(error))
          resolve({ kind: 'closed' });
        else resolve({ kind: 'failed', error });
      };
      this.watcher
        .watch(
          this.path,
          { resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: WATCH_SECONDS },
          onEvent,
          onDone,
        )
        .then((controller) => {
          this.current = controller;
          if (this.stopped) controller.abort();
        })
        .catch((error: unknown) => {
          resolve({ kind: 'failed', error });
        });
    });
  }

  private apply(type: string, object: CustomResource): void {
    if (type === 'ADDED' || type === 'MODIFIED') this.put(object);
    else if (type === 'DELETED') this.remove(object.metadata.name);
    this.advance(object.metadata.resourceVersion);
  }

  private advance(resourceVersion: string | undefined): void {
    if (resourceVersion === undefined || resourceVersion === '') return;
    this.resourceVersion = resourceVersion;
    const number = versionNumber(resourceVersion);
    if (number !== undefined && number > this.newest) this.newest = number;
    this.wake();
  }

  private put(object: CustomResource): void {
    const identity = identityOf(object);
    this.remove(object.metadata.name);
    // Written by hand, or by a release with looser rules: no API name can reach it.
    if (identity === undefined) return;
    const { managedFields: _dropped, ...metadata } = object.metadata as CustomResource['metadata'] & {
      managedFields?: unknown;
    };
    const entry: CachedObject = {
      metadata,
      ...identity,
      stored: deepFreeze({
        message: this.shared.intern(fromCustomResource(this.kind, object)),
        resourceVersion: object.metadata.resourceVersion ?? '',
        intent: intentOf(this.kind, object),
      }),
    };
    this.objects.set(object.metadata.name, entry);
    let workspace = this.workspaces.get(identity.workspace);
    if (workspace === undefined) {
      workspace = new Map();
      this.workspaces.set(identity.workspace, workspace);
    }
    workspace.set(object.metadata.name, entry);
  }

  private remove(name: string): void {
    const entry = this.objects.get(name);
    if (entry === undefined) return;
    this.objects.delete(name);
    const workspace = this.workspaces.get(entry.workspace);
    workspace?.delete(name);
    if (workspace?.size === 0) this.workspaces.delete(entry.workspace);
  }
}

/** etcd's resourceVersions are integers; anything else cannot be compared, only matched. */
function versionNumber(resourceVersion: string | undefined): bigint | undefined {
  return resourceVersion !== undefined && /^\d{1,20}$/.test(resourceVersion)
    ? BigInt(resourceVersion)
    : undefined;
}

/** The client library ends a watch that has been silent for 30 s: resuming from there loses nothing. */
function isQuietEnd(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

/**
 * Freezes a cached message, so that a handler that changes what it read fails loudly instead of
 * changing what every later caller reads.
 */
function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value) || value instanceof Date)
    return value;
  for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}

/**
 * Keeps one copy of equal message parts: engines of one profile and version carry equal
 * snapshots of them, each several hundred bytes, and thousands of engines would keep thousands
 * of copies. The parts are frozen, so sharing them is safe; a part no message uses any more is
 * forgotten with its last user.
 */
class SharedParts {
  private readonly parts = new Map<string, WeakRef<object>>();
  private readonly forget = new FinalizationRegistry<string>((key) => {
    if (this.parts.get(key)?.deref() === undefined) this.parts.delete(key);
  });

  /** The message with each object-valued field replaced by the shared equal copy, if any. */
  intern<T extends Record<string, unknown>>(message: T): T {
    const descriptors = Object.getOwnPropertyDescriptors(message);
    // Copied as they are: an engine's durations are getters (engines/live-durations.ts).
    const out = Object.defineProperties({}, descriptors) as Record<string, unknown>;
    for (const [field, { value }] of Object.entries(descriptors)) {
      if (typeof value !== 'object' || value === null || value instanceof Date) continue;
      const key = `${field}\u0000${JSON.stringify(value)}`;
      const known = this.parts.get(key)?.deref();
      if (known !== undefined) out[field] = known;
      else {
        const part = deepFreeze(value);
        this.parts.set(key, new WeakRef(part));
        this.forget.register(part, key);
      }
    }
    return out as T;
  }
}
