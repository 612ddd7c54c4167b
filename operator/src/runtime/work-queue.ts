/**
 * A keyed work queue as controllers use it: a key waiting is queued once however often it is
 * added; a key being worked on is not handed to a second worker, and if added meanwhile it runs
 * again afterwards; failures come back after a per-key exponential backoff; `addAfter` schedules
 * a key for later (deadlines), keeping the earliest time asked for. Waiting keys are served
 * fairly between their groups (fair-order.ts): groups take turns, first come first served within
 * one.
 */
import { FairOrder } from './fair-order.ts';

export interface WorkQueueOptions {
  baseDelayMs?: number;
  maxDelayMs?: number;
  /**
   * The group a key is served fairly within (the operator's: the engine's workspace); one group
   * for all keys when not given, i.e. first come, first served.
   */
  groupOf?: (key: string) => string;
}

export class WorkQueue {
  private readonly queue = new FairOrder();
  private readonly groupOf: (key: string) => string;
  private readonly queued = new Set<string>();
  private readonly active = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private closed = false;

  constructor(options: WorkQueueOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 100;
    this.maxDelayMs = options.maxDelayMs ?? 60_000;
    this.groupOf = options.groupOf ?? (() => '');
  }

  /** Keys waiting to be worked on. */
  get depth(): number {
    return this.queue.size;
  }

  /** Keys being worked on now. */
  get working(): number {
    return this.active.size;
  }

  add(key: string): void {
    if (this.closed) return;
    if (this.active.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      this.active.add(key);
      waiter(key);
      return;
    }
    this.queued.add(key);
    this.queue.push(this.groupOf(key), key);
  }

  /** Adds `key` after `delayMs`, unless it is already due sooner. */
  addAfter(key: string, delayMs: number): void {
    if (this.closed) return;
    const at = Date.now() + Math.max(0, delayMs);
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, at - Date.now());
    timer.unref();
    this.timers.set(key, { at, timer });
  }

  /** Adds `key` again after its next backoff delay (100 ms, 200 ms, … up to the maximum). */
  retry(key: string): void {
    const count = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, count);
    this.addAfter(key, Math.min(this.baseDelayMs * 2 ** (count - 1), this.maxDelayMs));
  }

  /** Clears the backoff of a key that succeeded. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** The next key to work on (the next group's turn); `undefined` once the queue is shut down. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.queued.delete(key);
      this.active.add(key);
      return Promise.resolve(key);
    }
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks `key` finished; queues it again if it was added while being worked on. */
  done(key: string): void {
    this.active.delete(key);
    if (this.dirty.delete(key)) this.add(key);
  }

  shutDown(): void {
    this.closed = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }
}
