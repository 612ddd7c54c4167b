import type { V1Pod } from '@kubernetes/client-node';
import { daiEngineKind } from '../kinds/dai-engine.ts';
import { h2oEngineKind } from '../kinds/h2o-engine.ts';
import { notebookEngineKind } from '../kinds/notebook-engine.ts';
import { failure, observe } from './state.ts';

const ready = (ok: boolean): V1Pod => ({
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: ok ? 'True' : 'False' }] },
});
const pending: V1Pod = { status: { phase: 'Pending' } };
const crashing = (reason: string, lastReason?: string): V1Pod => ({
  status: {
    phase: 'Running',
    containerStatuses: [
      {
        name: 'c',
        image: 'i',
        imageID: '',
        ready: false,
        restartCount: 3,
        state: { waiting: { reason } },
        ...(lastReason ? { lastState: { terminated: { reason: lastReason, exitCode: 137 } } } : {}),
      },
    ],
  },
});
const NOW = new Date('2026-01-01T00:10:00Z');
const base = { deleting: false, stopWanted: false, wantedPods: 1, now: NOW };

describe('observe()', () => {
  test('an engine whose pods are all ready is RUNNING and no longer reconciling', () => {
    expect(observe({ ...base, kind: daiEngineKind, pods: [ready(true)] })).toEqual({
      state: 'STATE_RUNNING',
      reconciling: false,
    });
  });

  test('a DAI engine whose pod runs but does not answer yet is CONNECTING', () => {
    expect(observe({ ...base, kind: daiEngineKind, pods: [ready(false)] }).state).toBe('STATE_CONNECTING');
  });

  test('a notebook engine has no CONNECTING state: it stays STARTING', () => {
    expect(observe({ ...base, kind: notebookEngineKind, pods: [ready(false)] }).state).toBe('STATE_STARTING');
  });

  test('an H2O engine is RUNNING only when every node is ready', () => {
    const kind = h2oEngineKind;
    expect(observe({ ...base, kind, wantedPods: 3, pods: [ready(true), ready(true), pending] }).state).toBe(
      'STATE_CONNECTING',
    );
    expect(observe({ ...base, kind, wantedPods: 3, pods: [ready(true), ready(true)] }).state).toBe(
      'STATE_CONNECTING',
    );
    expect(
      observe({ ...base, kind, wantedPods: 3, pods: [ready(true), ready(true), ready(true)] }).state,
    ).toBe('STATE_RUNNING');
  });

  test('no pods yet is STARTING', () => {
    expect(observe({ ...base, kind: daiEngineKind, pods: [] })).toEqual({
      state: 'STATE_STARTING',
      reconciling: true,
    });
  });

  test('pausing while pods remain, paused once they are gone', () => {
    const paused = { ...base, stopWanted: true, wantedPods: 0 };
    expect(observe({ ...paused, kind: daiEngineKind, pods: [ready(true)] })).toEqual({
      state: 'STATE_PAUSING',
      reconciling: true,
    });
    expect(observe({ ...paused, kind: daiEngineKind, pods: [] })).toEqual({
      state: 'STATE_PAUSED',
      reconciling: false,
    });
  });

  test('H2O engines terminate instead of pausing', () => {
    const stop = { ...base, stopWanted: true, wantedPods: 0 };
    expect(observe({ ...stop, kind: h2oEngineKind, pods: [ready(true)] }).state).toBe('STATE_TERMINATING');
    expect(observe({ ...stop, kind: h2oEngineKind, pods: [] }).state).toBe('STATE_TERMINATED');
  });

  test('deletion wins over everything', () => {
    expect(observe({ ...base, deleting: true, kind: daiEngineKind, pods: [ready(true)] }).state).toBe(
      'STATE_DELETING',
    );
  });

  test('a crashing pod makes the engine FAILED with the reason', () => {
    expect(
      observe({ ...base, kind: notebookEngineKind, pods: [crashing('CrashLoopBackOff', 'OOMKilled')] }),
    ).toMatchObject({
      state: 'STATE_FAILED',
      reconciling: false,
      failureReason: 'FAILURE_REASON_OOM_KILLED',
    });
  });
});

describe('failure()', () => {
  test.each([
    ['OOM killed', crashing('CrashLoopBackOff', 'OOMKilled'), 'FAILURE_REASON_OOM_KILLED'],
    ['crash loop', crashing('CrashLoopBackOff', 'Error'), 'FAILURE_REASON_PROCESS_FAILED'],
    ['image pull', crashing('ImagePullBackOff'), 'FAILURE_REASON_UNKNOWN'],
    [
      'unbound claim',
      {
        status: {
          phase: 'Pending',
          conditions: [
            {
              type: 'PodScheduled',
              status: 'False',
              message: 'persistentvolumeclaim "data-dai-0" not found',
              lastTransitionTime: new Date('2026-01-01T00:07:00Z'),
            },
          ],
        },
      },
      'FAILURE_REASON_PVC_ACCESS_FAILURE',
    ],
    ['failed phase', { status: { phase: 'Failed', message: 'evicted' } }, 'FAILURE_REASON_UNKNOWN'],
  ])('%s', (_name, pod, reason) => {
    expect(failure(pod, NOW)?.reason).toBe(reason);
  });

  test('a claim the scheduler has just missed is not a failure yet', () => {
    const lastTransitionTime = new Date(NOW.getTime() - 60_000);
    const message = 'persistentvolumeclaim "data-dai-0" not found';
    const pod = {
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', message, lastTransitionTime }],
      },
    };
    expect(failure(pod, NOW)).toBeUndefined();
  });

  test('a healthy or starting pod has no failure, nor one waiting for its new volume', () => {
    expect(failure(ready(true), NOW)).toBeUndefined();
    expect(failure(pending, NOW)).toBeUndefined();
    const unbound = 'pod has unbound immediate PersistentVolumeClaims';
    expect(
      failure(
        {
          status: {
            phase: 'Pending',
            conditions: [{ type: 'PodScheduled', status: 'False', message: unbound }],
          },
        },
        NOW,
      ),
    ).toBeUndefined();
  });
});
