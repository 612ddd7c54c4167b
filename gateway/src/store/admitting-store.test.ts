import { Admission, admissions } from './admission.ts';
import { AdmittedLocks } from './admitting-store.ts';
import { InMemoryStore } from './memory-store.ts';
import type { Locks } from './store-interface.ts';

/** An admission review of the profile object `w.p1`. */
const review = (dryRun: boolean): Admission =>
  new Admission({ dryRun, kind: 'DAIEngineProfile', objectName: 'w.p1' });

/** What the next holder of `key` is told, once it holds the lock. */
const toldNext = (locks: Locks, key: string): Promise<string | undefined> =>
  locks.run(key, (held) => Promise.resolve({ result: held.lastWrite }));

describe('locks of calls that may run inside an admission review', () => {
  let inner: Locks;
  let locks: AdmittedLocks;

  beforeEach(async () => {
    inner = new InMemoryStore().locks;
    locks = new AdmittedLocks(inner);
    // An earlier holder wrote resourceVersion 10.
    await inner.run('k', () => Promise.resolve({ result: undefined, wrote: '10' }));
  });

  test('outside a review, are the store’s locks', async () => {
    expect(await locks.run('k', (held) => Promise.resolve({ result: held.lastWrite, wrote: '11' }))).toBe(
      '10',
    );
    expect(await toldNext(inner, 'k')).toBe('11');
  });

  test('a reviewed change keeps the lock until it has landed, and tells the next holder where', async () => {
    const admission = review(false);
    const result = await admissions.run(admission, () =>
      locks.run('k', (held) =>
        Promise.resolve({ result: `told ${String(held.lastWrite)}`, wrote: 'unused' }),
      ),
    );
    // The call is answered while the lock is still held: the next holder waits for the landing.
    expect(result).toBe('told 10');
    let next: string | undefined = 'waiting';
    const waiting = toldNext(inner, 'k').then((told) => (next = told));
    await new Promise((resolve) => setImmediate(resolve));
    expect(next).toBe('waiting');
    await admission.landed('12');
    await waiting;
    expect(next).toBe('12');
  });

  test('a reviewed change that never lands gives the lock back, telling what the previous holder wrote', async () => {
    const admission = review(false);
    await admissions.run(admission, () => locks.run('k', () => Promise.resolve({ result: undefined })));
    await admission.landed(undefined);
    expect(await toldNext(inner, 'k')).toBe('10');
  });

  test('a reviewed change that fails gives the lock back before its failure is answered', async () => {
    const admission = review(false);
    const failing = admissions.run(admission, () =>
      locks.run('k', () => Promise.reject(new Error('refused'))),
    );
    await expect(failing).rejects.toThrow('refused');
    expect(await toldNext(inner, 'k')).toBe('10');
  });

  test('a dry run takes no lock: it runs while another caller holds it, told nothing', async () => {
    const release = Promise.withResolvers<undefined>();
    const holding = inner.run('k', async () => {
      await release.promise;
      return { result: undefined };
    });
    const told = await admissions.run(review(true), () =>
      locks.run('k', (held) => Promise.resolve({ result: held.lastWrite ?? 'nothing' })),
    );
    expect(told).toBe('nothing');
    release.resolve(undefined);
    await holding;
  });
});
