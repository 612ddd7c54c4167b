import {
  cpuCapacityCores,
  metricsOf,
  missingParts,
  parseCpuCores,
  parseDf,
  parseMemoryBytes,
  sampleOf,
} from './metrics.ts';

const now = new Date('2026-01-02T03:04:05Z');

describe('quantities as metrics-server writes them', () => {
  test.each([
    ['249966643n', 0.249966643],
    ['250m', 0.25],
    ['1500u', 0.0015],
    ['2', 2],
  ])('CPU %s is %d cores', (text, cores) => {
    expect(parseCpuCores(text)).toBeCloseTo(cores, 9);
  });

  test.each([
    ['102400Ki', 104857600n],
    ['100Mi', 104857600n],
    ['104857600', 104857600n],
    ['1G', 1000000000n],
  ])('memory %s is %s bytes', (text, bytes) => {
    expect(parseMemoryBytes(text)).toBe(bytes);
  });

  test('garbage is undefined', () => {
    expect(parseCpuCores('a lot')).toBeUndefined();
    expect(parseMemoryBytes('1.5Gi')).toBeUndefined();
  });
});

describe('sampleOf()', () => {
  test("takes the named container's usage and the sample's time", () => {
    const sample = sampleOf(
      {
        timestamp: '2026-01-02T03:04:00Z',
        containers: [
          { name: 'other', usage: { cpu: '1', memory: '1Gi' } },
          { name: 'sandbox', usage: { cpu: '250m', memory: '100Mi' } },
        ],
      },
      'sandbox',
    );
    expect(sample).toEqual({
      usage: { cores: 0.25, memoryBytes: 104857600n },
      timestamp: new Date('2026-01-02T03:04:00Z'),
    });
  });

  test('no such container, or no time, is no sample', () => {
    expect(sampleOf({ timestamp: '2026-01-02T03:04:00Z', containers: [] }, 'sandbox')).toBeUndefined();
    expect(
      sampleOf({ containers: [{ name: 'sandbox', usage: { cpu: '1', memory: '1' } }] }, 'sandbox'),
    ).toBeUndefined();
  });
});

describe('parseDf()', () => {
  test('reads size and free space in KiB blocks from POSIX output', () => {
    const out =
      'Filesystem     1024-blocks    Used Available Capacity Mounted on\noverlay 1000 400 600 40% /\n';
    expect(parseDf(out)).toEqual({ totalBytes: 1024000n, availableBytes: 614400n });
  });

  test('anything else is undefined', () => {
    expect(parseDf('df: /nope: No such file or directory\n')).toBeUndefined();
    expect(parseDf('')).toBeUndefined();
  });
});

describe('cpuCapacityCores()', () => {
  test("is the template's limit, else the node's allocatable CPU, else unknown", () => {
    expect(cpuCapacityCores(500, 8)).toBe(0.5);
    expect(cpuCapacityCores(0, 8)).toBe(8);
    expect(cpuCapacityCores(0, undefined)).toBeUndefined();
  });
});

describe('metricsOf() and missingParts()', () => {
  const sample = {
    usage: { cores: 0.25, memoryBytes: 104857600n },
    timestamp: new Date('2026-01-02T03:04:00Z'),
  };
  const disk = { totalBytes: 1024000n, availableBytes: 614400n };

  test('a full collection: the ratio against the capacity, the limit, the sample time', () => {
    const collected = { sample, disk, capacityCores: 0.5, memoryLimitBytes: '1073741824', now };
    expect(metricsOf(collected)).toEqual({
      memory: { currentBytes: '104857600', limitBytes: '1073741824' },
      disk: { totalBytes: '1024000', availableBytes: '614400' },
      cpu: { usageRatio: 0.5 },
      collectTime: sample.timestamp,
    });
    expect(missingParts(collected)).toEqual([]);
  });

  test('what is missing reads as zero, and is named for strict mode', () => {
    const collected = { sample: undefined, disk: undefined, capacityCores: 0.5, memoryLimitBytes: '0', now };
    expect(metricsOf(collected)).toEqual({
      memory: { currentBytes: '0' },
      disk: { totalBytes: '0', availableBytes: '0' },
      cpu: { usageRatio: 0 },
      collectTime: now,
    });
    expect(missingParts(collected)).toHaveLength(2);
  });

  test('the ratio never exceeds 1; an unknown capacity is missing', () => {
    const busy = { ...sample, usage: { ...sample.usage, cores: 3 } };
    expect(
      metricsOf({ sample: busy, disk, capacityCores: 2, memoryLimitBytes: '', now }).cpu?.usageRatio,
    ).toBe(1);
    expect(missingParts({ sample, disk, capacityCores: undefined, memoryLimitBytes: '', now })).toEqual([
      expect.stringContaining('CPU capacity'),
    ]);
  });
});
