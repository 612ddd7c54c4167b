/**
 * A watch-fed copy of one Kubernetes collection: listed once in pages, then kept current by a
 * watch from the list's resourceVersion, with bookmarks. The gateway's read caches and the
 * operator's informers are both built on it; each decides what it keeps of an object (`keep`),
 * so that neither holds managedFields or anything else it never reads.
 *
 * Freshness:
 * - `synced` is true only while the copy mirrors the apiserver: after the first list and until a
 *   watch fails. A watch that fails (the apiserver restarting, the network) makes it stale until
 *   a new list has replaced its contents; a watch the server or the client library ends quietly
 *   (timeouts) is resumed from the last resourceVersion, which loses nothing, and a resume
 *   refused with 410 Gone lists again.
 * - `seen` and `gone` let a writer wait until the copy has seen its write.
 * - `onChange` hears every change, also those a relist finds (objects gone while the watch was
 *   down are reported gone), so that a controller misses no object.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CustomObjectsApi, Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { GROUP, VERSION } from './resources.ts';

/**
 * One page of a list, as the apiserver answers it: the continue token is `continue` in the JSON
 * (custom objects), `_continue` in client-node's typed lists (V1ListMeta).
 */
export interface ListPage {
  items: KubernetesObject[];
  metadata?: { continue?: string; _continue?: string; resourceVersion?: string };
}

export interface CollectionOptions<T> {
  kubeConfig: KubeConfig;
  /** The collection's path, e.g. `/api/v1/namespaces/ns/pods`. */
  path: string;
  labelSelector?: string;
  /** One page of the list, `limit` objects from `token`. */
  listPage(limit: number, token: string | undefined): Promise<ListPage>;
  /** What is kept of an object; undefined keeps nothing of it (it reads as absent). */
  keep(object: KubernetesObject): T | undefined;
  /** Hears each change of a kept object: what was there before, and what is there now. */
  onChange?(name: string, before: T | undefined, after: T | undefined): void;
  log: Logger;
  /** Named in log lines, e.g. the kind. */
  what: string;
  /**
   * Runs each whole list (every page) of the collection when its turn comes, so that several
   * collections can list one at a time (see oneAtATime); at once when not given.
   */
  takeTurn?: <R>(list: () => Promise<R>) => Promise<R>;
}

/**
 * Turns for lists taken one at a time, in the order asked: thousands of objects of several
 * collections listed at once are several pages of whole objects in memory at the same time, a
 * peak the process's heap keeps. A list that fails ends its turn.
 */
export function oneAtATime(): <R>(list: () => Promise<R>) => Promise<R> {
  let previous: Promise<unknown> = Promise.resolve();
  return <R>(list: () => Promise<R>): Promise<R> => {
    const turn = previous.then(list);
    previous = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  };
}

/** The collection of one kind of the API's custom resources in a namespace: its path and pages. */
export function customResources(
  kubeConfig: KubeConfig,
  namespace: string,
  plural: string,
): Pick<CollectionOptions<unknown>, 'path' | 'listPage'> {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  return {
    path: `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${plural}`,
    listPage: (limit, token) =>
      api.listNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural,
        limit,
        ...(token === undefined ? {} : { _continue: token }),
      }) as Promise<ListPage>,
  };
}

/** The HTTP status of a failed Kubernetes call, if it has one. */
export function statusCode(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'number'
    ? error.code
    : undefined;
}

/** A failed call's message, short enough for one log line (its stack goes to debug level). */
export function reasonOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 300);
}

/** Objects per list page while (re)listing: bounded memory per response. */
const LIST_PAGE = 500;
/** Seconds after which the apiserver ends a watch (resumed at once from where it was). */
const WATCH_SECONDS = 20;
const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5_000;

/** One caller of `until`: what it waits for, and how it is answered. */
interface Waiter {
  holds(): boolean;
  settle(held: boolean): void;
}

type WatchEnd = { kind: 'closed' } | { kind: 'gone' } | { kind: 'failed'; error: unknown };

export class WatchedCollection<T> {
  private readonly objects = new Map<string, T>();
  /** The resourceVersions of held writes whose watch event has not come yet, by name. */
  private readonly heldAt = new Map<string, bigint>();
  private readonly options: CollectionOptions<T>;
  private readonly watcher: Watch;
  private resourceVersion = '';
  /** The newest resourceVersion seen (list, event or bookmark), as a number for comparisons. */
  private newest = -1n;
  private isSynced = false;
  /** Whether the first failure to list was logged: later ones are retried quietly. */
  private waitingNoted = false;
  private listCount = 0;
  /** The current watch is being ended on purpose, to resume at once. */
  private resuming = false;
  private stopped = false;
  private current: AbortController | undefined;
  private readonly waiters = new Set<Waiter>();
  private loop: Promise<void> | undefined;
  private readonly firstSync: PromiseWithResolvers<void> = Promise.withResolvers();

