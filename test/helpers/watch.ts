import { Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';

/** One event of a Kubernetes watch. */
export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** Options of {@link watchUntil}. */
export interface WatchUntilOptions {
  /** What is awaited, for the timeout message. */
  what: string;
  /** Extra query parameters such as labelSelector or fieldSelector. */
  query?: Record<string, string>;
  timeoutMs?: number;
  /**
   * Runs once the watch has delivered the collection's current objects, so that whatever it
   * causes (a deletion, say) is certain to be seen. A rejection fails the wait.
   */
  trigger?: () => Promise<unknown>;
}

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/**
 * Watches `path` (a collection, e.g. `/api/v1/namespaces/ns/pods`) and resolves with the first
 * object whose event satisfies `predicate`. The watch starts with the collection's current
 * objects as ADDED events (a watch-list), so a condition that already holds resolves at once,
 * and nothing that happens between a list and a watch can be missed.
 */
export async function watchUntil<T extends KubernetesObject>(
  kubeConfig: KubeConfig,
  path: string,
  predicate: (event: WatchEvent<T>) => boolean,
  options: WatchUntilOptions,
): Promise<T> {
  // Without an end at the sync, only a matching event ends the wait, and it brings its object.
  return (await watchCollection(kubeConfig, path, predicate, options)) as T;
}

/**
 * Resolves once the object `name` of the collection at `path` is gone: deleted while watched, or
 * already absent when the watch has delivered the collection's current objects.
 */
export async function watchUntilGone(
  kubeConfig: KubeConfig,
  path: string,
  name: string,
  options: WatchUntilOptions,
): Promise<void> {
  let present = false;
  await watchCollection<KubernetesObject>(
    kubeConfig,
    path,
    (event) => {
      if (event.type === 'ADDED') present = true;
      return event.type === 'DELETED';
    },
    {
      ...options,
      query: { ...options.query, fieldSelector: `metadata.name=${name}` },
      doneWhenSynced: () => !present,
    },
  );
}

/**
 * The watch behind both: ends with the object of the first event that satisfies `predicate`,
 * or with nothing when `doneWhenSynced` says so once the current objects have been delivered.
 */
async function watchCollection<T extends KubernetesObject>(
  kubeConfig: KubeConfig,
  path: string,
  predicate: (event: WatchEvent<T>) => boolean,
  options: WatchUntilOptions & { doneWhenSynced?: () => boolean },
): Promise<T | undefined> {
  const { doneWhenSynced } = options;
  const watch = new Watch(kubeConfig);
  // The client ends a watch after 30 s without data, which a quiet wait outlasts (an engine
  // idling towards its limit sends nothing). Its field is private, without a setter: set it so
  // that only our own timeout ends the wait.
  (watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs =
    (options.timeoutMs ?? 30_000) + 10_000;
  let last: WatchEvent<T> | undefined;
  let controller: AbortController | undefined;
  let settled = false;
  const result = new Promise<T | undefined>((resolve, reject) => {
    const timer = setTimeout(() => {
      const seen = last ? `; last event ${last.type} ${JSON.stringify(last.object)}` : '; no event';
      reject(new Error(`Timed out waiting for ${options.what}${seen}`));
    }, options.timeoutMs ?? 30_000);
    const finish = (settle: () => void): void => {
      clearTimeout(timer);
      settled = true;
      settle();
    };
    const runTrigger = (): void => {
      options.trigger?.().catch((error: unknown) => {
        finish(() => {
          reject(asError(error));
        });
      });
    };
    watch
      .watch(
        path,
        {
          sendInitialEvents: true,
          resourceVersionMatch: 'NotOlderThan',
          allowWatchBookmarks: true,
          ...options.query,
        },
        (type: string, object: T) => {
          const event = { type, object } as WatchEvent<T>;
          if (event.type === 'BOOKMARK') {
            if (object.metadata?.annotations?.[INITIAL_EVENTS_END] !== 'true') return;
            if (!settled && doneWhenSynced?.() === true) {
              finish(() => {
                resolve(undefined);
              });
              return;
            }
            runTrigger();
            return;
          }
          last = event;
          if (!settled && predicate(event)) {
            finish(() => {
              resolve(object);
            });
          }
        },
        (error: unknown) => {
          if (error && !settled) {
            finish(() => {
              reject(asError(error));
            });
          }
        },
      )
      .then(
        (started) => {
          controller = started;
          // The predicate may have held before the watch call returned its controller.
          if (settled) started.abort();
        },
        (error: unknown) => {
          finish(() => {
            reject(asError(error));
          });
        },
      );
  });
  try {
    return await result;
  } finally {
    controller?.abort();
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(JSON.stringify(error));
}
