/**
 * Queueing as the reconciler uses it, when the installation turned it on: the configuration, the
 * Kueue objects made on demand, the watched Workloads, and the queue positions read while engines
 * wait. Started with the operator; a change of a Workload or of a position queues its engine.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { QueueingConfig } from './config.ts';
import type { EngineQueue } from './kueue-objects.ts';
import { KueueQueues, type KueueWrites } from './kueue-queues.ts';
import { QueuePositions, visibilityReader, type ReadPending } from './positions.ts';
import { Workloads, type WorkloadView } from './workloads.ts';

/** What a reconcile asks of queueing. */
export interface Queueing {
  readonly config: QueueingConfig;
  /** Makes the Kueue objects the queue needs exist (at no cost once they do). */
  ensure(queue: EngineQueue): Promise<void>;
  /** The Workload of the StatefulSet with that uid. */
  workloadOf(setUid: string): WorkloadView | undefined;
  /** The Workload's place in its LocalQueue, as last read; asked for while it waits. */
  positionOf(localQueue: string, workload: string): number | undefined;
  /** The Workload no longer waits. */
  forget(localQueue: string, workload: string): void;
}

export interface RunningQueueing extends Queueing {
  readonly size: number;
  stop(): Promise<void>;
}

/**
 * Starts watching Workloads (resolves once they are listed) and serves queueing. `engineOfSet`
 * queues the engine of the StatefulSet of that name, if it is an engine's.
 */
export async function startQueueing(options: {
  config: QueueingConfig;
  kubeConfig: KubeConfig;
  namespace: string;
  log: Logger;
  kube: KueueWrites;
  engineOfSet: (setName: string) => void;
  /** Reads a LocalQueue's pending order; the visibility API when not given. */
  readPending?: ReadPending;
}): Promise<RunningQueueing> {
  const { config, kubeConfig, namespace, log } = options;
  const queues = new KueueQueues({ config, namespace, kube: options.kube });
  const workloads = new Workloads({ kubeConfig, namespace, log }, options.engineOfSet);
  const positions = new QueuePositions({
    read: options.readPending ?? visibilityReader(kubeConfig, namespace),
    changed: (workload) => {
      const setName = workloads.named(workload)?.setName;
      if (setName !== undefined) options.engineOfSet(setName);
    },
    log,
  });
  await workloads.start();
  return {
    config,
    ensure: (queue) => queues.ensure(queue),
    workloadOf: (setUid) => workloads.of(setUid),
    positionOf: (localQueue, workload) => positions.positionOf(localQueue, workload),
    forget: (localQueue, workload) => {
      positions.forget(localQueue, workload);
    },
    get size(): number {
      return workloads.size;
    },
    async stop(): Promise<void> {
      positions.stop();
      await workloads.stop();
    },
  };
}