  constructor(options: CollectionOptions<T>) {
    this.options = options;
    this.watcher = new Watch(options.kubeConfig);
  }

  /** Starts listing and watching; resolves once the copy first holds the whole collection. */
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

  /** How many times the whole collection has been listed. */
  get lists(): number {
    return this.listCount;
  }

  /** Whether reads may be served: listed, and the watch has not failed since. */
  get synced(): boolean {
    return this.isSynced;
  }

  get size(): number {
    return this.objects.size;
  }

  /** What is kept of the object of that name. */
  get(name: string): T | undefined {
    return this.objects.get(name);
  }

  values(): IterableIterator<T> {
    return this.objects.values();
  }

  /** Whether the copy has seen the given resourceVersion (of a write to this collection). */
  has(resourceVersion: string | undefined): boolean {
    const target = versionNumber(resourceVersion);
    return target !== undefined && this.newest >= target;
  }

  /**
   * Holds what is kept of an object its writer has just written (at `resourceVersion`), before
   * the write's watch event arrives, so that the writer reads its own write at once. A copy that
   * has seen that resourceVersion already holds the write, or a newer version, and is left as it
   * is; the watch event replaces the held object when it comes.
   */
  hold(name: string, resourceVersion: string | undefined, kept: T): void {
    const version = versionNumber(resourceVersion);
    if (version === undefined || this.has(resourceVersion)) return;
    this.heldAt.set(name, version);
    const before = this.objects.get(name);
    this.objects.set(name, kept);
    this.options.onChange?.(name, before, kept);
    this.wake();
  }

  /** Waits until the copy has seen the given resourceVersion, at most `timeoutMs`; false if not by then. */
  seen(resourceVersion: string | undefined, timeoutMs: number): Promise<boolean> {
    if (versionNumber(resourceVersion) === undefined) return Promise.resolve(false);
    return this.until(() => this.has(resourceVersion), timeoutMs);
  }

  /** Waits until the object of that name is gone, at most `timeoutMs`. */
  gone(name: string, timeoutMs: number): Promise<boolean> {
    return this.until(() => !this.objects.has(name), timeoutMs);
  }

  /** Waits until the object of that name is there and `test` holds for it, at most `timeoutMs`. */
  async when(name: string, test: (object: T) => boolean, timeoutMs: number): Promise<T | undefined> {
    const matches = (): boolean => {
      const object = this.objects.get(name);
      return object !== undefined && test(object);
    };
    return (await this.until(matches, timeoutMs)) ? this.objects.get(name) : undefined;
  }

