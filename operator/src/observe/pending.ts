/**
 * What a starting engine waits for, read from its pods as Kubernetes reports them: a pod not
 * created yet, a pod no node has room for (the scheduler's own words, e.g. `0/3 nodes are
 * available: 3 Insufficient cpu.`), an image being pulled, a container being created, or an
 * engine that runs and does not answer yet. Pure.
 *
 * Sandbox engines report it in `pendingReason` and `pendingMessage`; every kind reports it as
 * the reason and message of its `Ready` condition while it starts.
 */
import type { V1ContainerStatus, V1Pod, V1PodStatus } from '@kubernetes/client-node';

/** The API's PendingReason names, in the order of precedence when an engine's pods disagree. */
export const PENDING_REASONS = [
  'PENDING_REASON_SCHEDULING',
  'PENDING_REASON_PULLING_IMAGE',
  'PENDING_REASON_CONTAINER_CREATING',
  'PENDING_REASON_CREATING_RESOURCES',
  'PENDING_REASON_WAITING_READINESS',
] as const;
export type PendingReason = (typeof PENDING_REASONS)[number];

/** The `Ready` condition's reason while an engine waits for each of them. */
export const PENDING_CAUSES: Readonly<Record<PendingReason, string>> = {
  PENDING_REASON_SCHEDULING: 'Unschedulable',
  PENDING_REASON_PULLING_IMAGE: 'PullingImage',
  PENDING_REASON_CONTAINER_CREATING: 'ContainerCreating',
  PENDING_REASON_CREATING_RESOURCES: 'CreatingResources',
  PENDING_REASON_WAITING_READINESS: 'WaitingForReadiness',
};

export type Pending = [reason: PendingReason, message: string];

const PULLING = ['ErrImagePull', 'ImagePullBackOff', 'Pulling'];

function containerPending(status: V1ContainerStatus | undefined): Pending | undefined {
  const waiting = status?.state?.waiting;
  if (waiting === undefined) return undefined;
  const reason = waiting.reason ?? '';
  const message = waiting.message ?? reason;
  if (PULLING.includes(reason))
    return ['PENDING_REASON_PULLING_IMAGE', message || 'The image is being pulled'];
  return ['PENDING_REASON_CONTAINER_CREATING', message || 'The container is being created'];
}

/** Why a pod waits for a node, when it is not scheduled yet. */
function schedulingPending(status: V1PodStatus): Pending | undefined {
  const scheduled = (status.conditions ?? []).find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'True' || status.phase === 'Running') return undefined;
  return ['PENDING_REASON_SCHEDULING', scheduled?.message || 'The pod waits for a node'];
}

/** Why one pod of an engine is not serving yet. */
export function podPending(pod: V1Pod | undefined): Pending {
  if (pod === undefined) return ['PENDING_REASON_CREATING_RESOURCES', 'The engine pod is being created'];
  const status = pod.status ?? {};
  const waiting =
    schedulingPending(status) ??
    containerPending(status.initContainerStatuses?.find((c) => c.state?.waiting !== undefined)) ??
    containerPending(status.containerStatuses?.[0]);
  if (waiting) return waiting;
  return status.phase === 'Running'
    ? ['PENDING_REASON_WAITING_READINESS', 'The container runs and is not ready yet']
    : ['PENDING_REASON_CONTAINER_CREATING', 'The container is being created'];
}

/**
 * What an engine of `wanted` pods waits for: the most telling of its pods' reasons (a pod no node
 * has room for before one pulling its image, and so on), or the pods still to be created.
 */
export function enginePending(pods: readonly V1Pod[], wanted: number): Pending {
  const reasons = pods.map(podPending);
  if (pods.length < wanted) reasons.push(podPending(undefined));
  const rank = (p: Pending): number => PENDING_REASONS.indexOf(p[0]);
  return (
    reasons.reduce<Pending | undefined>((best, p) => (best && rank(best) <= rank(p) ? best : p), undefined) ??
    podPending(undefined)
  );
}
