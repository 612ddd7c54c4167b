/**
 * Queued engines' places in their queues, from Kueue's visibility API (the pending Workloads of a
 * LocalQueue, in order). Nothing is watchable there, so a queue is asked every couple of seconds —
 * only while engines of it wait, and only the positions that changed queue their engines again.
 *
 * Each admission moves every engine behind it one place, and each told move is a status write: with
 * hundreds waiting, telling every move would spend the apiserver on writes no one needs while the
 * admissions that matter wait behind them. So a waiting engine's new position is told at most once
 * per POSITION_REFRESH_MS — except its first position, and its becoming next in line, which are
 * told at once. The writes are then bounded by waiting engines / refresh period, whatever the pace
 * of admissions.
 */
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';

export const VISIBILITY_GROUP = 'visibility.kueue.x-k8s.io';
export const VISIBILITY_VERSION = 'v1beta2';
/** How often a queue with engines waiting is asked for its order. */
export const POSITIONS_POLL_MS = 2000;
/** How often, at most, a waiting engine is told that its position changed (see above). */
export const POSITION_REFRESH_MS = 10_000;
/**
 * Reads after which a Workload never seen pending is no longer asked for: Kueue lists a new
 * Workload within moments, so one still unlisted is gone (its engine deleted) or admitted.
 */
const UNSEEN_READS = 3;

/** A queue's pending Workloads: each one's name and the number of Workloads ahead of it. */
export type PendingOrder = ReadonlyMap<string, number>;

/** Reads the pending order of a LocalQueue. */
export type ReadPending = (localQueue: string) => Promise<PendingOrder>;

/** The visibility API's pending Workloads of a LocalQueue in the namespace, through the apiserver. */
export function visibilityReader(kubeConfig: KubeConfig, namespace: string): ReadPending {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  return async (localQueue) => {
    const answer = (await api.listNamespacedCustomObject({
      group: VISIBILITY_GROUP,
      version: VISIBILITY_VERSION,
      namespace,
      plural: `localqueues/${localQueue}/pendingworkloads`,
    })) as { items?: { metadata?: { name?: string }; positionInLocalQueue?: number }[] };
    return new Map(
      (answer.items ?? []).flatMap((item) =>
        item.metadata?.name === undefined
          ? []
          : [[item.metadata.name, item.positionInLocalQueue ?? 0] as const],
      ),
    );
  };
}

export class QueuePositions {
  private readonly read: ReadPending;
  private readonly changed: (workload: string) => void;
  private readonly log: Logger;
  private readonly intervalMs: number;
  private readonly refreshMs: number;
  private readonly now: () => number;
  /** The Workloads of each LocalQueue whose engines wait: the position last told, or the reads that did not list it. */
  private readonly waiting = new Map<string, Map<string, Place>>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private stopped = false;

  constructor(options: {
    read: ReadPending;
    /** Hears that a waiting Workload's position changed (or that it no longer waits). */
    changed: (workload: string) => void;
    log: Logger;
    intervalMs?: number;
    refreshMs?: number;
    /** The clock, in milliseconds. */
    now?: () => number;
  }) {
    this.read = options.read;
    this.changed = options.changed;
    this.log = options.log;
    this.intervalMs = options.intervalMs ?? POSITIONS_POLL_MS;
    this.refreshMs = options.refreshMs ?? POSITION_REFRESH_MS;
    this.now = options.now ?? Date.now;
  }

  /**
   * The Workload's position in its LocalQueue, as last read (undefined before the first read);
   * the queue is asked from now on while it has Workloads waiting.
   */
  positionOf(localQueue: string, workload: string): number | undefined {
    let workloads = this.waiting.get(localQueue);
    if (workloads === undefined) {
      workloads = new Map();
      this.waiting.set(localQueue, workloads);
    }
    const place = workloads.get(workload);
    if (place === undefined) {
      workloads.set(workload, { unseen: 0 });
      // The first engine to wait need not wait a whole period for its position.
      this.schedule(0);
    }
    return place?.position;
  }

  /** The Workload no longer waits (admitted, or gone). */
  forget(localQueue: string, workload: string): void {
    const workloads = this.waiting.get(localQueue);
    workloads?.delete(workload);
    if (workloads?.size === 0) this.waiting.delete(localQueue);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.polling) return;
    if (this.timer !== undefined && delayMs > 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.poll(), delayMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    this.timer = undefined;
    this.polling = true;
    try {
      for (const [localQueue, workloads] of [...this.waiting]) await this.pollQueue(localQueue, workloads);
    } finally {
      this.polling = false;
    }
    if (this.waiting.size > 0) this.schedule(this.intervalMs);
  }

  private async pollQueue(localQueue: string, workloads: Map<string, Place>): Promise<void> {
    let order: PendingOrder;
    try {
      order = await this.read(localQueue);
    } catch (error: unknown) {
      // Positions are a courtesy: a queue that does not answer now is asked again next period.
      this.log.debug({ err: error, localQueue }, 'reading queue positions failed');
      return;
    }
    const now = this.now();
    for (const [workload, place] of [...workloads]) {
      const position = order.get(workload);
      if (position !== undefined) {
        if (!tellNow(place, position, now, this.refreshMs)) continue;
        workloads.set(workload, { position, unseen: 0, toldAt: now });
        this.changed(workload);
      } else if (place.position !== undefined || place.unseen + 1 >= UNSEEN_READS) {
        // No longer pending (or never listed): forgotten; its engine, reconciled, says again if it waits.
        workloads.delete(workload);
        this.changed(workload);
      } else workloads.set(workload, { unseen: place.unseen + 1 });
    }
    if (workloads.size === 0) this.waiting.delete(localQueue);
  }
}

/** Where a waiting Workload stands: its position as last told and when, or how many reads did not list it yet. */
export interface Place {
  position?: number;
  toldAt?: number;
  unseen: number;
}

/** Whether a waiting Workload's position just read is to be told now (see the module's comment). */
export function tellNow(place: Place, position: number, now: number, refreshMs: number): boolean {
  if (position === place.position) return false;
  if (place.position === undefined || place.toldAt === undefined || position === 0) return true;
  return now - place.toldAt >= refreshMs;
}
