/**
 * An engine's running and idle durations change every second, so nothing stores them: a message
 * read from an engine resource carries them as getters that compute from the engine's clock
 * (shared/durations.ts) at the moment they are read — when a list filters or orders by them, and
 * when an answer is encoded. A copy (`{ ...message }`) keeps the values of the moment it was made.
 */
import { durations, type EngineClock } from '../../../shared/durations.ts';

const DURATION_FIELDS = ['currentRunningDuration', 'currentIdleDuration'] as const;

interface Duration {
  seconds: string;
  nanos: number;
}

const ZERO: Duration = Object.freeze({ seconds: '0', nanos: 0 });
const seconds = (ms: number): Duration => ({ seconds: String(Math.floor(ms / 1000)), nanos: 0 });

/** `message` with its durations computed when read from `clock`, or 0 when there is none. */
export function withLiveDurations<T extends object>(message: T, clock: EngineClock | undefined): T {
  const read = (field: (typeof DURATION_FIELDS)[number]): (() => Duration) => {
    if (clock === undefined) return () => ZERO;
    return () => {
      const report = durations({ now: new Date(), ...clock });
      return seconds(field === 'currentRunningDuration' ? report.runningMs : report.idleMs);
    };
  };
  for (const field of DURATION_FIELDS)
    Object.defineProperty(message, field, { get: read(field), enumerable: true, configurable: false });
  return message;
}
