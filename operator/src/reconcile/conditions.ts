/**
 * Engine conditions, Kubernetes style: a condition keeps its lastTransitionTime until its status
 * changes. Pure.
 */
import type { StoredCondition } from '../kinds/kind.ts';

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration: number;
}

export { FAILED, READY, STOPPED } from '../observe/failure-hold.ts';
/** False while an engine written without the gateway's admission is held (see the reconciler). */
export const ADMITTED = 'Admitted';

/** Reasons, UpperCamelCase as Kubernetes writes them. */
export const REASONS = {
  running: 'Running',
  starting: 'Starting',
  failed: 'EngineFailed',
  invalidPodTemplate: 'InvalidPodTemplate',
  invalidWorkload: 'InvalidWorkload',
  stopped: 'Stopped',
  userRequested: 'UserRequested',
  deleting: 'Deleting',
  notAdmitted: 'NotAdmitted',
  notServingYet: 'NotServingYet',
  /** The engine waits in its GPU queue (its pods are held until the queue admits them). */
  queued: 'Queued',
  /** The queue stopped the engine to make room for another (its stop reason). */
  preempted: 'Preempted',
} as const;

/** The new conditions: `wanted` merged into `previous`, transition times kept where status did not change. */
export function mergeConditions(
  previous: readonly StoredCondition[],
  wanted: readonly Omit<Condition, 'lastTransitionTime'>[],
  now: Date,
): Condition[] {
  return wanted.map((condition) => {
    const before = previous.find((c) => c.type === condition.type);
    // A condition written by hand may lack its time: it gets one as if it had just changed.
    const lastTransitionTime =
      before !== undefined && before.status === condition.status
        ? (before.lastTransitionTime ?? now.toISOString())
        : now.toISOString();
    return { ...condition, lastTransitionTime };
  });
}
