import { oneAtATime } from './watched-collection.ts';

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
