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
});
