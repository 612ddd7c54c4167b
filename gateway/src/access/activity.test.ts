import { jest } from '@jest/globals';
import { pino } from 'pino';
import { LAST_ACTIVITY_ANNOTATION, RESOURCE_KINDS } from '../../../shared/resources.ts';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { ActivityRecorder } from './activity.ts';

const KIND = RESOURCE_KINDS.NotebookEngine;

function recorder(annotate = jest.fn(() => Promise.resolve())): {
  activity: ActivityRecorder;
  writes: () => [string, string][];
  clock: { now: Date };
} {
  const clock = { now: new Date('2026-01-01T00:00:00Z') };
  const activity = new ActivityRecorder({
    annotate,
    log: pino({ level: 'silent' }),
    now: () => clock.now,
    intervalMs: 60_000,
  });
  const writes = (): [string, string][] =>
    annotate.mock.calls.map((call: unknown[]) => [
      call[1] as string,
      (call[2] as Record<string, string>)[LAST_ACTIVITY_ANNOTATION] ?? '',
    ]);
  return { activity, writes, clock };
}

describe('ActivityRecorder', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  test('touch() writes the first use at once, then at most once a minute with the latest use', async () => {
    const { activity, writes, clock } = recorder();
    activity.touch(KIND, 'workspaces/w/notebookEngines/n1');
    for (let second = 1; second <= 50; second += 1) {
      clock.now = new Date(Date.parse('2026-01-01T00:00:00Z') + second * 1000);
      activity.touch(KIND, 'workspaces/w/notebookEngines/n1');
    }
    expect(writes()).toEqual([['workspaces/w/notebookEngines/n1', '2026-01-01T00:00:00.000Z']]);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(writes()).toEqual([
      ['workspaces/w/notebookEngines/n1', '2026-01-01T00:00:00.000Z'],
      ['workspaces/w/notebookEngines/n1', '2026-01-01T00:00:50.000Z'],
    ]);
    // Idle for a minute: nothing more to write, and the engine is forgotten.
    await jest.advanceTimersByTimeAsync(120_000);
    expect(writes()).toHaveLength(2);
    expect(activity.pending).toBe(0);
  });

  test('touch() keeps engines apart', () => {
    const { activity, writes } = recorder();
    activity.touch(KIND, 'workspaces/w/notebookEngines/a');
    activity.touch(KIND, 'workspaces/w/notebookEngines/b');
    activity.touch(KIND, 'workspaces/w/notebookEngines/a');
    expect(writes().map(([name]) => name)).toEqual([
      'workspaces/w/notebookEngines/a',
      'workspaces/w/notebookEngines/b',
    ]);
  });

  test('stop() writes what is pending', async () => {
    const { activity, writes } = recorder();
    activity.touch(KIND, 'workspaces/w/notebookEngines/a');
    activity.touch(KIND, 'workspaces/w/notebookEngines/a');
    await activity.stop();
    expect(writes()).toHaveLength(2);
  });

  test('a deleted engine is no error', async () => {
    const annotate = jest.fn(() => Promise.reject(new ApiError(Code.NOT_FOUND, 'gone')));
    const { activity } = recorder(annotate);
    activity.touch(KIND, 'workspaces/w/notebookEngines/gone');
    await activity.stop();
    expect(annotate).toHaveBeenCalledTimes(1);
  });
});
