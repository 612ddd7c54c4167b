import { durationMs, durations, durationText, engineClock } from './durations.ts';

const at = (s: number): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

describe('durations()', () => {
  test('counts running and idle time from the start when there was no activity', () => {
    expect(durations({ now: at(90), startedAt: at(30) })).toEqual({ runningMs: 60_000, idleMs: 60_000 });
  });

  test('counts idle time from the latest activity', () => {
    const report = durations({ now: at(90), startedAt: at(0), lastActivityAt: at(80), maxIdleMs: 60_000 });
    expect(report).toEqual({ runningMs: 90_000, idleMs: 10_000, nextDeadlineMs: 50_000 });
  });

  test('ignores activity from before the latest start (a resume resets idleness)', () => {
    expect(durations({ now: at(50), startedAt: at(40), lastActivityAt: at(10) }).idleMs).toBe(10_000);
  });

  test('reports the idle limit exceeded exactly at the limit, inclusive', () => {
    const report = durations({ now: at(60), startedAt: at(0), maxIdleMs: 60_000, maxRunningMs: 120_000 });
    expect(report.exceeded).toBe('maxIdleDuration');
    expect(report.nextDeadlineMs).toBe(60_000);
  });

  test('reports the running limit when activity keeps the engine from idling', () => {
    const report = durations({
      now: at(121),
      startedAt: at(0),
      lastActivityAt: at(120),
      maxIdleMs: 60_000,
      maxRunningMs: 120_000,
    });
    expect(report.exceeded).toBe('maxRunningDuration');
    expect(report.nextDeadlineMs).toBe(59_000);
  });

  test('treats zero and missing limits as no limit', () => {
    expect(durations({ now: at(59), startedAt: at(0), maxIdleMs: 0 })).toEqual({
      runningMs: 59_000,
      idleMs: 59_000,
    });
  });

  test('gives the nearest deadline of the two limits', () => {
    const report = durations({ now: at(10), startedAt: at(0), maxIdleMs: 30_000, maxRunningMs: 20_000 });
    expect(report.nextDeadlineMs).toBe(10_000);
  });

  test('rounds reported durations down to whole seconds and never below zero', () => {
    const start = new Date(at(0).getTime() + 1500);
    expect(durations({ now: at(0), startedAt: start })).toEqual({ runningMs: 0, idleMs: 0 });
    expect(durations({ now: new Date(at(3).getTime() + 999), startedAt: at(0) }).runningMs).toBe(3000);
  });
});

describe('durationMs() and durationText()', () => {
  test.each([
    ['3600s', 3_600_000],
    ['1.5s', 1500],
    ['0s', 0],
    ['0.000000001s', 0],
  ])('reads %s', (text, ms) => {
    expect(durationMs(text)).toBe(ms);
  });

  test.each([undefined, '', '10', '-1s', '1m', 5])('refuses %p', (value) => {
    expect(durationMs(value)).toBeUndefined();
  });

  test('writes whole seconds', () => {
    expect(durationText(61_999)).toBe('61s');
  });
});

describe('engineClock()', () => {
  const base = { created: at(0), resumed: undefined, runningSince: at(10), lastActivity: undefined };

  test('an engine counts from when its current run became RUNNING, not from its creation', () => {
    expect(engineClock({ ...base, state: 'STATE_RUNNING' })).toEqual({ startedAt: at(10) });
    // A pod restarted within the run: the run's clock goes on.
    expect(engineClock({ ...base, state: 'STATE_CONNECTING' })).toEqual({ startedAt: at(10) });
  });

  test('a run that has not been RUNNING yet has no clock, whatever an earlier run recorded', () => {
    expect(engineClock({ ...base, state: 'STATE_STARTING', runningSince: undefined })).toBeUndefined();
    expect(
      engineClock({ ...base, state: 'STATE_STARTING', resumed: '2026-01-01T00:00:30Z' }),
    ).toBeUndefined();
    expect(
      engineClock({ ...base, state: 'STATE_RUNNING', resumed: at(30), runningSince: '2026-01-01T00:00:45Z' }),
    ).toEqual({ startedAt: at(45) });
  });

  test('activity is read from its RFC 3339 text; unreadable activity is ignored', () => {
    expect(engineClock({ ...base, state: 'STATE_CONNECTING', lastActivity: '2026-01-01T00:00:20Z' })).toEqual(
      { startedAt: at(10), lastActivityAt: at(20) },
    );
    expect(engineClock({ ...base, state: 'STATE_RUNNING', lastActivity: 'soon' })).toEqual({
      startedAt: at(10),
    });
  });

  test('a stopped, failed or deleting engine has no clock', () => {
    for (const state of ['STATE_PAUSED', 'STATE_FAILED', 'STATE_DELETING', undefined])
      expect(engineClock({ ...base, state })).toBeUndefined();
  });
});
