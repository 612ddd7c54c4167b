/**
 * What an engine's state is, from what the cluster shows: a pure function of the engine's intent
 * and its pods. A pod is Ready when the engine inside answers its readiness probe on the engine's
 * port; a running pod that is not Ready yet is CONNECTING (DAI, H2O; notebooks have no such state
 * and stay STARTING).
 */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { EngineKind } from '../kinds/kind.ts';

export interface Observation {
  kind: EngineKind;
  deleting: boolean;
  /** paused (DAI, notebook) or terminated (H2O) is wanted. */
  stopWanted: boolean;
  wantedPods: number;
  pods: readonly V1Pod[];
  now: Date;
}

export interface ObservedState {
  state: string;
  reconciling: boolean;
  /** Failure reason (reported by kinds that have the field), when FAILED. */
  failureReason?: string;
  /** Why the engine failed, for people. */
  message?: string;
}

const isReady = (pod: V1Pod): boolean =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/**
 * The scheduler's words for a data volume that is gone. An unbound claim is not a failure: it is
 * how every new volume starts.
 */
const CLAIM_GONE = /persistentvolumeclaim "[^"]*" (not found|is being deleted)/i;

export interface Failure {
  reason: string;
  message: string;
}

/** Image pulls that failed repeatedly (a single ErrImagePull may be a registry hiccup). */
const PULL_FAILURES = ['ImagePullBackOff', 'InvalidImageName'];

/** What a container status shows, flattened. */
interface ContainerView {
  terminatedReason: string;
  exitCode: number;
  waitingReason: string;
  waitingMessage: string;
}

function view(status: V1ContainerStatus): ContainerView {
  const terminated = status.state?.terminated ?? status.lastState?.terminated ?? { exitCode: 0 };
  const waiting = status.state?.waiting ?? {};
  return {
    terminatedReason: terminated.reason ?? '',
    exitCode: terminated.exitCode,
    waitingReason: waiting.reason ?? '',
    waitingMessage: waiting.message ?? '',
  };
}

/** What one container's status says went wrong, if anything; the first rule that matches wins. */
function containerFailure(status: V1ContainerStatus, podFailed: boolean): Failure | undefined {
  const c = view(status);
  if (c.terminatedReason === 'OOMKilled')
    return { reason: 'FAILURE_REASON_OOM_KILLED', message: 'the engine ran out of memory' };
  if (c.waitingReason === 'CrashLoopBackOff' || (podFailed && c.exitCode !== 0))
    return {
      reason: 'FAILURE_REASON_PROCESS_FAILED',
      message: `the engine process failed: ${c.terminatedReason || c.waitingReason}`,
    };
  if (PULL_FAILURES.includes(c.waitingReason))
    return {
      reason: 'FAILURE_REASON_UNKNOWN',
      message: `the engine image cannot be pulled: ${c.waitingMessage || c.waitingReason}`,
    };
  return undefined;
}

/**
 * How long a pod may wait for its data volume before the engine counts as failed: the scheduler
 * can briefly miss a claim that was just created.
 */
export const CLAIM_GRACE_MS = 120_000;

/** A pod that has not been scheduled for a while because its data volume is gone. */
function claimFailure(pod: V1Pod, now: Date): Failure | undefined {
  const since = now.getTime() - CLAIM_GRACE_MS;
  const condition = (pod.status?.conditions ?? []).find(
    (c) =>
      c.type === 'PodScheduled' &&
      c.status === 'False' &&
      CLAIM_GONE.test(c.message ?? '') &&
      new Date(c.lastTransitionTime ?? now).getTime() <= since,
  );
  return condition
    ? { reason: 'FAILURE_REASON_PVC_ACCESS_FAILURE', message: condition.message ?? '' }
    : undefined;
}

function podFailure(message: string | undefined): Failure {
  return { reason: 'FAILURE_REASON_UNKNOWN', message: message ?? 'the pod failed' };
}

/** Why a pod failed or keeps crashing, if it does, as of `now`. */
export function failure(pod: V1Pod, now: Date): Failure | undefined {
  if (pod.metadata?.deletionTimestamp !== undefined) return undefined;
  const status = pod.status ?? {};
  const podFailed = status.phase === 'Failed';
  const found = (status.containerStatuses ?? []).map((c) => containerFailure(c, podFailed)).find((f) => f);
  return found ?? (podFailed ? podFailure(status.message) : claimFailure(pod, now));
}

/** The state an engine is in, and whether the operator is still moving it toward its intent. */
export function observe(o: Observation): ObservedState {
  const live = o.pods.filter(
    (p) => p.metadata?.deletionTimestamp === undefined || p.status?.phase === 'Running',
  );
  if (o.deleting) return { state: 'STATE_DELETING', reconciling: true };
  if (o.stopWanted) {
    const { stopping, stopped } = o.kind.stopStates;
    return o.pods.length > 0
      ? { state: stopping, reconciling: true }
      : { state: stopped, reconciling: false };
  }
  const failed = live.map((pod) => failure(pod, o.now)).find((f) => f !== undefined);
  if (failed) {
    return {
      state: 'STATE_FAILED',
      reconciling: false,
      message: failed.message,
      failureReason: failed.reason,
    };
  }
  const ready = live.filter(isReady).length;
  if (live.length >= o.wantedPods && ready >= o.wantedPods)
    return { state: 'STATE_RUNNING', reconciling: false };
  const running = live.some((p) => p.status?.phase === 'Running');
  const connecting = running && o.kind.hasConnectingState;
  return { state: connecting ? 'STATE_CONNECTING' : 'STATE_STARTING', reconciling: true };
}
