import type { V1Pod } from '@kubernetes/client-node';
import { daiEngineKind } from '../kinds/dai-engine.ts';
import type { EngineResource, EngineSpec, EngineStatus } from '../kinds/kind.ts';
import { notebookEngineKind } from '../kinds/notebook-engine.ts';
import { changedFields, planStatus } from './status.ts';

const NOW = new Date('2026-01-01T01:00:00Z');
const readyPod: V1Pod = { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } };
const labels = { 'engine.h2o.ai/workspace': 'w', 'engine.h2o.ai/id': 'e1' };

function dai(
  spec: EngineSpec<'DAIEngine'> = {},
  extra: { status?: EngineStatus<'DAIEngine'>; annotations?: Record<string, string> } = {},
): EngineResource<'DAIEngine'> {
  return {
    metadata: {
      name: 'w.e1',
      uid: 'u',
      generation: 3,
      labels,
      creationTimestamp: '2026-01-01T00:00:00Z',
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    spec: { daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6', ...spec },
    status: extra.status ?? {},
  };
}

/** The running engine's status planned again `laterMs` after NOW, from the status it reported then. */
const replan = (status: Record<string, unknown>, laterMs: number) =>
  planStatus({
    kind: daiEngineKind,
    engine: dai({}, { status }),
    pods: [readyPod],
    now: new Date(NOW.getTime() + laterMs),
    settings: { publicUrl: 'https://x.example' },
    storageResizing: false,
  }).status;

/** The status of an engine RUNNING since its creation. */
const running: EngineStatus<'DAIEngine'> = { state: 'STATE_RUNNING', runningSince: '2026-01-01T00:00:00Z' };
const pendingPod: V1Pod = { status: { phase: 'Pending' } };

const plan = (engine: EngineResource, pods: V1Pod[] = [readyPod]) =>
  planStatus({
    kind: daiEngineKind,
    engine,
    pods,
    now: NOW,
    settings: { publicUrl: 'https://x.example' },
    storageResizing: false,
  });

describe('planStatus()', () => {
  test('a running engine reports its URLs, generation and a Ready condition, and no durations', () => {
    const { status, requeueAfterMs, autoStop } = plan(dai());
    expect(status).toMatchObject({
      state: 'STATE_RUNNING',
      reconciling: false,
      apiUrl: 'https://x.example/workspaces/w/daiEngines/e1/',
      loginUrl: 'https://x.example/workspaces/w/daiEngines/e1/openid/login',
      currentRunningDuration: null,
      currentIdleDuration: null,
      observedGeneration: 3,
      storageResizing: false,
    });
    expect(status['conditions']).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Ready', status: 'True', reason: 'Running' })]),
    );
    expect(autoStop).toBeUndefined();
    // No limit, nothing to look at again: time passing changes nothing stored.
    expect(requeueAfterMs).toBeUndefined();
  });

  test('asks to stop a running engine past its idle limit, and requeues at a nearer deadline', () => {
    expect(plan(dai({ maxIdleDuration: '1800s' }, { status: running })).autoStop).toBe('maxIdleDuration');
    const activity = { 'engine.h2o.ai/last-activity-time': '2026-01-01T00:59:50Z' };
    const soon = plan(dai({ maxIdleDuration: '15s' }, { annotations: activity, status: running }));
    expect(soon.autoStop).toBeUndefined();
    expect(soon.requeueAfterMs).toBe(5000);
  });

  test('says since when an engine past its idle limit counts as idle, and its limit: what a probe is weighed against', () => {
    expect(plan(dai({ maxIdleDuration: '1800s' }, { status: running })).idle).toEqual({
      since: new Date('2026-01-01T00:00:00Z'),
      limitMs: 1_800_000,
    });
    const activity = { 'engine.h2o.ai/last-activity-time': '2026-01-01T00:20:00Z' };
    expect(plan(dai({ maxIdleDuration: '1800s' }, { annotations: activity, status: running })).idle).toEqual({
      since: new Date('2026-01-01T00:20:00Z'),
      limitMs: 1_800_000,
    });
    // Activity recorded before this run began (an earlier run's) does not move the idle start.
    const before = { 'engine.h2o.ai/last-activity-time': '2025-12-31T23:00:00Z' };
    expect(
      plan(dai({ maxIdleDuration: '1800s' }, { annotations: before, status: running })).idle?.since,
    ).toEqual(new Date('2026-01-01T00:00:00Z'));
    // Stopped for running too long, not for idleness: nothing to probe.
    expect(plan(dai({ maxRunningDuration: '60s' }, { status: running })).idle).toBeUndefined();
  });

  test('counts running time from when the run became RUNNING, and looks again at the deadline', () => {
    const resumed = { resumeTime: '2026-01-01T00:20:00Z', runningSince: '2026-01-01T00:30:00Z' };
    const { autoStop, requeueAfterMs } = plan(dai({ maxRunningDuration: '3000s' }, { status: resumed }));
    expect(autoStop).toBeUndefined();
    expect(requeueAfterMs).toBe(1_200_000);
  });

  test('an engine that took an hour to start is not stopped when it becomes RUNNING, and records the moment', () => {
    // Created an hour ago with a 15 s idle limit; its pods were pending until now.
    const starting = dai(
      { maxIdleDuration: '15s', maxRunningDuration: '60s' },
      { status: { state: 'STATE_STARTING' } },
    );
    expect(plan(starting, [pendingPod])).toMatchObject({ status: { runningSince: null } });
    expect(plan(starting, [pendingPod]).requeueAfterMs).toBeUndefined();
    const first = plan(starting);
    expect(first.autoStop).toBeUndefined();
    expect(first.status['runningSince']).toBe(NOW.toISOString());
    expect(first.requeueAfterMs).toBe(15_000);
    // Idle 15 s after it became RUNNING, with nothing recorded since: stopped then.
    const later = planStatus({
      kind: daiEngineKind,
      engine: dai({ maxIdleDuration: '15s' }, { status: first.status }),
      pods: [readyPod],
      now: new Date(NOW.getTime() + 15_000),
      settings: { publicUrl: 'https://x.example' },
      storageResizing: false,
    });
    expect(later.autoStop).toBe('maxIdleDuration');
  });

  test('a resumed engine’s new run counts afresh; the earlier run’s moment is cleared while it starts', () => {
    const stale: EngineStatus<'DAIEngine'> = {
      state: 'STATE_STARTING',
      resumeTime: '2026-01-01T00:59:00Z',
      runningSince: '2026-01-01T00:10:00Z',
    };
    const starting = plan(dai({ maxRunningDuration: '60s' }, { status: stale }), [pendingPod]);
    expect(starting.status['runningSince']).toBeNull();
    expect(starting.autoStop).toBeUndefined();
    const runs = plan(dai({ maxRunningDuration: '60s' }, { status: stale }));
    expect(runs.status['runningSince']).toBe(NOW.toISOString());
    expect(runs.requeueAfterMs).toBe(60_000);
  });

  test('never stops an engine that is not running yet', () => {
    expect(plan(dai({ maxIdleDuration: '1s' }), []).autoStop).toBeUndefined();
  });

  test('reports disk usage for 1.10.6 and later, and clears it for earlier versions', () => {
    const annotations = { 'engine.h2o.ai/disk-usage': '{"totalBytes":"100","freeBytes":40}' };
    expect(plan(dai({}, { annotations })).status).toMatchObject({
      totalDiskSizeBytes: '100',
      freeDiskSizeBytes: '40',
    });
    const old = plan(
      dai({ daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.5' }, { annotations }),
    );
    expect(old.status).toMatchObject({ totalDiskSizeBytes: null, freeDiskSizeBytes: null });
    const garbled = plan(dai({}, { annotations: { 'engine.h2o.ai/disk-usage': 'not json' } }));
    expect(garbled.status).toMatchObject({ totalDiskSizeBytes: null, freeDiskSizeBytes: null });
  });

  test('says why a stopped engine stopped', () => {
    const paused = plan(
      dai({ paused: true }, { annotations: { 'engine.h2o.ai/stop-reason': 'MaxIdleDurationExceeded' } }),
      [],
    );
    expect(paused.status).toMatchObject({ state: 'STATE_PAUSED' });
    expect(paused.status['conditions']).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Stopped', status: 'True', reason: 'MaxIdleDurationExceeded' }),
      ]),
    );
  });

  test('keeps a condition’s transition time while its status holds', () => {
    const first = plan(dai()).status;
    expect(replan(first, 60_000)['conditions']).toEqual(first['conditions']);
  });

  test('a notebook engine reports its failure reason, unspecified while healthy', () => {
    const notebook: EngineResource = { ...dai(), spec: {} };
    const healthy = planStatus({
      kind: notebookEngineKind,
      engine: notebook,
      pods: [readyPod],
      now: NOW,
      settings: { publicUrl: 'https://x.example' },
      storageResizing: true,
    }).status;
    expect(healthy).toMatchObject({ failureReason: 'FAILURE_REASON_UNSPECIFIED', storageResizing: true });
    expect(healthy).not.toHaveProperty('apiUrl');
  });
});