  /**
   * Waits until `condition` holds after some change, at most `timeoutMs`. Each change checks the
   * waiting conditions and settles only those that hold: the others keep their timer, so that a
   * burst of writes each awaiting its own event costs one check per waiter and event.
   */
  private until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
    if (condition()) return Promise.resolve(true);
    if (timeoutMs <= 0 || this.stopped) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        holds: condition,
        settle: (held) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(held);
        },
      };
      const timer = setTimeout(() => {
        waiter.settle(condition());
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) {
      const held = waiter.holds();
      if (held || this.stopped) waiter.settle(held);
    }
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
    const { log, what, path } = this.options;
    const code = statusCode(error);
    const reason = reasonOf(error);
    // What a starting or busy cluster answers (a kind not served yet while its CRD settles, a
    // new kind's storage starting, overload, a dropped connection) is routine: one line, no
    // stack; the stack is kept at debug level for what is not.
    log.debug({ err: error, what }, 'list or watch failed');
    if (this.isSynced) {
      if (transient(code)) log.info({ what, code, reason }, 'watch ended; relisting');
      else log.warn({ what, code, reason }, 'watch failed; copy stale until relisted');
    } else if (!this.waitingNoted) {
      this.waitingNoted = true;
      // A refusal (401, 403: a missing permission) will not pass by itself: say so louder.
      if (transient(code))
        log.info({ what, path, code, reason }, 'not listed yet; retrying until the cluster serves it');
      else log.warn({ what, path, code, reason }, 'cannot list; retrying');
    }
    this.isSynced = false;
  }

  /** Replaces the contents with a fresh list, page by page, then serves again. */
  private async relist(): Promise<void> {
    const { takeTurn } = this.options;
    const { fresh, version } = await (takeTurn === undefined
      ? this.listAll()
      : takeTurn(() => this.listAll()));
    const listedAt = versionNumber(version);
    for (const name of [...this.objects.keys()])
      if (!fresh.has(name) && !this.heldPast(name, listedAt)) this.remove(name);
    for (const [name, { kept, at }] of fresh) if (!this.heldPast(name, at)) this.store(name, kept);
    this.advance(version);
    this.listCount++;
    this.isSynced = true;
    this.waitingNoted = false;
    this.firstSync.resolve();
  }

  /**
   * What is kept of every object of the collection, page by page, and the list's
   * resourceVersion. Each page is kept as it arrives, so that the list never holds more than one
   * page of whole objects: a collection of thousands listed whole (with managedFields, pod
   * templates) made a peak the process's heap kept long after.
   */
  private async listAll(): Promise<{
    fresh: Map<string, { kept: T | undefined; at: bigint | undefined }>;
    version: string;
  }> {
    const fresh = new Map<string, { kept: T | undefined; at: bigint | undefined }>();
    let token: string | undefined;
    let version = '';
    do {
      const page = await this.options.listPage(LIST_PAGE, token);
      for (const item of page.items)
        fresh.set(item.metadata?.name ?? '', {
          kept: this.options.keep(item),
          at: versionNumber(item.metadata?.resourceVersion),
        });
      token = continueToken(page);
      version = page.metadata?.resourceVersion ?? version;
    } while (token !== undefined && !this.stopped);
    return { fresh, version };
  }

  /** One watch from the current resourceVersion, until it ends. */
  private watchOnce(): Promise<WatchEnd> {
    return new Promise<WatchEnd>((resolve) => {
      let gone = false;
      const onEvent = (type: string, object: KubernetesObject & { code?: number }): void => {
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
      const query = {
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: WATCH_SECONDS,
        ...(this.options.labelSelector === undefined ? {} : { labelSelector: this.options.labelSelector }),
      };
      this.watcher
        .watch(this.options.path, query, onEvent, onDone)
        .then((controller) => {
          this.current = controller;
          if (this.stopped) controller.abort();
        })
        .catch((error: unknown) => {
          resolve({ kind: 'failed', error });
        });
    });
  }

  private apply(type: string, object: KubernetesObject): void {
    if (type === 'ADDED' || type === 'MODIFIED') this.put(object);
    else if (type === 'DELETED') this.remove(object.metadata?.name ?? '');
    this.advance(object.metadata?.resourceVersion);
  }

  private advance(resourceVersion: string | undefined): void {
    if (resourceVersion === undefined || resourceVersion === '') return;
    this.resourceVersion = resourceVersion;
    const number = versionNumber(resourceVersion);
    if (number !== undefined && number > this.newest) this.newest = number;
    this.wake();
  }

  private put(object: KubernetesObject): void {
    const name = object.metadata?.name ?? '';
    if (this.heldPast(name, versionNumber(object.metadata?.resourceVersion))) return;
    this.store(name, this.options.keep(object));
  }

  /**
   * Whether the object of that name is a write held since `version` was read (an event or a
   * list of an older version, two writes in a row by this replica): it stays, or the reader
   * would go back in time, until its own version is seen. A hold is over once it is.
   */
  private heldPast(name: string, version: bigint | undefined): boolean {
    const held = this.heldAt.get(name);
    if (held === undefined) return false;
    if (version !== undefined && version < held) return true;
    this.heldAt.delete(name);
    return false;
  }

  /** Holds what is kept of the object of that name; nothing kept reads as absent. */
  private store(name: string, kept: T | undefined): void {
    if (kept === undefined) {
      this.remove(name);
      return;
    }
    const before = this.objects.get(name);
    this.objects.set(name, kept);
    this.options.onChange?.(name, before, kept);
  }

  private remove(name: string): void {
    this.heldAt.delete(name);
    const before = this.objects.get(name);
    if (before === undefined) return;
    this.objects.delete(name);
    this.options.onChange?.(name, before, undefined);
  }
}

/** The token of the next page; undefined on the last. */
function continueToken(page: ListPage): string | undefined {
  const token = page.metadata?.continue ?? page.metadata?._continue;
  return token === undefined || token === '' ? undefined : token;
}

/** etcd's resourceVersions are integers; anything else cannot be compared, only matched. */
export function versionNumber(resourceVersion: string | undefined): bigint | undefined {
  return resourceVersion !== undefined && /^\d{1,20}$/.test(resourceVersion)
    ? BigInt(resourceVersion)
    : undefined;
}

/** Whether `a` is a later resourceVersion than `b` (false when either cannot be compared). */
export function isNewer(a: string | undefined, b: string | undefined): boolean {
  const x = versionNumber(a);
  const y = versionNumber(b);
  return x !== undefined && y !== undefined && x > y;
}

/** The client library ends a watch that has been silent for 30 s: resuming from there loses nothing. */
function isQuietEnd(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

/**
 * Answers a starting or busy cluster gives, or none (a dropped connection): retried without alarm.
 * 404 is a kind whose CRD is not Established yet; 410 a watch resumed too late.
 */
function transient(code: number | undefined): boolean {
  return code === undefined || [404, 408, 410, 429, 500, 503, 504].includes(code);
}
