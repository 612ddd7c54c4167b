/**
 * The status an engine should report, from its resource, its pods and volumes and the time: a
 * pure function. It also says whether a duration limit asks to stop the engine, and when the
 * engine should be looked at again.
 */
import { isDeepStrictEqual } from 'node:util';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import {
  DISK_USAGE_ANNOTATION,
  LAST_ACTIVITY_ANNOTATION,
  RUNNING_PROCESSES_ANNOTATION,
  STOP_REASON_ANNOTATION,
} from '../../../shared/resources.ts';
import {
  sharedStatus,
  type EngineKind,
  type EngineKindName,
  type EngineResource,
  type Settings,
} from '../kinds/kind.ts';
import { sizingOf, stopWanted, wantedReplicas } from '../desired/workload.ts';
import { durationMs, durations, engineClock } from '../../../shared/durations.ts';
import { observe, type ObservedState } from '../observe/state.ts';
import { enginePending, PENDING_CAUSES } from '../observe/pending.ts';
import { heldFailure } from '../observe/failure-hold.ts';
import { runningSince } from '../observe/running-since.ts';
import { FAILED, mergeConditions, READY, REASONS, STOPPED, type Condition } from './conditions.ts';
import type { EngineQueueStatus } from '../gen/resources.ts';

export interface StatusInput<K extends EngineKindName = EngineKindName> {
  kind: EngineKind<K>;
  engine: EngineResource<K>;
  pods: readonly V1Pod[];
  /** The engine's data volume claims (a lost volume fails the engine). */
  claims?: readonly V1PersistentVolumeClaim[];
  now: Date;
  settings: Settings;
  storageResizing: boolean;
  /** A problem no retry can fix (e.g. the profile's pod template cannot be applied). */
  terminal?: { reason: string; message: string };
  /** The engine's pods are ready, but the engine answered that it does not serve as a whole yet. */
  notServingYet?: boolean;
  /** Where the engine stands in its queue, when it waits in one (queueing/queue-status.ts). */
  queueStatus?: EngineQueueStatus | undefined;
}

/** While a ready engine does not serve as a whole yet, look again this soon (no event will come). */
export const SERVING_RECHECK_MS = 1000;

export interface StatusPlan {
  status: Record<string, unknown>;
  /** A limit that asks to stop the running engine now. */
  autoStop?: 'maxIdleDuration' | 'maxRunningDuration';
  /**
   * When the idle limit asks to stop the engine: since when it counts as idle, and its limit —
   * what an activity probe's answer is weighed against.
   */
  idle?: { since: Date; limitMs: number };
  requeueAfterMs?: number;
}

function observed(input: StatusInput): ObservedState {
  const { kind, engine } = input;
  if (input.terminal !== undefined && !stopWanted(kind, engine))
    return {
      state: 'STATE_FAILED',
      reconciling: false,
      message: input.terminal.message,
      failureReason: 'FAILURE_REASON_UNKNOWN',
    };
  const held = heldFailure(engine, kind.failureReason?.of(engine));
  if (held !== undefined && engine.metadata.deletionTimestamp === undefined)
    return {
      state: 'STATE_FAILED',
      reconciling: false,
      message: held.message,
      failureReason: held.reason,
      ...(held.cause !== undefined ? { cause: held.cause } : {}),
    };
  const seen = observe({
    kind,
    deleting: engine.metadata.deletionTimestamp !== undefined,
    stopWanted: stopWanted(kind, engine),
    wantedPods: wantedReplicas(kind, engine),
    pods: input.pods,
    ...(input.claims !== undefined ? { claims: input.claims } : {}),
    now: input.now,
  });
  return input.notServingYet === true ? notServingYet(kind, seen) : seen;
}

/** A state its pods call RUNNING, of an engine that answered it does not serve as a whole yet. */
function notServingYet(kind: EngineKind, seen: ObservedState): ObservedState {
  if (seen.state !== 'STATE_RUNNING') return seen;
  return { state: kind.hasConnectingState ? 'STATE_CONNECTING' : 'STATE_STARTING', reconciling: true };
}

interface Timing {
  /**
   * When the current run became RUNNING (`runningSince`, null before it has), which the durations
   * count from. The running and idle durations themselves are computed by the API when read; an
   * earlier release wrote them here every 30 s, and clearing them (once) keeps status free of
   * stale values.
   */
  fields: Record<string, string | null>;
  autoStop?: StatusPlan['autoStop'];
  idle?: StatusPlan['idle'];
  requeueAfterMs?: number;
}

const NO_DURATIONS = { currentIdleDuration: null, currentRunningDuration: null };

