/**
 * The controller runtime: workers take keys from a de-duplicating queue and reconcile them from
 * the current state (level-triggered: what queued a key never matters). The ClusterView's
 * watches feed the queue. A failed reconcile comes back with exponential backoff; a reconcile may
 * ask to run again after a delay (deadlines).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import { NotLeading } from '../kube/client.ts';
import { reasonOf, statusCode } from '../../../shared/watched-collection.ts';
import { controllerMetrics } from './metrics.ts';
import { WorkQueue } from './work-queue.ts';

export interface ReconcileResult {
  /** Run again after this long even if nothing changes (e.g. an idle deadline). */
  requeueAfterMs?: number;
}

export interface ControllerOptions {
  name: string;
  reconcile(key: string): Promise<ReconcileResult | undefined>;
  workers?: number;
  /** The group a key is served fairly within (see WorkQueueOptions); first come, first served when not given. */
  groupOf?: (key: string) => string;
  log: Logger;
  registry: Registry;
}

export interface Controller {
  /** Queues a key: its resource, or something it owns, changed. */
  enqueue(key: string): void;
  /** Starts the workers; keys queued before wait until then. */
  run(): void;
  stop(): Promise<void>;
}

/** How long a stop waits for reconciles in flight. */
const STOP_GRACE_MS = 2_000;

/** One controller: its queue now, its workers once `run` is called. */
export function startController(options: ControllerOptions): Controller {
  const queue = new WorkQueue(options.groupOf ? { groupOf: options.groupOf } : {});
  const { reconciles, errors, duration, watchQueue } = controllerMetrics(options.registry);
  watchQueue(options.name, queue);
  reconciles.inc({ controller: options.name }, 0);
  const log = options.log.child({ controller: options.name });
  let stopped = false;

  const worker = async (): Promise<void> => {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      const stopTimer = duration.startTimer({ controller: options.name });
      try {
        const result = await options.reconcile(key);
        queue.forget(key);
        if (result?.requeueAfterMs !== undefined) queue.addAfter(key, result.requeueAfterMs);
      } catch (error: unknown) {
        errors.inc({ controller: options.name });
        // A write race (409) or a busy or restarting apiserver (429, 503, 504) is routine: the
        // retry sorts it out. After a stop, or once leadership lapsed, work abandoned is not news
        // either. Otherwise one line with the reason; the stack only at debug level.
        const code = statusCode(error);
        const routine = stopped || error instanceof NotLeading || [409, 429, 503, 504].includes(code ?? 0);
        log.debug({ err: error, key }, 'reconcile failed');
        if (!routine) {
          log.warn({ key, code, reason: reasonOf(error) }, 'reconcile failed; retrying with backoff');
        }
        queue.retry(key);
      } finally {
        reconciles.inc({ controller: options.name });
        stopTimer();
        queue.done(key);
      }
    }
  };
  let workers: Promise<void>[] = [];

  return {
    enqueue: (key) => {
      queue.add(key);
    },
    run: () => {
      if (workers.length === 0 && !stopped)
        workers = Array.from({ length: options.workers ?? 4 }, () => worker());
    },
    async stop(): Promise<void> {
      stopped = true;
      queue.shutDown();
      // Reconciles in flight may finish, but no longer than the grace: an apiserver that is
      // itself stopping can keep a request for a minute, and a stop must stay bounded. What is
      // left undone is picked up by the next leader from the objects themselves.
      const grace = sleep(STOP_GRACE_MS, 'late' as const, { ref: false });
      if ((await Promise.race([Promise.all(workers), grace])) === 'late') {
        log.warn({ graceMs: STOP_GRACE_MS }, 'reconciles still running at stop; abandoned');
      }
    },
  };
}
