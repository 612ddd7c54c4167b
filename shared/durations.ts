/**
 * How long an engine has been running and idle, and when a limit will stop it. Pure: the clock
 * is an argument.
 *
 * - Running time counts from the moment this run of the engine became RUNNING (status
 *   `runningSince`, which the operator records): a run begins at the engine's creation or its
 *   latest resume, and the time its pods spend starting (image pull, scheduling, a queue) does
 *   not count. Until this run has been RUNNING, an engine has no clock.
 * - Idle time counts from its latest activity, or from running-since when that is later. Activity is
 *   reported on the engine resource (annotation `engine.h2o.ai/last-activity-time`, RFC 3339) by
 *   the engine itself — for Driverless AI: client requests, login and logout, experiment events,
 *   dataset and recipe uploads — and by the API when a user opens a notebook (`:access`).
 * - A sandbox engine is busy while a process runs in it (annotation
 *   `engine.h2o.ai/running-processes` above 0, kept by the API): busy is never idle.
 * - A limit of zero (or none) means no limit.
 * - Durations are whole seconds. Nothing stores them: the API computes them whenever an engine is
 *   read, and the operator looks at a running engine again exactly at its next deadline, so a
 *   limit fires on time without writes or polling.
 */
export interface DurationInput {
  now: Date;
  /** When this run of the engine became RUNNING. */
  startedAt: Date;
  lastActivityAt?: Date;
  /** Work is going on now (a sandbox's process runs): the engine is not idle. */
  busy?: boolean;
  maxIdleMs?: number;
  maxRunningMs?: number;
}

export interface DurationReport {
  runningMs: number;
  idleMs: number;
  /** Which limit is exceeded, if one is. */
  exceeded?: 'maxIdleDuration' | 'maxRunningDuration';
  /** Milliseconds until the next limit is reached, when a limit applies. */
  nextDeadlineMs?: number;
}

/**
 * The states in which an engine's running and idle time count; in every other state both are 0.
 * STARTING and CONNECTING count only once the current run has been RUNNING (its pod restarted):
 * a run that never started serving has no clock, and a crash-looping one does not escape its
 * running limit by leaving RUNNING now and then.
 */
export const ACTIVE_STATES: readonly string[] = ['STATE_STARTING', 'STATE_CONNECTING', 'STATE_RUNNING'];

/** Where an active engine's durations count from. */
export interface EngineClock {
  startedAt: Date;
  lastActivityAt?: Date;
  busy?: boolean;
}

/** When the engine's current run began: its latest resume, else its creation. */
export function runStartOf(engine: { created: unknown; resumed: unknown }): Date | undefined {
  const created = timeOf(engine.created);
  const resumed = timeOf(engine.resumed);
  return resumed !== undefined && (created === undefined || resumed > created) ? resumed : created;
}

/**
 * The recorded running-since time when it belongs to the current run; undefined when none is
 * recorded or it is from an earlier run (before the latest resume).
 */
export function currentRunningSince(engine: {
  created: unknown;
  resumed: unknown;
  runningSince: unknown;
}): Date | undefined {
  const since = timeOf(engine.runningSince);
  const runStart = runStartOf(engine);
  if (since === undefined || (runStart !== undefined && since < runStart)) return undefined;
  return since;
}

/**
 * The clock of an engine in `state`, from when its current run became RUNNING and its activity
 * annotations; undefined when the engine is not active or this run has not been RUNNING yet
 * (its durations are 0).
 */
export function engineClock(engine: {
  state: unknown;
  created: unknown;
  resumed: unknown;
  /** When the current run became RUNNING (status `runningSince`, written by the operator). */
  runningSince: unknown;
  lastActivity: unknown;
  /** How many processes run in the engine (sandboxes), as the annotation holds it. */
  runningProcesses?: unknown;
}): EngineClock | undefined {
  if (typeof engine.state !== 'string' || !ACTIVE_STATES.includes(engine.state)) return undefined;
  const startedAt = currentRunningSince(engine);
  if (startedAt === undefined) return undefined;
  const lastActivityAt = timeOf(engine.lastActivity);
  const busy = Number(engine.runningProcesses ?? 0) > 0 ? { busy: true } : {};
  return lastActivityAt === undefined ? { startedAt, ...busy } : { startedAt, lastActivityAt, ...busy };
}

const whole = (ms: number): number => Math.max(0, Math.floor(ms / 1000) * 1000);

export function durations(input: DurationInput): DurationReport {
  const now = input.now.getTime();
  const started = input.startedAt.getTime();
  const active = Math.max(started, input.lastActivityAt?.getTime() ?? started);
  const runningMs = Math.max(0, now - started);
  const idleMs = input.busy === true ? 0 : Math.max(0, now - active);
  const limits: ['maxIdleDuration' | 'maxRunningDuration', number, number][] = [];
  if (input.maxIdleMs && input.busy !== true) limits.push(['maxIdleDuration', input.maxIdleMs, idleMs]);
  if (input.maxRunningMs) limits.push(['maxRunningDuration', input.maxRunningMs, runningMs]);
  const exceeded = limits.find(([, limit, elapsed]) => elapsed >= limit)?.[0];
  const remaining = limits.map(([, limit, elapsed]) => limit - elapsed).filter((ms) => ms > 0);
  return {
    runningMs: whole(runningMs),
    idleMs: whole(idleMs),
    ...(exceeded ? { exceeded } : {}),
    ...(remaining.length > 0 ? { nextDeadlineMs: Math.min(...remaining) } : {}),
  };
}

/** Milliseconds of a proto3 JSON Duration such as `"3600s"` or `"1.5s"`; undefined when absent or bad. */
export function durationMs(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+)(?:\.(\d{1,9}))?s$/.exec(value);
  if (!match) return undefined;
  return Number(match[1]) * 1000 + Math.round(Number(`0.${match[2] ?? '0'}`) * 1000);
}

/** A Duration in proto3 JSON, whole seconds. */
export function durationText(ms: number): string {
  return `${Math.floor(ms / 1000)}s`;
}

/** A time from an RFC 3339 string or Date; undefined when absent or unreadable. */
export function timeOf(value: unknown): Date | undefined {
  if (value instanceof Date) return value;
  if (typeof value !== 'string' || value === '') return undefined;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? undefined : time;
}
