import type { V1Pod } from '@kubernetes/client-node';
import { enginePending, podPending } from './pending.ts';

const scheduled = { type: 'PodScheduled', status: 'True' };
const unschedulable: V1Pod = {
  status: {
    phase: 'Pending',
    conditions: [
      {
        type: 'PodScheduled',
        status: 'False',
        reason: 'Unschedulable',
        message:
          '0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.',
      },
    ],
  },
};
const pulling: V1Pod = {
  status: {
    phase: 'Pending',
    conditions: [scheduled],
    containerStatuses: [
      {
        name: 'h2o',
        image: 'h2o:3',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { waiting: { reason: 'ErrImagePull', message: 'failed to pull and unpack image "h2o:3"' } },
      },
    ],
  },
};
const notReady: V1Pod = {
  status: { phase: 'Running', conditions: [scheduled, { type: 'Ready', status: 'False' }] },
};

test('podPending() names what one pod waits for, in the words of Kubernetes', () => {
  const [reason, message] = podPending(unschedulable);
  expect(reason).toBe('PENDING_REASON_SCHEDULING');
  expect(message).toMatch(/^0\/3 nodes are available: 3 Insufficient cpu\./);
  expect(podPending(pulling)).toEqual([
    'PENDING_REASON_PULLING_IMAGE',
    'failed to pull and unpack image "h2o:3"',
  ]);
  expect(podPending(notReady)).toEqual([
    'PENDING_REASON_WAITING_READINESS',
    'The container runs and is not ready yet',
  ]);
  expect(podPending(undefined)[0]).toBe('PENDING_REASON_CREATING_RESOURCES');
});

test('enginePending() gives the most telling reason among the pods of an engine', () => {
  // An H2O engine of three: two nodes run (waiting for the cloud), one has no room on any node.
  expect(enginePending([notReady, unschedulable, notReady], 3)[0]).toBe('PENDING_REASON_SCHEDULING');
  expect(enginePending([notReady, pulling], 3)[0]).toBe('PENDING_REASON_PULLING_IMAGE');
  expect(enginePending([notReady], 3)[0]).toBe('PENDING_REASON_CREATING_RESOURCES');
  expect(enginePending([notReady, notReady], 2)[0]).toBe('PENDING_REASON_WAITING_READINESS');
  expect(enginePending([], 1)[0]).toBe('PENDING_REASON_CREATING_RESOURCES');
});