/** When the engine's current run became RUNNING, as it should be recorded now. */
function runningSinceOf(input: StatusInput, state: string): Date | undefined {
  const { engine } = input;
  const status = sharedStatus(engine);
  return runningSince({
    state,
    reportedState: status.state,
    recorded: status.runningSince,
    created: engine.metadata.creationTimestamp ?? input.now,
    resumed: status.resumeTime,
    now: input.now,
  });
}

/** The engine's clock in `state`, counting from `since`; undefined while it has none. */
function clockOf(input: StatusInput, state: string, since: Date | undefined): ReturnType<typeof engineClock> {
  const { engine } = input;
  const annotations = engine.metadata.annotations ?? {};
  return engineClock({
    state,
    created: engine.metadata.creationTimestamp ?? input.now,
    resumed: sharedStatus(engine).resumeTime,
    runningSince: since,
    lastActivity: annotations[LAST_ACTIVITY_ANNOTATION],
    runningProcesses: annotations[RUNNING_PROCESSES_ANNOTATION],
  });
}

/** When the engine's idle time began: its latest activity, or when its run became RUNNING if later. */
function idleSince({ startedAt, lastActivityAt }: NonNullable<ReturnType<typeof engineClock>>): Date {
  return lastActivityAt !== undefined && lastActivityAt > startedAt ? lastActivityAt : startedAt;
}

/** Whether a duration limit asks to stop the engine now, and when the next one falls due. */
function timing(input: StatusInput, state: string): Timing {
  const timed = clockTiming(input, state);
  if (input.notServingYet !== true) return timed;
  return {
    ...timed,
    requeueAfterMs: Math.min(timed.requeueAfterMs ?? SERVING_RECHECK_MS, SERVING_RECHECK_MS),
  };
}

/** The durations' fields and deadlines of the engine's current run. */
function clockTiming(input: StatusInput, state: string): Timing {
  const { engine } = input;
  const since = runningSinceOf(input, state);
  const fields = { ...NO_DURATIONS, runningSince: since?.toISOString() ?? null };
  const clock = clockOf(input, state, since);
  if (clock === undefined) return { fields };
  const sizing = sizingOf(input.kind, engine);
  const maxIdleMs = durationMs(sizing.maxIdleDuration) ?? 0;
  const report = durations({
    now: input.now,
    ...clock,
    maxIdleMs,
    maxRunningMs: durationMs(sizing.maxRunningDuration) ?? 0,
  });
  const stop = state === 'STATE_RUNNING' ? report.exceeded : undefined;
  return {
    fields,
    ...(stop !== undefined ? { autoStop: stop } : {}),
    ...(stop === 'maxIdleDuration' ? { idle: { since: idleSince(clock), limitMs: maxIdleMs } } : {}),
    ...(report.nextDeadlineMs !== undefined ? { requeueAfterMs: report.nextDeadlineMs } : {}),
  };
}

/** Disk usage the engine reported, for kinds and versions that report it; null otherwise. */
function diskUsage(kind: EngineKind, engine: EngineResource): Record<string, string | null> {
  if (kind.reportsDiskUsage === undefined) return {};
  const none = { totalDiskSizeBytes: null, freeDiskSizeBytes: null };
  const text = engine.metadata.annotations?.[DISK_USAGE_ANNOTATION];
  if (!kind.reportsDiskUsage(engine) || text === undefined) return none;
  try {
    const report = JSON.parse(text) as { totalBytes?: unknown; freeBytes?: unknown };
    const bytes = (v: unknown): string | null =>
      (typeof v === 'string' || typeof v === 'number') && /^\d+$/.test(String(v)) ? String(v) : null;
    return { totalDiskSizeBytes: bytes(report.totalBytes), freeDiskSizeBytes: bytes(report.freeBytes) };
  } catch {
    return none;
  }
}

/** Why the engine is not ready (or that it is). */
function readyReason(input: StatusInput, seen: ObservedState): string {
  if (seen.state === 'STATE_RUNNING') return REASONS.running;
  if (input.terminal !== undefined) return input.terminal.reason;
  const byState: Record<string, string> = {
    STATE_FAILED: seen.cause ?? REASONS.failed,
    STATE_DELETING: REASONS.deleting,
    [input.kind.stopStates.stopping]: REASONS.stopped,
    [input.kind.stopStates.stopped]: REASONS.stopped,
  };
  return byState[seen.state] ?? REASONS.starting;
}

type WantedCondition = Omit<Condition, 'lastTransitionTime'>;
const truth = (value: boolean): 'True' | 'False' => (value ? 'True' : 'False');

function failedCondition(seen: ObservedState, reason: string, observedGeneration: number): WantedCondition {
  const failed = seen.state === 'STATE_FAILED';
  return {
    type: FAILED,
    status: truth(failed),
    reason: failed ? reason : 'NoFailure',
    message: failed ? (seen.message ?? 'The engine failed.') : 'The engine has not failed.',
    observedGeneration,
  };
}

