/**
 * Use of an engine through the access proxy, recorded as its latest activity (annotation
 * `engine.h2o.ai/last-activity-time`, which the operator's idle timeout reads, as `:access` and
 * sandbox processes write it). Requests and WebSocket traffic come by the thousand; the
 * annotation is written at most once per engine per interval, with the time of the latest use,
 * so an idle timeout is late by at most that interval and the apiserver sees one write a minute
 * per engine in use.
 */
import type { Logger } from 'pino';
import { LAST_ACTIVITY_ANNOTATION, type ResourceKind } from '../../../shared/resources.ts';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';

/** Writes annotations on an engine (the store's `annotate`). */
export type Annotate = (
  kind: ResourceKind,
  name: string,
  annotations: Record<string, string>,
) => Promise<void>;

/** The longest time between an engine's use and its record, unless told otherwise. */
export const ACTIVITY_INTERVAL_MS = 60_000;

interface Pending {
  kind: ResourceKind;
  /** The latest use not yet written. */
  latest: Date | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** Coalesces uses of engines into at most one annotation write per engine per interval. */
export class ActivityRecorder {
  private readonly engines = new Map<string, Pending>();
  private readonly annotate: Annotate;
  private readonly now: () => Date;
  private readonly intervalMs: number;
  private readonly log: Logger;

  constructor(options: { annotate: Annotate; log: Logger; now?: () => Date; intervalMs?: number }) {
    this.annotate = options.annotate;
    this.log = options.log;
    this.now = options.now ?? (() => new Date());
    this.intervalMs = options.intervalMs ?? ACTIVITY_INTERVAL_MS;
  }

  /** Records a use of the engine `name` now. */
  touch(kind: ResourceKind, name: string): void {
    const entry = this.engines.get(name);
    if (entry !== undefined) {
      entry.latest = this.now();
      return;
    }
    // Not written within the interval: write at once, then hold further writes for the interval.
    const fresh: Pending = { kind, latest: this.now(), timer: undefined };
    this.engines.set(name, fresh);
    this.flush(name, fresh);
  }

  /** Engines with a use not yet written. For tests and metrics. */
  get pending(): number {
    return [...this.engines.values()].filter((e) => e.latest !== undefined).length;
  }

  /** Writes what is pending now and stops; later uses are not recorded. */
  async stop(): Promise<void> {
    const writes: Promise<void>[] = [];
    for (const [name, entry] of this.engines) {
      clearTimeout(entry.timer);
      if (entry.latest !== undefined) writes.push(this.write(name, entry.kind, entry.latest));
    }
    this.engines.clear();
    await Promise.all(writes);
  }

  /** Writes the latest use, if any, and holds the next write for the interval; forgets idle engines. */
  private flush(name: string, entry: Pending): void {
    const latest = entry.latest;
    if (latest === undefined) {
      this.engines.delete(name);
      return;
    }
    entry.latest = undefined;
    void this.write(name, entry.kind, latest);
    entry.timer = setTimeout(() => {
      this.flush(name, entry);
    }, this.intervalMs);
    // A pending record never keeps the process alive on its own.
    entry.timer.unref();
  }

  private async write(name: string, kind: ResourceKind, at: Date): Promise<void> {
    try {
      await this.annotate(kind, name, { [LAST_ACTIVITY_ANNOTATION]: at.toISOString() });
    } catch (error: unknown) {
      // A deleted engine has no activity to record; anything else is worth a line.
      if (error instanceof ApiError && error.code === Code.NOT_FOUND) return;
      this.log.warn({ err: error, engine: name }, 'Failed to record engine activity');
    }
  }
}
