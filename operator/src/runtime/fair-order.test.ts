import { FairOrder } from './fair-order.ts';

describe('FairOrder', () => {
  test('shift() serves groups in turn, and each group first come, first served', () => {
    const order = new FairOrder();
    for (const key of ['a1', 'a2', 'a3']) order.push('a', key);
    order.push('b', 'b1');
    order.push('c', 'c1');
    order.push('b', 'b2');
    const served = Array.from({ length: 6 }, () => order.shift());
    expect(served).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    expect(order.shift()).toBeUndefined();
    expect(order.size).toBe(0);
  });

  test('shift() serves a group that arrives behind a backlog of thousands within one turn per group', () => {
    const order = new FairOrder();
    for (let i = 0; i < 5_000; i++) order.push('busy', `busy.e${i}`);
    order.shift();
    order.push('quiet', 'quiet.e0');
    // The busy group was in line first: one of its keys, then the quiet one, whatever the backlog.
    expect([order.shift(), order.shift()]).toEqual(['busy.e1', 'quiet.e0']);
    expect(order.size).toBe(4_998);
  });

  test('shift() keeps arrival order over a long run of one group', () => {
    const order = new FairOrder();
    const keys = Array.from({ length: 1_000 }, (_, i) => `k${i}`);
    for (const key of keys) order.push('', key);
    expect(Array.from({ length: 1_000 }, () => order.shift())).toEqual(keys);
  });
});
