import { WorkQueue } from './work-queue.ts';

describe('WorkQueue', () => {
  test('queues a key once however often it is added, in order', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.add('b');
    queue.add('a');
    expect(queue.depth).toBe(2);
    expect(await queue.get()).toBe('a');
    expect(await queue.get()).toBe('b');
  });

  test('never hands an active key to a second worker, and reruns it when added meanwhile', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    const key = await queue.get();
    queue.add('a');
    expect(queue.depth).toBe(0);
    queue.done(key ?? '');
    expect(await queue.get()).toBe('a');
  });

  test('wakes a waiting worker, and releases it on shutdown', async () => {
    const queue = new WorkQueue();
    const waiting = queue.get();
    queue.add('x');
    await expect(waiting).resolves.toBe('x');
    const idle = queue.get();
    queue.shutDown();
    await expect(idle).resolves.toBeUndefined();
  });

  test('retries with growing delays, and keeps the earliest scheduled time', async () => {
    const queue = new WorkQueue({ baseDelayMs: 5 });
    const start = Date.now();
    queue.retry('k');
    expect(await queue.get()).toBe('k');
    queue.done('k');
    queue.retry('k');
    queue.addAfter('k', 60_000);
    expect(await queue.get()).toBe('k');
    // 5 ms then 10 ms; Node's timers may fire a millisecond early by Date.now().
    expect(Date.now() - start).toBeGreaterThanOrEqual(13);
    queue.shutDown();
  });

  test('serves a workspace whose key arrives behind thousands of another, after one key per workspace', async () => {
    const queue = new WorkQueue({ groupOf: (key) => key.slice(0, key.indexOf('.')) });
    for (let i = 0; i < 2_000; i++) queue.add(`busy.e${i}`);
    const first = await queue.get();
    queue.add('quiet.e0');
    // Added again while waiting: still one entry, served in its first place.
    queue.add('quiet.e0');
    queue.add('busy.e5');
    const served = [await queue.get(), await queue.get()];
    expect(served).toEqual(['busy.e1', 'quiet.e0']);
    expect(queue.depth).toBe(1_998);
    expect(queue.working).toBe(3);
    // A key in flight is not handed out again; done, it comes back in its own workspace's line.
    queue.add(first ?? '');
    queue.done(first ?? '');
    queue.add('other.e0');
    expect([await queue.get(), await queue.get()]).toEqual(['busy.e2', 'other.e0']);
    queue.shutDown();
  });
});
