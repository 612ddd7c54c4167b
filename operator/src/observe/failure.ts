/**
 * Why an engine failed, read from what Kubernetes reports of its pods and claims: container
 * statuses (the current and the last termination's reason and exit code, the waiting reason), the
 * pod's phase and scheduling condition, and the claims' phase. Pure; the table of rules is in the
 * operator's docs (failure reasons) and in `failure.test.ts`.
 *
 * A failure is something a retry by the kubelet will not mend: a container killed for memory, a
 * process that keeps exiting (CrashLoopBackOff), an image that cannot be had, a data volume that
 * is gone. A single ErrImagePull, a container still being created or a pod that waits for room
 * on a node is waiting, not failing (see `pending.ts`).
 */
import type {
  V1ContainerStateTerminated,
  V1ContainerStatus,
  V1PersistentVolumeClaim,
  V1Pod,
} from '@kubernetes/client-node';

/** The reasons of the API's FailureReason enums (notebook engines report them). */
export const FAILURE_REASONS = {
  unknown: 'FAILURE_REASON_UNKNOWN',
  oomKilled: 'FAILURE_REASON_OOM_KILLED',
  processFailed: 'FAILURE_REASON_PROCESS_FAILED',
  pvcAccessFailure: 'FAILURE_REASON_PVC_ACCESS_FAILURE',
} as const;

/** Condition reasons (UpperCamelCase, as Kubernetes writes them) for every kind's `Failed` condition. */
export const FAILURE_CAUSES = {
  oomKilled: 'OOMKilled',
  processFailed: 'ProcessFailed',
  imagePullFailed: 'ImagePullFailed',
  volumeUnavailable: 'VolumeUnavailable',
  podFailed: 'PodFailed',
} as const;

export interface Failure {
  /** The API's FailureReason. */
  reason: string;
  /** The `Failed` condition's reason: finer than the enum (an image that cannot be pulled, say). */
  cause: string;
  /** For people: what Kubernetes said, with the container's name. */
  message: string;
}

/**
 * Waiting reasons no retry mends: pulls that failed repeatedly (one ErrImagePull may be a
 * registry hiccup; the kubelet then backs off), an image that may not be pulled and is absent
 * (`imagePullPolicy: Never`), and a malformed image name.
 */
const IMAGE_FAILURES = ['ImagePullBackOff', 'ErrImageNeverPull', 'InvalidImageName'];

/** The last termination a container status shows: the current one, else the previous. */
function lastTermination(status: V1ContainerStatus): V1ContainerStateTerminated | undefined {
  return status.state?.terminated ?? status.lastState?.terminated;
}

/** `exit code 137 (OOMKilled)`: what the kubelet recorded of a termination. */
function described(terminated: V1ContainerStateTerminated | undefined): string {
  if (terminated === undefined) return 'no termination recorded';
  const reason = terminated.reason ? ` (${terminated.reason})` : '';
  const signal = terminated.signal ?? (terminated.exitCode > 128 ? terminated.exitCode - 128 : undefined);
  const killed = signal !== undefined && terminated.reason !== 'OOMKilled' ? `, signal ${signal}` : '';
  return `exit code ${terminated.exitCode}${killed}${reason}`;
}

/** What a container's flattened status shows: its last termination and why it waits, if it does. */
interface ContainerView {
  name: string;
  terminated: V1ContainerStateTerminated | undefined;
  waitingReason: string;
  waitingMessage: string;
}

function view(status: V1ContainerStatus): ContainerView {
  const waiting = status.state?.waiting ?? {};
  return {
    name: `container "${status.name}"`,
    terminated: lastTermination(status),
    waitingReason: waiting.reason ?? '',
    waitingMessage: waiting.message ?? '',
  };
}

/** Killed at its memory limit: now, or before its latest restart. */
function oomKilled(c: ContainerView): Failure | undefined {
  if (c.terminated?.reason !== 'OOMKilled') return undefined;
  return {
    reason: FAILURE_REASONS.oomKilled,
    cause: FAILURE_CAUSES.oomKilled,
    message: `The engine ran out of memory: ${c.name} was killed at its memory limit (${described(c.terminated)})`,
  };
}

/** Exiting again and again (the kubelet backs off), or ended with an error in a pod that is over. */
function processFailed(c: ContainerView, podOver: boolean): Failure | undefined {
  const crashing = c.waitingReason === 'CrashLoopBackOff';
  if (!crashing && !(podOver && (c.terminated?.exitCode ?? 0) !== 0)) return undefined;
  return {
    reason: FAILURE_REASONS.processFailed,
    cause: FAILURE_CAUSES.processFailed,
    message: `The engine process failed: ${c.name} ended with ${described(c.terminated)}`,
  };
}

