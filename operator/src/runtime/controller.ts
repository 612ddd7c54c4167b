import { setTimeout as sleep } from 'node:timers/promises';
/**
 * The controller runtime: informers turn every change of a watched object into the key of the
 * resource it belongs to; workers take keys from a de-duplicating queue and reconcile them from
 * the current state (level-triggered: the event type never matters). A failed reconcile comes
 * back with exponential backoff; a reconcile may ask to run again after a delay (deadlines).
 */
import {
  makeInformer,
  type KubeConfig,
  type KubernetesObject,
  type ListPromise,
} from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import { statusCode } from '../kube/client.ts';
import { controllerMetrics } from './metrics.ts';
import { WorkQueue } from './work-queue.ts';

/** One watched collection and how its objects map to reconcile keys. */
export interface Source {
  path: string;
  list: ListPromise<KubernetesObject>;
  labelSelector?: string;
  /** The key of the resource an object belongs to, if any. */
  keyOf(object: KubernetesObject): string | undefined;
}

export interface ReconcileResult {
  /** Run again after this long even if nothing changes (e.g. an idle deadline). */
  requeueAfterMs?: number;
}

export interface ControllerOptions {
  name: string;
  kubeConfig: KubeConfig;
  sources: readonly Source[];
  reconcile(key: string): Promise<ReconcileResult | undefined>;
  workers?: number;
  log: Logger;
  registry: Registry;
}

export interface Controller {
  /** Queues a key by hand (tests, resync). */
  enqueue(key: string): void;
  stop(): Promise<void>;
}

/** How long a stop waits for reconciles in flight. */
const STOP_GRACE_MS = 2_000;

/** Starts the informers and workers of one controller. */
export async function startController(options: ControllerOptions): Promise<Controller> {
  const queue = new WorkQueue();
  const { reconciles, errors, duration, watchQueue } = controllerMetrics(options.registry);
  watchQueue(options.name, () => queue.depth);
  reconciles.inc({ controller: options.name }, 0);
  const log = options.log.child({ controller: options.name });
  let stopped = false;
  const informers = options.sources.map((source) => {
    const informer = makeInformer(options.kubeConfig, source.path, source.list, source.labelSelector);
    const enqueue = (object: KubernetesObject): void => {
      const key = source.keyOf(object);
      if (key !== undefined) queue.add(key);
    };
    informer.on('add', enqueue);
    informer.on('update', enqueue);
    informer.on('delete', enqueue);
    // An informer stops on a watch error; start it again after a pause (it lists afresh).
    informer.on('error', (error: unknown) => {
      if (stopped) return;
      // A new kind's storage starting (429) is routine at start: one line, no stack.
      if (statusCode(error) === 429)
        log.info({ path: source.path }, 'watch refused for now (429); restarting');
      else log.warn({ err: error, path: source.path }, 'watch failed; restarting');
      setTimeout(() => {
        informer.start().catch(() => undefined);
      }, 1000).unref();
    });
    return informer;
  });
  await Promise.all(informers.map((i) => i.start()));

  const worker = async (): Promise<void> => {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      const stopTimer = duration.startTimer({ controller: options.name });
      try {
        const result = await options.reconcile(key);
        queue.forget(key);
        if (result?.requeueAfterMs !== undefined) queue.addAfter(key, result.requeueAfterMs);
      } catch (error: unknown) {
        errors.inc({ controller: options.name });
        // A write race (409) or a busy apiserver (429) is routine: the retry sorts it out.
        // After a stop, work abandoned against a cluster going away fails too: not news.
        const routine = stopped || [409, 429].includes(statusCode(error) ?? 0);
        log[routine ? 'debug' : 'warn']({ err: error, key }, 'reconcile failed; retrying with backoff');
        queue.retry(key);
      } finally {
        reconciles.inc({ controller: options.name });
        stopTimer();
        queue.done(key);
      }
    }
  };
  const workers = Array.from({ length: options.workers ?? 4 }, () => worker());

  return {
    enqueue: (key) => {
      queue.add(key);
    },
    async stop(): Promise<void> {
      stopped = true;
      queue.shutDown();
      await Promise.all(informers.map((i) => i.stop()));
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
