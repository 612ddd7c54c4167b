import { pino } from 'pino';
import { QueuePositions, type PendingOrder } from './positions.ts';

describe('QueuePositions', () => {
  test('asks a queue only while engines of it wait, and tells only the positions that changed', async () => {
    let order: PendingOrder = new Map([
      ['a', 0],
      ['b', 1],
    ]);
    const asked: string[] = [];
    const changed: string[] = [];
    const positions = new QueuePositions({
      read: (queue) => {
        asked.push(queue);
        return Promise.resolve(order);
      },
      changed: (workload) => changed.push(workload),
      log: pino({ level: 'silent' }),
      intervalMs: 20,
    });
    try {
      expect(positions.positionOf('q1', 'b')).toBeUndefined();
      await until(() => changed.length === 1);
      expect(changed).toEqual(['b']);
      expect(positions.positionOf('q1', 'b')).toBe(1);
      order = new Map([['b', 0]]);
      await until(() => changed.length === 2);
      expect(positions.positionOf('q1', 'b')).toBe(0);
      // Admitted: no longer pending, forgotten, and its engine told.
      order = new Map();
      await until(() => changed.length === 3);
      const count = asked.length;
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(asked.length).toBe(count);
    } finally {
      positions.stop();
    }
  });
});

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
}

describe('QueuePositions, a Workload never listed', () => {
  test('is given up after a few reads, its engine told, and the queue no longer asked', async () => {
    const asked: string[] = [];
    const changed: string[] = [];
    const positions = new QueuePositions({
      read: (queue) => {
        asked.push(queue);
        return Promise.resolve(new Map());
      },
      changed: (workload) => changed.push(workload),
      log: pino({ level: 'silent' }),
      intervalMs: 10,
    });
    try {
      expect(positions.positionOf('q1', 'gone')).toBeUndefined();
      await until(() => changed.length === 1);
      expect(changed).toEqual(['gone']);
      expect(asked).toEqual(['q1', 'q1', 'q1']);
    } finally {
      positions.stop();
    }
  });
});
