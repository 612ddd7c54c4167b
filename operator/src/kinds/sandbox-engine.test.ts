import type { V1Pod } from '@kubernetes/client-node';
import { pendingOf, sandboxPendingStatus } from './sandbox-engine.ts';

const pod = (status: V1Pod['status']): V1Pod => ({ metadata: { name: 'sbx-0' }, status });
const scheduled = { type: 'PodScheduled', status: 'True' };

describe('why a sandbox is still starting, from its pod', () => {
  test.each([
    ['no pod yet', undefined, 'PENDING_REASON_CREATING_RESOURCES', 'The engine pod is being created'],
    [
      'no node fits',
      pod({ conditions: [{ type: 'PodScheduled', status: 'False', message: '0/3 nodes are available' }] }),
      'PENDING_REASON_SCHEDULING',
      '0/3 nodes are available',
    ],
    [
      'the image is being pulled and failing',
      pod({
        conditions: [scheduled],
        containerStatuses: [
          {
            name: 'sandbox',
            image: 'x',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "x"' } },
          },
        ],
      }),
      'PENDING_REASON_PULLING_IMAGE',
      'Back-off pulling image "x"',
    ],
    [
      'the container is being created',
      pod({
        conditions: [scheduled],
        containerStatuses: [
          {
            name: 'sandbox',
            image: 'x',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: 'ContainerCreating' } },
          },
        ],
      }),
      'PENDING_REASON_CONTAINER_CREATING',
      'ContainerCreating',
    ],
    [
      'running, not ready',
      pod({ conditions: [scheduled], phase: 'Running' }),
      'PENDING_REASON_WAITING_READINESS',
      'The container runs and is not ready yet',
    ],
  ])('%s', (_what, given, reason, message) => {
    expect(pendingOf(given)).toEqual([reason, message]);
  });
});

test('stable states have no pending reason; stopping ones are deleting resources', () => {
  expect(sandboxPendingStatus('STATE_RUNNING', [])).toEqual({
    pendingReason: 'PENDING_REASON_UNSPECIFIED',
    pendingMessage: '',
  });
  expect(sandboxPendingStatus('STATE_TERMINATED', [])).toEqual({
    pendingReason: 'PENDING_REASON_UNSPECIFIED',
    pendingMessage: '',
  });
  expect(sandboxPendingStatus('STATE_TERMINATING', []).pendingReason).toBe(
    'PENDING_REASON_DELETING_RESOURCES',
  );
  expect(sandboxPendingStatus('STATE_STARTING', []).pendingReason).toBe('PENDING_REASON_CREATING_RESOURCES');
});