describe('what a reconcile writes', () => {
  test('an unchanged running engine has nothing to write an hour later', () => {
    const first = plan(dai()).status;
    expect(changedFields(first, replan(first, 3_600_000))).toEqual({});
  });

  test('durations an earlier release stored are cleared once', () => {
    const stored = { ...plan(dai()).status, currentIdleDuration: '60s', currentRunningDuration: '60s' };
    expect(changedFields(stored, plan(dai({}, { status: stored })).status)).toEqual({
      currentIdleDuration: null,
      currentRunningDuration: null,
    });
  });
});

describe('changedFields()', () => {
  test('keeps only what differs, treating null and absent alike', () => {
    expect(changedFields({ a: 1, b: { c: 2 } }, { a: 1, b: { c: 3 }, d: null, e: 'x' })).toEqual({
      b: { c: 3 },
      e: 'x',
    });
  });

  test('compares values whatever their key order, as the apiserver sorts them', () => {
    const planned = { conditions: [{ type: 'Ready', status: 'True', reason: 'Running' }] };
    const stored = { conditions: [{ reason: 'Running', status: 'True', type: 'Ready' }] };
    expect(changedFields(stored, planned)).toEqual({});
    expect(
      changedFields(stored, { conditions: [{ type: 'Ready', status: 'False', reason: 'Running' }] }),
    ).toEqual({
      conditions: [{ type: 'Ready', status: 'False', reason: 'Running' }],
    });
  });
});

