/**
 * What an engine's state is, from what the cluster shows: a pure function of the engine's intent,
 * its pods and its data claims. A pod is Ready when the engine inside answers its readiness probe;
 * a running pod that is not Ready yet is CONNECTING (DAI, H2O; notebooks have no such state and
 * stay STARTING). An engine a leader serves (H2O) runs once all its pods run and its leader is
 * ready: the followers never are.
 */
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { EngineKind } from '../kinds/kind.ts';
import { claimLost, failure, type Failure } from './failure.ts';

export { CLAIM_GRACE_MS, failure, type Failure } from './failure.ts';

export interface Observation {
  kind: EngineKind;
  deleting: boolean;
  /** paused (DAI, notebook) or terminated (H2O) is wanted. */
  stopWanted: boolean;
  wantedPods: number;
  pods: readonly V1Pod[];
  /** The engine's data volume claims, where it has them. */
  claims?: readonly V1PersistentVolumeClaim[];
  now: Date;
}

export interface ObservedState {
  state: string;
  reconciling: boolean;
  /** Failure reason (reported by kinds that have the field), when FAILED. */
  failureReason?: string;
  /** The `Failed` condition's reason, when FAILED (e.g. `OOMKilled`). */
  cause?: string;
  /** Why the engine failed, for people. */
  message?: string;
}

const isReady = (pod: V1Pod): boolean =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** Pods that must be ready for the engine to serve: its leader alone, or every pod. */
export function readyPodsWanted(kind: EngineKind, wantedPods: number): number {
  return kind.servedByLeader === true ? Math.min(1, wantedPods) : wantedPods;
}

/**
 * Whether `ready` pods of `wantedPods` serve the engine. A cloud's nodes all answer its readiness
 * probe until they have formed it (H2O-3 keeps them ready while they look for each other), so it
 * serves only once its leader alone is ready.
 */
export function servesWith(kind: EngineKind, wantedPods: number, ready: number): boolean {
  if (kind.servedByLeader === true && wantedPods > 1) return ready === 1;
  return ready >= readyPodsWanted(kind, wantedPods);
}

function failed(found: Failure): ObservedState {
  return {
    state: 'STATE_FAILED',
    reconciling: false,
    message: found.message,
    failureReason: found.reason,
    cause: found.cause,
  };
}

/** Stopping while pods remain, stopped once they are gone. */
function stopping(o: Observation): ObservedState {
  const { stopping: going, stopped } = o.kind.stopStates;
  return o.pods.length > 0 ? { state: going, reconciling: true } : { state: stopped, reconciling: false };
}

/** The state an engine is in, and whether the operator is still moving it toward its intent. */
export function observe(o: Observation): ObservedState {
  const live = o.pods.filter(
    (p) => p.metadata?.deletionTimestamp === undefined || p.status?.phase === 'Running',
  );
  if (o.deleting) return { state: 'STATE_DELETING', reconciling: true };
  if (o.stopWanted) return stopping(o);
  const found =
    live.map((pod) => failure(pod, o.now)).find((f) => f !== undefined) ?? claimLost(o.claims ?? []);
  if (found) return failed(found);
  const running = live.filter((p) => p.status?.phase === 'Running');
  const ready = live.filter(isReady).length;
  if (running.length >= o.wantedPods && servesWith(o.kind, o.wantedPods, ready))
    return { state: 'STATE_RUNNING', reconciling: false };
  const connecting = running.length > 0 && o.kind.hasConnectingState;
  return { state: connecting ? 'STATE_CONNECTING' : 'STATE_STARTING', reconciling: true };
}
