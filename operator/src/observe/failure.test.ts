import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { claimLost, failure } from './failure.ts';

const NOW = new Date('2026-01-01T00:10:00Z');
const STARTED = new Date('2026-01-01T00:00:00Z');

/** A notebook container as a kubelet reports it, with the given states. */
const container = (state: Partial<V1ContainerStatus>, name = 'notebook'): V1ContainerStatus => ({
  name,
  image: 'jupyter:1',
  imageID: '',
  ready: false,
  restartCount: 0,
  ...state,
});
const terminated = (reason: string, exitCode: number) => ({
  terminated: { reason, exitCode, startedAt: STARTED, finishedAt: STARTED },
});
/** A pod of a StatefulSet (restartPolicy Always): it stays Running while its container restarts. */
const running = (
  containerStatuses: V1ContainerStatus[],
  initContainerStatuses?: V1ContainerStatus[],
): V1Pod => ({
  metadata: { name: 'nb-0' },
  status: {
    phase: 'Running',
    conditions: [
      { type: 'PodScheduled', status: 'True' },
      { type: 'Ready', status: 'False' },
    ],
    containerStatuses,
    ...(initContainerStatuses ? { initContainerStatuses } : {}),
  },
});
const unscheduled = (message: string, since: Date): V1Pod => ({
  metadata: { name: 'nb-0' },
  status: {
    phase: 'Pending',
    conditions: [
      { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message, lastTransitionTime: since },
    ],
  },
});
const longAgo = new Date(NOW.getTime() - 180_000);
const justNow = new Date(NOW.getTime() - 30_000);

describe('failure(): the reason the API reports, from what the kubelet and scheduler say', () => {
  test.each<[string, V1Pod, string, string, RegExp]>([
    [
      'killed at its memory limit, restarting now (lastState OOMKilled)',
      running([
        container({ restartCount: 1, state: { running: {} }, lastState: terminated('OOMKilled', 137) }),
      ]),
      'FAILURE_REASON_OOM_KILLED',
      'OOMKilled',
      /ran out of memory: container "notebook" was killed at its memory limit \(exit code 137 \(OOMKilled\)\)/,
    ],
    [
      'killed at its memory limit, backing off (CrashLoopBackOff after OOMKilled)',
      running([
        container({
          restartCount: 3,
          state: {
            waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' },
          },
          lastState: terminated('OOMKilled', 137),
        }),
      ]),
      'FAILURE_REASON_OOM_KILLED',
      'OOMKilled',
      /out of memory/,
    ],
    [
      'killed at its memory limit, just now (state OOMKilled)',
      running([container({ state: terminated('OOMKilled', 137) })]),
      'FAILURE_REASON_OOM_KILLED',
      'OOMKilled',
      /out of memory/,
    ],
    [
      'an init container killed at its memory limit',
      running(
        [container({ state: { waiting: { reason: 'PodInitializing' } } })],
        [
          container(
            { state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: terminated('OOMKilled', 137) },
            'git-sync',
          ),
        ],
      ),
      'FAILURE_REASON_OOM_KILLED',
      'OOMKilled',
      /container "git-sync"/,
    ],
    [
      'a process that keeps exiting with an error',
      running([
        container({
          restartCount: 4,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: terminated('Error', 1),
        }),
      ]),
      'FAILURE_REASON_PROCESS_FAILED',
      'ProcessFailed',
      /process failed: container "notebook" ended with exit code 1 \(Error\)/,
    ],
    [
      'a process killed by a signal, again and again',
      running([
        container({
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: terminated('Error', 137),
        }),
      ]),
      'FAILURE_REASON_PROCESS_FAILED',
      'ProcessFailed',
      /exit code 137, signal 9 \(Error\)/,
    ],
    [
      'an entrypoint that cannot start (StartError)',
      running([
        container({
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: terminated('StartError', 128),
        }),
      ]),
      'FAILURE_REASON_PROCESS_FAILED',
      'ProcessFailed',
      /exit code 128 \(StartError\)/,
    ],
    [
      'a process that exits successfully and is restarted forever',
      running([
        container({
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: terminated('Completed', 0),
        }),
      ]),
      'FAILURE_REASON_PROCESS_FAILED',
      'ProcessFailed',
      /exit code 0 \(Completed\)/,
    ],
    [
      'an image pull that keeps failing',
      running([
        container({
          state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "jupyter:1"' } },
        }),
      ]),
      'FAILURE_REASON_UNKNOWN',
      'ImagePullFailed',
      /cannot be pulled for container "notebook": Back-off pulling image "jupyter:1"/,
    ],
    [
      'an image that may not be pulled and is not on the node (imagePullPolicy Never)',
      running([
        container({
          state: {
            waiting: {
              reason: 'ErrImageNeverPull',
              message: 'Container image "jupyter:1" is not present with pull policy of Never',
            },
          },
        }),
      ]),
      'FAILURE_REASON_UNKNOWN',
      'ImagePullFailed',
      /not present with pull policy of Never/,
    ],
    [
      'a data volume whose claim is gone',
      unscheduled('persistentvolumeclaim "data-nb-0" not found', longAgo),
      'FAILURE_REASON_PVC_ACCESS_FAILURE',
      'VolumeUnavailable',
      /data volume cannot be used: persistentvolumeclaim "data-nb-0" not found/,
    ],
    [
      'a local data volume on a node that is gone (every node conflicts with its affinity)',
      unscheduled(
        '0/3 nodes are available: 3 node(s) had volume node affinity conflict. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
        longAgo,
      ),
      'FAILURE_REASON_PVC_ACCESS_FAILURE',
      'VolumeUnavailable',
      /volume node affinity conflict/,
    ],
    [
      'a pod whose process ended with an error and is not restarted',
      { status: { phase: 'Failed', containerStatuses: [container({ state: terminated('Error', 2) })] } },
      'FAILURE_REASON_PROCESS_FAILED',
      'ProcessFailed',
      /exit code 2 \(Error\)/,
    ],
    [
      'a pod evicted from its node: its containers were stopped, no process failed',
      {
        status: {
          phase: 'Failed',
          reason: 'Evicted',
          message: 'The node was low on resource: ephemeral-storage.',
          containerStatuses: [container({ state: terminated('ContainerStatusUnknown', 137) })],
        },
      },
      'FAILURE_REASON_UNKNOWN',
      'PodFailed',
      /pod failed: Evicted: The node was low on resource: ephemeral-storage\./,
    ],
  ])('%s', (_what, pod, reason, cause, message) => {
    const found = failure(pod, NOW);
    expect(found).toMatchObject({ reason, cause });
    expect(found?.message).toMatch(message);
  });
});

