/**
 * What an engine's `queueStatus` should say, from its StatefulSet's Workload (Kueue's account of
 * its pod group) and what was reported before: QUEUED while the Workload waits for quota, with
 * Kueue's reason and the engine's place in the queue; ADMITTED once it holds quota; PREEMPTED when
 * Kueue evicted it to make room for an engine of higher queue priority (or to give a workspace
 * back the quota it lent) — the operator then stops the engine, as a user would, keeping its data.
 * Pure.
 */
import type { EngineQueueStatus } from '../gen/resources.ts';
import type { WorkloadCondition, WorkloadView } from './workloads.ts';

export interface QueueObservation {
  /** The queue as the API names it, e.g. `workspaces/w1`. */
  queue: string;
  /** The engine is wanted stopped (paused or terminated). */
  stopWanted: boolean;
  /** The Workload of the engine's current StatefulSet; none before Kueue made it, or with no set. */
  workload: WorkloadView | undefined;
  /** Workloads ahead of it in its LocalQueue, when known. */
  position: number | undefined;
  previous: EngineQueueStatus | undefined;
  now: Date;
}

export interface QueuePlan {
  /** The status to report; undefined: leave what is reported. */
  status?: EngineQueueStatus;
  /** Kueue preempted the running engine: stop it. */
  preempted?: boolean;
  /** The Workload waits for quota (its position is worth asking for). */
  waiting?: boolean;
}

const WAITING_MESSAGE = 'The engine waits for its queue to admit it';

const condition = (workload: WorkloadView, type: string): WorkloadCondition | undefined =>
  workload.conditions.find((c) => c.type === type && c.status === 'True');

/** Kueue's words when it evicted the Workload to make room for another; undefined otherwise. */
export function preemption(workload: WorkloadView): string | undefined {
  const evicted = condition(workload, 'Evicted');
  const preempted = condition(workload, 'Preempted');
  if (evicted?.reason !== 'Preempted' && preempted === undefined) return undefined;
  return preempted?.message || evicted?.message || 'Preempted by the queue';
}

/** Whether the Workload holds quota (Kueue reserved it; the pods are let through). */
function admitted(workload: WorkloadView): boolean {
  return condition(workload, 'QuotaReserved') !== undefined;
}

/** `since` kept while the state stays, the time now when it changes. */
function sinceFor(
  previous: EngineQueueStatus | undefined,
  state: EngineQueueStatus['state'],
  now: Date,
): string {
  const since = previous !== undefined && previous.state === state ? previous.since : undefined;
  return since ?? now.toISOString();
}

/** ADMITTED, with Kueue's words. */
function admittedPlan(o: QueueObservation, workload: WorkloadView): QueuePlan {
  const message = condition(workload, 'Admitted')?.message ?? condition(workload, 'QuotaReserved')?.message;
  return {
    status: {
      state: 'STATE_ADMITTED',
      queue: o.queue,
      message: message ?? '',
      since: sinceFor(o.previous, 'STATE_ADMITTED', o.now),
    },
  };
}

/** QUEUED, with what it waits for in Kueue's words (before Kueue looked at it: that it waits). */
function queuedPlan(o: QueueObservation): QueuePlan {
  const waitingFor = o.workload?.conditions.find(
    (c) => c.type === 'QuotaReserved' && c.status === 'False',
  )?.message;
  return {
    status: {
      state: 'STATE_QUEUED',
      queue: o.queue,
      ...(o.position === undefined ? {} : { position: o.position }),
      message: waitingFor || WAITING_MESSAGE,
      since: sinceFor(o.previous, 'STATE_QUEUED', o.now),
    },
    waiting: o.workload !== undefined,
  };
}

export function planQueueStatus(o: QueueObservation): QueuePlan {
  const { workload } = o;
  const preempted = workload === undefined ? undefined : preemption(workload);
  if (preempted !== undefined && !o.stopWanted)
    return {
      status: {
        state: 'STATE_PREEMPTED',
        queue: o.queue,
        message: preempted,
        since: sinceFor(o.previous, 'STATE_PREEMPTED', o.now),
      },
      preempted: true,
    };
  // Stopped (by its user, or preempted before): what was reported stays until the next run queues.
  if (o.stopWanted) return {};
  if (workload !== undefined && admitted(workload)) return admittedPlan(o, workload);
  return queuedPlan(o);
}
