import { KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { pino } from 'pino';
import { oneAtATime, WatchedCollection } from './watched-collection.ts';

/** A copy listed once at resourceVersion 10 (holding `a`); its watch, to nowhere, fails. */
async function listedAt10(changes: string[]): Promise<WatchedCollection<string>> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const item: KubernetesObject = { metadata: { name: 'a', resourceVersion: '7' } };
  const collection = new WatchedCollection<string>({
    kubeConfig,
    path: '/apis/example.com/v1/things',
    listPage: () => Promise.resolve({ items: [item], metadata: { resourceVersion: '10' } }),
    keep: (object) => `${object.metadata?.name ?? ''}@${object.metadata?.resourceVersion ?? ''}`,
    onChange: (name, before, after) => changes.push(`${name}: ${before ?? '-'} → ${after ?? '-'}`),
    log: pino({ level: 'silent' }),
    what: 'things',
  });
  await collection.start();
  return collection;
}

describe('WatchedCollection.hold()', () => {
  test('holds a write newer than what the copy has seen, and tells whoever waits for it', async () => {
    const changes: string[] = [];
    const collection = await listedAt10(changes);
    const waiting = collection.when('b', (kept) => kept === 'b@11', 1_000);
    collection.hold('b', '11', 'b@11');
    expect(collection.get('b')).toBe('b@11');
    expect(await waiting).toBe('b@11');
    expect(changes).toContain('b: - → b@11');
    // Holding is no watch progress: the copy has not seen version 11 for others' writes.
    expect(collection.has('11')).toBe(false);
    await collection.stop();
  });

  test('leaves an object as it is when the copy has already seen the written version', async () => {
    const changes: string[] = [];
    const collection = await listedAt10(changes);
    collection.hold('a', '9', 'a@9');
    collection.hold('c', '', 'c@?');
    expect(collection.get('a')).toBe('a@7');
    expect(collection.get('c')).toBeUndefined();
    await collection.stop();
  });

  test('keeps a held write over the event of an older version, until its own version is seen', async () => {
    // Two writes in a row by this replica: b@12 is held when b@11's event (or a relist that
    // still shows b@11) arrives; c tells when that relist has been read.
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const lists = [
      { items: [{ metadata: { name: 'b', resourceVersion: '10' } }], metadata: { resourceVersion: '10' } },
      {
        items: [
          { metadata: { name: 'b', resourceVersion: '11' } },
          { metadata: { name: 'c', resourceVersion: '11' } },
        ],
        metadata: { resourceVersion: '11' },
      },
      {
        items: [
          { metadata: { name: 'b', resourceVersion: '12' } },
          { metadata: { name: 'd', resourceVersion: '12' } },
        ],
        metadata: { resourceVersion: '12' },
      },
    ];
    let listed = 0;
    const collection = new WatchedCollection<string>({
      kubeConfig,
      path: '/apis/example.com/v1/things',
      listPage: () => Promise.resolve(lists[Math.min(listed++, lists.length - 1)] ?? { items: [] }),
      keep: (object) => `${object.metadata?.name ?? ''}@${object.metadata?.resourceVersion ?? ''}`,
      log: pino({ level: 'silent' }),
      what: 'things',
    });
    await collection.start();
    try {
      collection.hold('b', '12', 'b@12 as written');
      expect(await collection.when('c', () => true, 3_000)).toBe('c@11');
      expect(collection.get('b')).toBe('b@12 as written');
      // Its own version replaces it, as any later one would.
      expect(await collection.when('d', () => true, 3_000)).toBe('d@12');
      expect(collection.get('b')).toBe('b@12');
    } finally {
      await collection.stop();
    }
  });
});

describe('oneAtATime()', () => {
  test('runs lists one after another in the order asked, and a failed list ends its turn', async () => {
    const takeTurn = oneAtATime();
    const events: string[] = [];
    const list =
      (name: string, fails = false) =>
      async (): Promise<string> => {
        events.push(`${name} starts`);
        await new Promise((resolve) => setImmediate(resolve));
        events.push(`${name} ends`);
        if (fails) throw new Error(`${name} failed`);
        return name;
      };
    const results = await Promise.allSettled([
      takeTurn(list('engines')),
      takeTurn(list('pods', true)),
      takeTurn(list('services')),
    ]);
    expect(events).toEqual([
      'engines starts',
      'engines ends',
      'pods starts',
      'pods ends',
      'services starts',
      'services ends',
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });
});