/** An image the node cannot get; the enums have no reason for it, the condition has. */
function imageFailed(c: ContainerView): Failure | undefined {
  if (!IMAGE_FAILURES.includes(c.waitingReason)) return undefined;
  return {
    reason: FAILURE_REASONS.unknown,
    cause: FAILURE_CAUSES.imagePullFailed,
    message: `The engine image cannot be pulled for ${c.name}: ${c.waitingMessage || c.waitingReason}`,
  };
}

/**
 * What one container's status says went wrong, if anything; the first rule that matches wins.
 * `podOver`: the pod has ended and its containers will not be restarted.
 */
function containerFailure(status: V1ContainerStatus, podOver: boolean): Failure | undefined {
  const c = view(status);
  return oomKilled(c) ?? processFailed(c, podOver) ?? imageFailed(c);
}

/**
 * How long a pod may wait for its data volume before the engine counts as failed: the scheduler
 * can briefly miss a claim that was just created.
 */
export const CLAIM_GRACE_MS = 120_000;

/** The scheduler's words for a data volume that is gone. An unbound claim is not a failure: it is how every new volume starts. */
const CLAIM_GONE = /persistentvolumeclaim "[^"]*" (not found|is being deleted)/i;

/**
 * Whether the scheduler says that every node conflicts with the volume's node affinity: the node
 * holding the volume (a local volume) is gone, and no node can ever mount it.
 */
function volumeNodeGone(message: string): boolean {
  const total = /^0\/(\d+) nodes are available/.exec(message)?.[1];
  const conflicts = /(\d+) node\(s\) had volume node affinity conflict/.exec(message)?.[1];
  return total !== undefined && total !== '0' && conflicts === total;
}

/** A pod the scheduler has not placed for a while because its data volume is gone or unreachable. */
function claimFailure(pod: V1Pod, now: Date): Failure | undefined {
  const since = now.getTime() - CLAIM_GRACE_MS;
  const condition = (pod.status?.conditions ?? []).find(
    (c) =>
      c.type === 'PodScheduled' &&
      c.status === 'False' &&
      (CLAIM_GONE.test(c.message ?? '') || volumeNodeGone(c.message ?? '')) &&
      new Date(c.lastTransitionTime ?? now).getTime() <= since,
  );
  return condition
    ? {
        reason: FAILURE_REASONS.pvcAccessFailure,
        cause: FAILURE_CAUSES.volumeUnavailable,
        message: `The engine's data volume cannot be used: ${condition.message ?? ''}`,
      }
    : undefined;
}

/** A pod that ended for a reason of its own (evicted, say), not a container's. */
function podFailure(pod: V1Pod): Failure {
  const status = pod.status ?? {};
  const why = [status.reason, status.message].filter(Boolean).join(': ');
  return {
    reason: FAILURE_REASONS.unknown,
    cause: FAILURE_CAUSES.podFailed,
    message: `The engine's pod failed${why ? `: ${why}` : ''}`,
  };
}

/** Why a pod failed or keeps crashing, if it does, as of `now`. Init containers count too. */
export function failure(pod: V1Pod, now: Date): Failure | undefined {
  if (pod.metadata?.deletionTimestamp !== undefined) return undefined;
  const status = pod.status ?? {};
  const podFailed = status.phase === 'Failed';
  // A pod failed for a reason of its own (Evicted, Shutdown): its containers were stopped, their
  // exit codes say nothing of the engine's process.
  const processEnded = podFailed && !status.reason;
  const containers = [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])];
  const found = containers.map((c) => containerFailure(c, processEnded)).find((f) => f !== undefined);
  return found ?? (podFailed ? podFailure(pod) : claimFailure(pod, now));
}

/** A data volume claim whose volume is gone (`Lost`): nothing can mount it again. */
export function claimLost(claims: readonly V1PersistentVolumeClaim[]): Failure | undefined {
  const lost = claims.find((c) => c.metadata?.deletionTimestamp === undefined && c.status?.phase === 'Lost');
  if (lost === undefined) return undefined;
  return {
    reason: FAILURE_REASONS.pvcAccessFailure,
    cause: FAILURE_CAUSES.volumeUnavailable,
    message: `The engine's data volume is lost: claim "${lost.metadata?.name ?? ''}" has no volume any more`,
  };
}
