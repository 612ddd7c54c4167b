import { hasCaps, quotaProblem } from './settings.ts';

const numeric = { min: '1', default: '1' };

describe('hasCaps()', () => {
  test('a profile without a running-engine count or cumulative maximum has no caps', () => {
    expect(hasCaps({ cpuConstraint: numeric, memoryBytesConstraint: numeric })).toBe(false);
  });

  test('a running-engine count or any cumulative maximum is a cap', () => {
    expect(hasCaps({ maxRunningEngines: 0 })).toBe(true);
    expect(hasCaps({ gpuConstraint: { ...numeric, cumulativeMax: '4' } })).toBe(true);
  });
});

describe('quotaProblem()', () => {
  test('counts the user’s running engines against maxRunningEngines', () => {
    expect(quotaProblem([{ cpu: 1 }, { cpu: 1 }], { cpu: 1 }, { maxRunningEngines: 3 })).toBeUndefined();
    expect(
      quotaProblem([{ cpu: 1 }, { cpu: 1 }, { cpu: 1 }], { cpu: 1 }, { maxRunningEngines: 3 }),
    ).toContain('3 running engines');
  });

  test('adds the new engine to the running total under a cumulative maximum, inclusive', () => {
    const profile = { cpuConstraint: { ...numeric, cumulativeMax: '8' } };
    expect(quotaProblem([{ cpu: 4 }], { cpu: 4 }, profile)).toBeUndefined();
    expect(quotaProblem([{ cpu: 4 }], { cpu: 5 }, profile)).toContain('over the profile');
  });
});
