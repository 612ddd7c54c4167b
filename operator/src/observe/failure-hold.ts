/**
 * A failed engine stays failed until it is resumed: its pods are stopped (so a crashing engine
 * does not hold its node's resources forever) and its state, reason and message stay as first
 * seen. The failure time is the `Failed` condition's transition time; a resume after it ends the
 * hold. Pure.
 */
import type { EngineResource } from '../kinds/kind.ts';
import { timeOf } from '../../../shared/durations.ts';

/** Condition types the operator reports. */
export const READY = 'Ready';
export const FAILED = 'Failed';
export const STOPPED = 'Stopped';

interface ConditionLike {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface HeldFailure {
  since: Date;
  reason: string;
  /** The `Failed` condition's reason as first reported (e.g. `OOMKilled`). */
  cause?: string;
  message: string;
}

function failedCondition(engine: EngineResource): ConditionLike | undefined {
  const conditions = (engine.status?.['conditions'] ?? []) as ConditionLike[];
  return conditions.find((c) => c.type === FAILED && c.status === 'True');
}

function reasonOf(engine: EngineResource, field: string | undefined): string {
  const reason = field === undefined ? undefined : engine.status?.[field];
  return typeof reason === 'string' ? reason : 'FAILURE_REASON_UNKNOWN';
}

/** The `Failed` condition's reason, when it has one. */
function causeOf(failed: ConditionLike | undefined): { cause?: string } {
  return failed?.reason ? { cause: failed.reason } : {};
}

export function heldFailure(engine: EngineResource, failureReasonField?: string): HeldFailure | undefined {
  if (engine.status?.['state'] !== 'STATE_FAILED') return undefined;
  const failed = failedCondition(engine);
  const since = timeOf(failed?.lastTransitionTime);
  const resumed = timeOf(engine.status['resumeTime']);
  if (since === undefined || (resumed !== undefined && resumed > since)) return undefined;
  return {
    since,
    reason: reasonOf(engine, failureReasonField),
    ...causeOf(failed),
    message: failed?.message ?? 'The engine failed.',
  };
}
