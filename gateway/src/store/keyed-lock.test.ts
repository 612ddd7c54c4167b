import { KeyedLock } from './keyed-lock.ts';

/** A promise with its resolver, to control when a task finishes. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe('KeyedLock', () => {
  test('runs tasks of one key one after another, even when one fails', async () => {
    const lock = new KeyedLock();
    const events: string[] = [];
    const first = gate();
    const a = lock.run('k', async () => {
      events.push('a start');
      await first.promise;
      events.push('a end');
      throw new Error('a failed');
    });
    const b = lock.run('k', () => {
      events.push('b');
      return Promise.resolve('b done');
    });
    await Promise.resolve();
    expect(events).toEqual(['a start']);
    first.open();
    await expect(a).rejects.toThrow('a failed');
    await expect(b).resolves.toBe('b done');
    expect(events).toEqual(['a start', 'a end', 'b']);
  });

  test('runs tasks of different keys concurrently', async () => {
    const lock = new KeyedLock();
    const blocked = gate();
    const slow = lock.run('one', () => blocked.promise);
    await expect(lock.run('two', () => Promise.resolve(2))).resolves.toBe(2);
    blocked.open();
    await slow;
  });
});