describe('failure(): waiting is not failing', () => {
  test.each<[string, V1Pod]>([
    ['a healthy pod', { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }],
    ['a pod waiting for a node', unscheduled('0/3 nodes are available: 3 Insufficient cpu.', longAgo)],
    [
      'a pod waiting for its new volume',
      unscheduled('pod has unbound immediate PersistentVolumeClaims', longAgo),
    ],
    [
      'a claim the scheduler has just missed',
      unscheduled('persistentvolumeclaim "data-nb-0" not found', justNow),
    ],
    [
      'one node of three holding the volume and busy',
      unscheduled(
        '0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had volume node affinity conflict.',
        longAgo,
      ),
    ],
    ['a first, single pull error', running([container({ state: { waiting: { reason: 'ErrImagePull' } } })])],
    [
      'a container being created',
      running([container({ state: { waiting: { reason: 'ContainerCreating' } } })]),
    ],
    [
      'a container restarted once after an error',
      running([container({ restartCount: 1, state: { running: {} }, lastState: terminated('Error', 1) })]),
    ],
    [
      'a crashing pod being deleted',
      Object.assign(running([container({ state: { waiting: { reason: 'CrashLoopBackOff' } } })]), {
        metadata: { deletionTimestamp: NOW },
      }),
    ],
  ])('%s', (_what, pod) => {
    expect(failure(pod, NOW)).toBeUndefined();
  });
});

test('claimLost() reports a claim whose volume is gone, and not a bound or pending one', () => {
  const lost = claimLost([{ metadata: { name: 'data-nb-0' }, status: { phase: 'Lost' } }]);
  expect(lost).toMatchObject({ reason: 'FAILURE_REASON_PVC_ACCESS_FAILURE', cause: 'VolumeUnavailable' });
  expect(lost?.message).toContain('"data-nb-0"');
  expect(claimLost([{ status: { phase: 'Bound' } }, { status: { phase: 'Pending' } }])).toBeUndefined();
});
