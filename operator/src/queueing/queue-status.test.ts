import { planQueueStatus, type QueueObservation } from './queue-status.ts';
import type { WorkloadView } from './workloads.ts';

const NOW = new Date('2026-11-28T09:00:00Z');
const BEFORE = '2026-11-28T08:00:00.000Z';

function workload(...conditions: WorkloadView['conditions']): WorkloadView {
  return { name: 'statefulset-dai-1-abc', setUid: 'u1', setName: 'dai-1', deleting: false, conditions };
}

const PENDING = workload({
  type: 'QuotaReserved',
  status: 'False',
  reason: 'Pending',
  message:
    "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor simulated-gpu, 1 more needed",
});
const ADMITTED = workload(
  {
    type: 'QuotaReserved',
    status: 'True',
    reason: 'QuotaReserved',
    message: 'Quota reserved in ClusterQueue workspace-w1',
  },
  { type: 'Admitted', status: 'True', reason: 'Admitted', message: 'The workload is admitted' },
);
const PREEMPTED = workload(
  { type: 'QuotaReserved', status: 'False', reason: 'Pending', message: 'waiting' },
  {
    type: 'Evicted',
    status: 'True',
    reason: 'Preempted',
    message: 'Preempted to accommodate a workload (UID: x) due to prioritization in the ClusterQueue',
  },
  {
    type: 'Preempted',
    status: 'True',
    reason: 'InClusterQueue',
    message: 'Preempted to accommodate a workload (UID: x) due to prioritization in the ClusterQueue',
  },
);

const observation = (o: Partial<QueueObservation>): QueueObservation => ({
  queue: 'workspaces/w1',
  stopWanted: false,
  workload: undefined,
  position: undefined,
  previous: undefined,
  now: NOW,
  ...o,
});

describe('planQueueStatus()', () => {
  test("a waiting engine is QUEUED with Kueue's reason and its position, since it started waiting", () => {
    expect(planQueueStatus(observation({ workload: PENDING, position: 3 }))).toEqual({
      status: {
        state: 'STATE_QUEUED',
        queue: 'workspaces/w1',
        position: 3,
        message: expect.stringMatching(/insufficient unused quota for nvidia\.com\/gpu/) as unknown,
        since: NOW.toISOString(),
      },
      waiting: true,
    });
    const previous = { state: 'STATE_QUEUED' as const, queue: 'workspaces/w1', since: BEFORE };
    expect(planQueueStatus(observation({ workload: PENDING, previous })).status?.since).toBe(BEFORE);
  });

  test('before Kueue made its Workload the engine reads QUEUED, with no position to ask for', () => {
    expect(planQueueStatus(observation({}))).toEqual({
      status: {
        state: 'STATE_QUEUED',
        queue: 'workspaces/w1',
        message: 'The engine waits for its queue to admit it',
        since: NOW.toISOString(),
      },
      waiting: false,
    });
  });

  test('an admitted engine is ADMITTED from the moment it was first seen so', () => {
    const previous = { state: 'STATE_QUEUED' as const, queue: 'workspaces/w1', position: 0, since: BEFORE };
    expect(planQueueStatus(observation({ workload: ADMITTED, previous }))).toEqual({
      status: {
        state: 'STATE_ADMITTED',
        queue: 'workspaces/w1',
        message: 'The workload is admitted',
        since: NOW.toISOString(),
      },
    });
  });

  test("an engine evicted for another is PREEMPTED with the queue's words, and to be stopped", () => {
    expect(planQueueStatus(observation({ workload: PREEMPTED }))).toEqual({
      status: {
        state: 'STATE_PREEMPTED',
        queue: 'workspaces/w1',
        message: expect.stringMatching(/^Preempted to accommodate a workload/) as unknown,
        since: NOW.toISOString(),
      },
      preempted: true,
    });
  });

  test('a stopped engine keeps what it reported (PREEMPTED stays while it is paused)', () => {
    expect(planQueueStatus(observation({ workload: PREEMPTED, stopWanted: true }))).toEqual({});
    expect(planQueueStatus(observation({ workload: PENDING, stopWanted: true }))).toEqual({});
  });
});
