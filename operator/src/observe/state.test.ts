import type { V1Pod } from '@kubernetes/client-node';
import { daiEngineKind } from '../kinds/dai-engine.ts';
import { h2oEngineKind } from '../kinds/h2o-engine.ts';
import { notebookEngineKind } from '../kinds/notebook-engine.ts';
import { observe } from './state.ts';

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

  test('an H2O engine is RUNNING once all its nodes run and its leader alone is ready (followers never are)', () => {
    const kind = h2oEngineKind;
    const h2o = { ...base, kind, wantedPods: 3 };
    // Starting: no node answers yet.
    expect(observe({ ...h2o, pods: [ready(false), ready(false), ready(false)] })).toEqual({
      state: 'STATE_CONNECTING',
      reconciling: true,
    });
    // The nodes look for each other: H2O-3 has every node answer its probe until the cloud forms.
    expect(observe({ ...h2o, pods: [ready(true), ready(true), ready(true)] }).state).toBe('STATE_CONNECTING');
    expect(observe({ ...h2o, pods: [ready(true), ready(true), ready(false)] }).state).toBe(
      'STATE_CONNECTING',
    );
    // Formed: the leader answers, the followers do not.
    expect(observe({ ...h2o, pods: [ready(false), ready(true), ready(false)] })).toEqual({
      state: 'STATE_RUNNING',
      reconciling: false,
    });
    // A cloud of one has no followers.
    expect(observe({ ...h2o, wantedPods: 1, pods: [ready(true)] }).state).toBe('STATE_RUNNING');
    // A node not running (or not there) cannot be in the cloud.
    expect(observe({ ...h2o, pods: [ready(true), ready(false), pending] }).state).toBe('STATE_CONNECTING');
    expect(observe({ ...h2o, pods: [ready(true), ready(false)] }).state).toBe('STATE_CONNECTING');
  });

  test('other kinds are RUNNING only when every pod is ready', () => {
    expect(observe({ ...base, kind: daiEngineKind, pods: [ready(false)] }).state).toBe('STATE_CONNECTING');
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
      cause: 'OOMKilled',
    });
  });

  test('a data volume whose claim is Lost makes the engine FAILED with the PVC access reason', () => {
    const claims = [{ metadata: { name: 'data-nb-0' }, status: { phase: 'Lost' } }];
    expect(observe({ ...base, kind: notebookEngineKind, pods: [pending], claims })).toMatchObject({
      state: 'STATE_FAILED',
      failureReason: 'FAILURE_REASON_PVC_ACCESS_FAILURE',
      cause: 'VolumeUnavailable',
    });
    const bound = [{ metadata: { name: 'data-nb-0' }, status: { phase: 'Bound' } }];
    expect(observe({ ...base, kind: notebookEngineKind, pods: [ready(true)], claims: bound }).state).toBe(
      'STATE_RUNNING',
    );
  });
});
