import { take, type BucketState } from './token-bucket.ts';

describe('take()', () => {
  const full: BucketState = { tokens: 3, at: 0 };

  test('a full bucket serves a burst without waiting, then makes each call wait its turn', () => {
    let state = full;
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const next = take(state, 0, 10, 3);
      state = next.state;
      waits.push(next.waitMs);
    }
    // 3 at once; then one every 100 ms at 10 per second, each behind the one before.
    expect(waits).toEqual([0, 0, 0, 100, 200]);
  });

  test('refills at qps up to the burst, never beyond', () => {
    const empty: BucketState = { tokens: 0, at: 0 };
    expect(take(empty, 500, 10, 3)).toEqual({ state: { tokens: 2, at: 500 }, waitMs: 0 });
    expect(take(empty, 60_000, 10, 3).state.tokens).toBe(2);
  });
});
