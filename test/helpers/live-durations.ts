/**
 * Engines' current idle and running durations are computed when read, from the engine's clock:
 * two reads a second apart differ in them, though nothing changed. Comparisons of "the same
 * engine, read again" leave them out.
 */
const LIVE = new Set(['currentIdleDuration', 'currentRunningDuration']);

/** A copy of `value` (a message, a response, a list) without the durations computed when read. */
export function withoutLiveDurations<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => withoutLiveDurations(item)) as T;
  if (typeof value !== 'object' || value === null || value instanceof Date) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !LIVE.has(key))
      .map(([key, field]) => [key, withoutLiveDurations(field as unknown)]),
  ) as T;
}