describe('planStatus(): why an engine waits or failed, in its Ready and Failed conditions', () => {
  const condition = (status: Record<string, unknown>, type: string) =>
    (status['conditions'] as { type: string; status: string; reason: string; message: string }[]).find(
      (c) => c.type === type,
    );

  test('an engine whose pod no node has room for says so, in the scheduler’s words', () => {
    const message =
      '0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.';
    const unschedulable: V1Pod = {
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }],
      },
    };
    const { status } = plan(dai(), [unschedulable]);
    expect(status['state']).toBe('STATE_STARTING');
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False', reason: 'Unschedulable', message });
  });

  test('an engine whose pod runs and does not answer yet is waiting for readiness', () => {
    const running: V1Pod = { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] } };
    const { status } = plan(dai(), [running]);
    expect(status['state']).toBe('STATE_CONNECTING');
    expect(condition(status, 'Ready')?.reason).toBe('WaitingForReadiness');
  });

  test('a notebook killed at its memory limit reports the OOM reason, in the API and its conditions', () => {
    const oomKilled: V1Pod = {
      status: {
        phase: 'Running',
        containerStatuses: [
          {
            name: 'notebook',
            image: 'jupyter:1',
            imageID: '',
            ready: false,
            restartCount: 1,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { reason: 'OOMKilled', exitCode: 137 } },
          },
        ],
      },
    };
    const notebook: EngineResource = { ...dai(), spec: {} };
    const { status } = planStatus({
      kind: notebookEngineKind,
      engine: notebook,
      pods: [oomKilled],
      now: NOW,
      settings: { publicUrl: 'https://x.example' },
      storageResizing: false,
    });
    expect(status).toMatchObject({ state: 'STATE_FAILED', failureReason: 'FAILURE_REASON_OOM_KILLED' });
    expect(condition(status, 'Failed')).toMatchObject({ status: 'True', reason: 'OOMKilled' });
    expect(condition(status, 'Ready')?.message).toContain('ran out of memory');
  });
});
