import { durations } from '../../../shared/durations.ts';
import { runningSince, type RunningSinceInput } from './running-since.ts';

const at = (s: number): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const base: RunningSinceInput = {
  state: 'STATE_STARTING',
  reportedState: 'STATE_STARTING',
  recorded: undefined,
  created: '2026-01-01T00:00:00Z',
  resumed: undefined,
  now: at(100),
};

describe('runningSince()', () => {
  test('is unset while the run starts, however long that takes', () => {
    expect(runningSince(base)).toBeUndefined();
    expect(runningSince({ ...base, state: 'STATE_CONNECTING', now: at(3600) })).toBeUndefined();
  });

  test('is the moment the run is first seen RUNNING, and stays so', () => {
    expect(runningSince({ ...base, state: 'STATE_RUNNING' })).toEqual(at(100));
    const recorded = '2026-01-01T00:01:40Z';
    expect(runningSince({ ...base, state: 'STATE_RUNNING', recorded, now: at(500) })).toEqual(at(100));
  });

  test('survives a pod restart within the run, so a crash loop does not reset the running limit', () => {
    const recorded = '2026-01-01T00:01:40Z';
    expect(runningSince({ ...base, state: 'STATE_CONNECTING', recorded, now: at(500) })).toEqual(at(100));
  });

  test('a resume starts a new run: the earlier run’s time no longer counts', () => {
    const resumed = { ...base, recorded: '2026-01-01T00:01:40Z', resumed: '2026-01-01T00:10:00Z' };
    expect(runningSince({ ...resumed, now: at(620) })).toBeUndefined();
    expect(runningSince({ ...resumed, state: 'STATE_RUNNING', now: at(700) })).toEqual(at(700));
  });

  test('is never before the run’s start, even with a clock behind the one that wrote the resume', () => {
    const input = { ...base, state: 'STATE_RUNNING', resumed: '2026-01-01T00:10:00Z', now: at(598) };
    expect(runningSince(input)).toEqual(at(600));
  });

  test('an engine already reported RUNNING with nothing recorded keeps its clock from the run’s start', () => {
    const legacy = { ...base, state: 'STATE_RUNNING', reportedState: 'STATE_RUNNING' };
    expect(runningSince({ ...legacy, resumed: '2026-01-01T00:00:30Z' })).toEqual(at(30));
    expect(runningSince({ ...legacy, recorded: null })).toEqual(at(0));
  });
});

describe('idle and running limits counted from running-since', () => {
  // Created at 0 s, pods pending until 90 s, RUNNING from 100 s, idle limit 20 s, no activity.
  const idle = (now: number, lastActivityAt?: Date) =>
    durations({
      now: at(now),
      startedAt: runningSince({ ...base, state: 'STATE_RUNNING', now: at(100) }) ?? at(0),
      ...(lastActivityAt !== undefined ? { lastActivityAt } : {}),
      maxIdleMs: 20_000,
      maxRunningMs: 60_000,
    });

  test('an engine slow to start is not stopped on reaching RUNNING', () => {
    expect(idle(100)).toEqual({ runningMs: 0, idleMs: 0, nextDeadlineMs: 20_000 });
  });

  test('idle is now − max(running-since, last activity)', () => {
    // Activity before the run became RUNNING (e.g. during the start) counts as the start.
    expect(idle(110, at(50)).idleMs).toBe(10_000);
    expect(idle(130, at(125))).toMatchObject({ idleMs: 5000, nextDeadlineMs: 15_000 });
    expect(idle(120).exceeded).toBe('maxIdleDuration');
  });

  test('the running limit counts from running-since', () => {
    expect(idle(159, at(158)).exceeded).toBeUndefined();
    expect(idle(160, at(159)).exceeded).toBe('maxRunningDuration');
  });
});
