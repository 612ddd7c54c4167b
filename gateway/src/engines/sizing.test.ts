import { ApiError } from '../errors/api-error.ts';
import { compressedDatasetMemory, GIB, rawDatasetMemory, sizeFor } from './sizing.ts';

const limits = (memMin: bigint, memMax: bigint | undefined, nMin: bigint, nMax: bigint | undefined) => ({
  memoryBytesPerNodeMin: memMin.toString(),
  memoryBytesPerNodeMax: memMax?.toString(),
  nodeCountMin: nMin.toString(),
  nodeCountMax: nMax?.toString(),
});

describe('H2O sizing', () => {
  test('tiny data gets the smallest allowed cluster', () => {
    expect(sizeFor(rawDatasetMemory(1000n), limits(2n * GIB, 64n * GIB, 1n, 10n))).toEqual({
      nodeCount: '1',
      memoryBytes: String(2n * GIB),
    });
  });

  test('memory is four times the raw data, rounded up to whole GiB, on one node while it fits', () => {
    // 10 GiB of CSV needs 40 GiB.
    expect(sizeFor(rawDatasetMemory(10n * GIB), limits(GIB, 64n * GIB, 1n, 10n))).toEqual({
      nodeCount: '1',
      memoryBytes: String(40n * GIB),
    });
    expect(sizeFor(rawDatasetMemory(10n * GIB + 1n), limits(GIB, 64n * GIB, 1n, 10n)).memoryBytes).toBe(
      String(41n * GIB),
    );
  });

  test('spreads over as few nodes as the per-node maximum allows', () => {
    // 100 GiB of data needs 400 GiB: 7 nodes of at most 64 GiB, 58 GiB each.
    expect(sizeFor(rawDatasetMemory(100n * GIB), limits(GIB, 64n * GIB, 1n, 10n))).toEqual({
      nodeCount: '7',
      memoryBytes: String(58n * GIB),
    });
  });

  test('data beyond the limits gets the largest allowed cluster', () => {
    expect(sizeFor(rawDatasetMemory(10_000n * GIB), limits(GIB, 64n * GIB, 1n, 10n))).toEqual({
      nodeCount: '10',
      memoryBytes: String(64n * GIB),
    });
  });

  test('without maxima, one node (or the minimum count) carries everything', () => {
    expect(sizeFor(rawDatasetMemory(100n * GIB), limits(GIB, undefined, 2n, undefined))).toEqual({
      nodeCount: '2',
      memoryBytes: String(200n * GIB),
    });
  });

  test('a compressed dataset needs about 16 bytes per value', () => {
    expect(compressedDatasetMemory(1_000_000n, 100n)).toBe(1_600_000_000n);
    expect(sizeFor(compressedDatasetMemory(1_000_000n, 100n), limits(GIB, 8n * GIB, 1n, 4n))).toEqual({
      nodeCount: '1',
      memoryBytes: String(2n * GIB),
    });
  });

  test('refuses missing or inconsistent limits, naming the field', () => {
    expect(() => sizeFor(1n, undefined)).toThrow('limits');
    expect(() => sizeFor(1n, limits(2n * GIB, GIB, 1n, 2n))).toThrow('limits.memory_bytes_per_node_max');
    expect(() => sizeFor(1n, limits(GIB, undefined, 0n, undefined))).toThrow(ApiError);
  });
});
