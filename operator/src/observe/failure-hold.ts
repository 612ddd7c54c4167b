/**
 * A failed engine stays failed until it is resumed: its pods are stopped (so a crashing engine
 * does not hold its node's resources forever) and its state, reason and message stay as first
 * seen. The failure time is the `Failed` condition's transition time; a resume after it ends the
 * hold. Pure.
 */
import { sharedStatus, type EngineResource, type StoredCondition } from '../kinds/kind.ts';
import { timeOf } from '../../../shared/durations.ts';

/** Condition types the operator reports. */
export const READY = 'Ready';
export const FAILED = 'Failed';
export const STOPPED = 'Stopped';

export interface HeldFailure {
  since: Date;
  reason: string;
  /** The `Failed` condition's reason as first reported (e.g. `OOMKilled`). */
  cause?: string;
  message: string;
}

function failedCondition(engine: EngineResource): StoredCondition | undefined {
  const conditions = sharedStatus(engine).conditions ?? [];
  return conditions.find((c) => c.type === FAILED && c.status === 'True');
}

/** The `Failed` condition's reason, when it has one. */
function causeOf(failed: StoredCondition | undefined): { cause?: string } {
  return failed?.reason ? { cause: failed.reason } : {};
}

/**
 * The failure the engine is held in, if any; `failureReason` is the reason its status reports
 * (kinds that have one), the unknown reason otherwise.
 */
export function heldFailure(engine: EngineResource, failureReason?: string): HeldFailure | undefined {
  const status = sharedStatus(engine);
  if (status.state !== 'STATE_FAILED') return undefined;
  const failed = failedCondition(engine);
  const since = timeOf(failed?.lastTransitionTime);
  const resumed = timeOf(status.resumeTime);
  if (since === undefined || (resumed !== undefined && resumed > since)) return undefined;
  return {
    since,
    reason: failureReason ?? 'FAILURE_REASON_UNKNOWN',
    ...causeOf(failed),
    message: failed?.message ?? 'The engine failed.',
  };
}
