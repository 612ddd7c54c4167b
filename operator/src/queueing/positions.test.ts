import { pino } from 'pino';
import { QueuePositions, tellNow, type PendingOrder } from './positions.ts';

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

describe('QueuePositions, engines deep in a long queue', () => {
  test('are told a new position at most once per refresh period, but at once when they become next', async () => {
    let order: PendingOrder = new Map([['deep', 300]]);
    let clock = 0;
    const changed: string[] = [];
    let readCount = 0;
    const positions = new QueuePositions({
      read: () => {
        readCount++;
        return Promise.resolve(order);
      },
      changed: (workload) => changed.push(workload),
      log: pino({ level: 'silent' }),
      intervalMs: 5,
      refreshMs: 10_000,
      now: () => clock,
    });
    /** Waits until the queue has been read `count` more times. */
    const reads = async (count: number): Promise<void> => {
      const target = readCount + count;
      await until(() => readCount >= target);
    };
    try {
      expect(positions.positionOf('q', 'deep')).toBeUndefined();
      await until(() => changed.length === 1);
      expect(positions.positionOf('q', 'deep')).toBe(300);
      // Admissions move it every read; within the period it keeps the position it was told.
      for (const position of [299, 298, 297]) {
        order = new Map([['deep', position]]);
        clock += 1_000;
        await reads(2);
      }
      expect(changed).toHaveLength(1);
      expect(positions.positionOf('q', 'deep')).toBe(300);
      clock += 7_000;
      await until(() => changed.length === 2);
      expect(positions.positionOf('q', 'deep')).toBe(297);
      // Next in line: told at once, within the period.
      order = new Map([['deep', 0]]);
      clock += 1;
      await until(() => changed.length === 3);
      expect(positions.positionOf('q', 'deep')).toBe(0);
    } finally {
      positions.stop();
    }
  });

  test('the rule: the first position and becoming next at once, other moves once per period, no move never', () => {
    expect(tellNow({ unseen: 0 }, 40, 0, 10_000)).toBe(true);
    expect(tellNow({ position: 40, toldAt: 0, unseen: 0 }, 40, 60_000, 10_000)).toBe(false);
    expect(tellNow({ position: 40, toldAt: 0, unseen: 0 }, 39, 9_999, 10_000)).toBe(false);
    expect(tellNow({ position: 40, toldAt: 0, unseen: 0 }, 39, 10_000, 10_000)).toBe(true);
    expect(tellNow({ position: 3, toldAt: 0, unseen: 0 }, 0, 1, 10_000)).toBe(true);
  });
});
