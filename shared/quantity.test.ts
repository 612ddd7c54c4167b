import { parseStorageQuantity } from './quantity.ts';

describe('parseStorageQuantity()', () => {
  test.each([
    ['10737418240', 10737418240n],
    ['10Gi', 10737418240n],
    ['1Ki', 1024n],
    ['1.5Gi', 1610612736n],
    ['500M', 500000000n],
    ['2k', 2000n],
    ['1e3', 1000n],
    ['0.1', 1n],
    ['1Ei', 1152921504606846976n],
  ])('reads %s as %s bytes', (text, bytes) => {
    expect(parseStorageQuantity(text)).toBe(bytes);
  });

  test.each(['', 'Gi', '10GB', '-1Gi', '1.Gi', 'ten'])('rejects %p', (text) => {
    expect(() => parseStorageQuantity(text)).toThrow(TypeError);
  });
});
