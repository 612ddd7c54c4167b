/**
 * Activity probes: at an engine's idle deadline, the operator asks the engine itself whether it
 * worked without anyone reaching its address — a notebook kernel running a cell for hours, an H2O
 * job training — since requests through the address are already recorded as they happen (the
 * annotation `engine.h2o.ai/last-activity-time`). Asking only at the deadline keeps engines in use
 * free of cost: an engine whose traffic keeps moving its deadline is never asked.
 *
 * A kind's probe is data and a pure reading: the GETs it makes under the engine's path, and what
 * their answers mean. The HTTP calls are made at the edge (`prober.ts`); what counts as activity
 * within the idle limit is {@link recentActivity}. A kind without a probe (Driverless AI, whose
 * proprietary server documents no such call; sandboxes, whose running processes the API counts)
 * idles by its annotations alone.
 */

/** One kind's probe: the GETs it makes on the engine's server, and what their answers mean. */
export interface ActivityProbe {
  /** Paths under the engine's address path (with a query where needed), requested together. */
  paths: readonly string[];
  /**
   * When the answers (parsed JSON, in the order of `paths`) show the engine last active: `now`
   * while it works at this moment; undefined when they show no activity at all. Throws
   * {@link MalformedAnswer} when an answer is not what the engine serves.
   */
  latestActivity(answers: readonly unknown[], now: Date): Date | undefined;
}

/** An answer that is JSON but not what the engine's API serves: the probe fails. */
export class MalformedAnswer extends Error {
  override name = 'MalformedAnswer';
}

/** The idle time an engine was found to exceed: its idle start, its limit, and now. */
export interface IdleWindow {
  /** When its idle time began: the latest recorded activity, or when its run became RUNNING. */
  since: Date;
  limitMs: number;
  now: Date;
}

/**
 * The activity a probe found, when it means the engine was not idle for its whole limit: later
 * than the idle start, and less than the limit ago. That time is recorded as the engine's latest
 * activity, so its next deadline is a full limit after it. A time ahead of `now` (the engine's
 * clock runs ahead of the operator's) counts as `now`.
 */
export function recentActivity(found: Date | undefined, window: IdleWindow): Date | undefined {
  if (found === undefined) return undefined;
  const at = found > window.now ? window.now : found;
  if (at <= window.since || window.now.getTime() - at.getTime() >= window.limitMs) return undefined;
  return at;
}

/** An object's own field, or a {@link MalformedAnswer} naming what was expected. */
export function field(value: unknown, name: string, what: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new MalformedAnswer(`${what} is not an object`);
  return (value as Record<string, unknown>)[name];
}

/** An array, or a {@link MalformedAnswer}. */
export function list(value: unknown, what: string): readonly unknown[] {
  if (!Array.isArray(value)) throw new MalformedAnswer(`${what} is not a list`);
  return value;
}

/** A string, or a {@link MalformedAnswer}. */
export function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new MalformedAnswer(`${what} is not a string`);
  return value;
}

/**
 * A time in ISO 8601 with its zone (`2026-11-27T10:00:00.123456Z`; digits beyond milliseconds
 * are dropped), or a {@link MalformedAnswer}: a time without a zone could be any zone's.
 */
export function isoTime(value: unknown, what: string): Date {
  const written = text(value, what);
  const time = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(written)
    ? new Date(written)
    : undefined;
  if (time === undefined || Number.isNaN(time.getTime()))
    throw new MalformedAnswer(`${what} is not a time with its zone: ${JSON.stringify(written)}`);
  return time;
}

/** The latest of the times, or undefined when there are none. */
export function latest(times: readonly Date[]): Date | undefined {
  return times.reduce<Date | undefined>((a, b) => (a === undefined || b > a ? b : a), undefined);
}
