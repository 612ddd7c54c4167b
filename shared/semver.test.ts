import fc from 'fast-check';
import { compareVersions } from './semver.ts';

describe('compareVersions()', () => {
  test('orders releases numerically, any number of segments, pre-releases first', () => {
    const shuffled = [
      '1.10.6',
      '1.9.0',
      '1.10.6-alpha',
      '1.10.6.1',
      '1.10.10',
      '1.10.6-alpha.2',
      '1.10.6-beta',
      '2.0',
    ];
    expect([...shuffled].sort(compareVersions)).toEqual([
      '1.9.0',
      '1.10.6-alpha',
      '1.10.6-alpha.2',
      '1.10.6-beta',
      '1.10.6',
      '1.10.6.1',
      '1.10.10',
      '2.0',
    ]);
  });

  test('treats missing segments as zero, and numeric pre-release identifiers below words', () => {
    expect(compareVersions('1.10', '1.10.0')).toBe(0);
    expect(compareVersions('1.0.0-1', '1.0.0-rc')).toBeLessThan(0);
    expect(compareVersions('1.0.0-rc.11', '1.0.0-rc.2')).toBeGreaterThan(0);
  });

  test('ignores build metadata, and orders words after numbers instead of failing', () => {
    expect(compareVersions('1.10.6+build.7', '1.10.6')).toBe(0);
    expect(compareVersions('1.a', '1.10')).toBeGreaterThan(0);
    expect(compareVersions('jupyter-python', '0.1.0')).toBeGreaterThan(0);
  });

  test('is a total order over any text: reflexive, antisymmetric, transitive', () => {
    const version = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.stringMatching(/^[0-9a-z]{1,3}(\.[0-9a-z]{0,3}){0,3}(-[0-9a-z.]{0,6})?(\+[a-z0-9]{0,3})?$/),
    );
    const sign = (n: number): number => Math.sign(n) + 0;
    fc.assert(
      fc.property(version, version, version, (a, b, c) => {
        expect(compareVersions(a, a)).toBe(0);
        expect(sign(compareVersions(a, b))).toBe(-sign(compareVersions(b, a)) + 0);
        if (compareVersions(a, b) <= 0 && compareVersions(b, c) <= 0) {
          expect(compareVersions(a, c)).toBeLessThanOrEqual(0);
        }
      }),
      { numRuns: 3_000 },
    );
  });
});
