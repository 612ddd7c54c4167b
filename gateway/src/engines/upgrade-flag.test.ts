import { afterEach, describe, expect, jest, test } from '@jest/globals';
import { deepFreeze } from '../../../shared/shared-parts.ts';
import { withLiveDurations } from './live-durations.ts';
import { withUpgradeAvailable } from './upgrade-flag.ts';

describe('withUpgradeAvailable()', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  const engine = (upgradeAvailable: boolean) =>
    deepFreeze(
      withLiveDurations(
        { name: 'workspaces/w/daiEngines/e1', cpu: 2, upgradeAvailable },
        { startedAt: new Date('2026-11-28T10:00:00Z') },
      ),
    );

  test('answers the engine itself when its flag already says so', () => {
    const cached = engine(false);
    expect(withUpgradeAvailable(cached, false)).toBe(cached);
  });

  test('answers a copy with the flag, the same copy on every read, frozen like the engine', () => {
    const cached = engine(false);
    const shown = withUpgradeAvailable(cached, true);
    expect(shown).toMatchObject({ name: 'workspaces/w/daiEngines/e1', cpu: 2, upgradeAvailable: true });
    expect(cached.upgradeAvailable).toBe(false);
    expect(withUpgradeAvailable(cached, true)).toBe(shown);
    expect(Object.isFrozen(shown)).toBe(true);
    expect(withUpgradeAvailable(cached, false)).toBe(cached);
  });

  test("keeps the engine's durations live in the copy", () => {
    jest.useFakeTimers({ now: new Date('2026-11-28T10:01:00Z') });
    const shown = withUpgradeAvailable(engine(false), true) as { currentRunningDuration?: unknown };
    expect(shown.currentRunningDuration).toEqual({ seconds: '60', nanos: 0 });
    jest.setSystemTime(new Date('2026-11-28T10:02:30Z'));
    expect(shown.currentRunningDuration).toEqual({ seconds: '150', nanos: 0 });
  });

  test('copies an engine that is not frozen each time, leaving it unchanged', () => {
    const engine = { name: 'workspaces/w/daiEngines/e2', upgradeAvailable: true };
    expect(withUpgradeAvailable(engine, false)).toEqual({ ...engine, upgradeAvailable: false });
    expect(engine.upgradeAvailable).toBe(true);
  });
});