function stoppedCondition(
  kind: EngineKind,
  engine: EngineResource,
  observedGeneration: number,
): WantedCondition {
  const stopped = stopWanted(kind, engine);
  const stopReason = engine.metadata.annotations?.[STOP_REASON_ANNOTATION] ?? REASONS.userRequested;
  return {
    type: STOPPED,
    status: truth(stopped),
    reason: stopped ? stopReason : 'Active',
    message: stopped ? `The engine is wanted ${kind.stopIntent}.` : 'The engine is wanted running.',
    observedGeneration,
  };
}

const WAITING_STATES = ['STATE_STARTING', 'STATE_CONNECTING'];

/** What a starting engine waits for: its queue, while it is queued; otherwise what its pods wait for. */
function waitingFor(input: StatusInput): { reason: string; message: string } {
  if (input.queueStatus?.state === 'STATE_QUEUED')
    return { reason: REASONS.queued, message: input.queueStatus.message ?? '' };
  const [pending, message] = enginePending(input.pods, wantedReplicas(input.kind, input.engine));
  return { reason: PENDING_CAUSES[pending], message };
}

/**
 * The Ready condition's reason and message: while the engine starts, what it waits for (the
 * scheduler's message for a pod no node has room for, an image being pulled…), which the API's
 * messages of DAI, H2O and notebook engines have no field for; otherwise the state's.
 */
function readyDetail(input: StatusInput, seen: ObservedState): { reason: string; message: string } {
  if (input.notServingYet === true && WAITING_STATES.includes(seen.state))
    return {
      reason: REASONS.notServingYet,
      message:
        'The engine’s pods are ready; the engine does not serve as a whole yet (its nodes are still joining).',
    };
  if (WAITING_STATES.includes(seen.state) && input.terminal === undefined) return waitingFor(input);
  return {
    reason: readyReason(input, seen),
    message: seen.message ?? `The engine is ${seen.state.replace('STATE_', '').toLowerCase()}.`,
  };
}

function conditions(input: StatusInput, seen: ObservedState): Condition[] {
  const { engine, kind } = input;
  const observedGeneration = engine.metadata.generation ?? 0;
  const reason = readyReason(input, seen);
  const ready: WantedCondition = {
    type: READY,
    status: truth(seen.state === 'STATE_RUNNING'),
    ...readyDetail(input, seen),
    observedGeneration,
  };
  const previous = sharedStatus(engine).conditions ?? [];
  return mergeConditions(
    previous,
    [
      ready,
      failedCondition(seen, reason, observedGeneration),
      stoppedCondition(kind, engine, observedGeneration),
    ],
    input.now,
  );
}

/**
 * The queue status field, when the engine waits in a queue: a position no longer known is
 * written as null, which a merge patch takes out of what is stored.
 */
function queueFields(queueStatus: EngineQueueStatus | undefined): Record<string, unknown> {
  if (queueStatus === undefined) return {};
  return { queueStatus: { position: null, ...queueStatus } };
}

export function planStatus(input: StatusInput): StatusPlan {
  const { kind, engine } = input;
  const seen = observed(input);
  const { fields, autoStop, idle, requeueAfterMs } = timing(input, seen.state);
  const status: Record<string, unknown> = {
    state: seen.state,
    reconciling: seen.reconciling,
    ...kind.urls(engine, input.settings),
    ...fields,
    ...diskUsage(kind, engine),
    ...kind.pendingStatus?.(seen.state, input.pods),
    ...(kind.dataMountPath !== undefined ? { storageResizing: input.storageResizing } : {}),
    ...(kind.failureReason !== undefined
      ? { [kind.failureReason.field]: seen.failureReason ?? 'FAILURE_REASON_UNSPECIFIED' }
      : {}),
    ...queueFields(input.queueStatus),
    observedGeneration: engine.metadata.generation ?? 0,
    conditions: conditions(input, seen),
  };
  return {
    status,
    ...(autoStop !== undefined ? { autoStop } : {}),
    ...(idle !== undefined ? { idle } : {}),
    ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
  };
}

/**
 * The fields of `status` whose values differ from the engine's current status. Values compare as
 * JSON, whatever their key order (the apiserver answers with keys sorted), and null as absent.
 */
export function changedFields(
  current: Readonly<Record<string, unknown>> | undefined,
  status: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(status).filter(([key, value]) => !sameJson(current?.[key] ?? null, value ?? null)),
  );
}

function sameJson(a: unknown, b: unknown): boolean {
  // A field written as null (to take it out, in a merge patch) reads as absent.
  const plain = (value: unknown): unknown =>
    JSON.parse(
      JSON.stringify(value, (key, field: unknown) => (key !== '' && field === null ? undefined : field)),
    ) as unknown;
  return isDeepStrictEqual(plain(a), plain(b));
}
