import { isoTime, MalformedAnswer, recentActivity } from './activity-probe.ts';

const at = (s: number): Date => new Date(Date.UTC(2026, 10, 27, 10, 0, s));
const window = { since: at(0), limitMs: 60_000, now: at(60) };

describe('recentActivity()', () => {
  test('activity after the idle start and within the limit is the time to record', () => {
    expect(recentActivity(at(30), window)).toEqual(at(30));
    expect(recentActivity(at(60), window)).toEqual(at(60));
  });

  test('activity at or before the idle start is what was known already: the engine is idle', () => {
    expect(recentActivity(at(0), window)).toBeUndefined();
    expect(recentActivity(at(-300), window)).toBeUndefined();
    expect(recentActivity(undefined, window)).toBeUndefined();
  });

  test('activity a whole limit ago or more does not keep the engine (a reconcile that came late)', () => {
    const late = { ...window, now: at(200) };
    expect(recentActivity(at(30), late)).toBeUndefined();
    expect(recentActivity(at(140), late)).toBeUndefined();
    expect(recentActivity(at(141), late)).toEqual(at(141));
  });

  test('a time ahead of the operator’s clock counts as now', () => {
    expect(recentActivity(at(90), window)).toEqual(at(60));
  });
});

describe('isoTime()', () => {
  test('reads Jupyter’s times with microseconds and a zone', () => {
    expect(isoTime('2026-11-27T22:10:05.703112Z', 't')).toEqual(new Date('2026-11-27T22:10:05.703Z'));
    expect(isoTime('2026-11-27T23:10:05+01:00', 't')).toEqual(new Date('2026-11-27T22:10:05Z'));
  });

  test('refuses a time without a zone, and what is no time', () => {
    for (const value of ['2026-11-27T22:10:05.703112', 'yesterday', '', 1795817424823, null])
      expect(() => isoTime(value, 'the time')).toThrow(MalformedAnswer);
  });
});
