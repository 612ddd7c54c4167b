import { ApiError } from '../errors/api-error.ts';
import { compileFilter, compileOrder, parseFilter, type FilterSchema } from './filter.ts';

interface Engine {
  name: string;
  state: string;
  cpu: number;
  memoryBytes: string;
  reconciling: boolean;
  displayName: string;
  createTime: Date;
  maxIdleDuration: string;
  version: string;
  gpu?: number;
}

const SCHEMA: FilterSchema<Engine> = {
  name: { type: 'string', get: (e) => e.name },
  state: { type: 'enum', get: (e) => e.state, values: ['STATE_RUNNING', 'STATE_PAUSED', 'STATE_STARTING'] },
  cpu: { type: 'int', get: (e) => e.cpu },
  gpu: { type: 'int', get: (e) => e.gpu },
  memory_bytes: { type: 'int', get: (e) => e.memoryBytes },
  reconciling: { type: 'bool', get: (e) => e.reconciling },
  display_name: { type: 'string', get: (e) => e.displayName },
  create_time: { type: 'timestamp', get: (e) => e.createTime },
  max_idle_duration: { type: 'duration', get: (e) => e.maxIdleDuration },
  version: { type: 'version', get: (e) => e.version },
};

const ENGINES: Engine[] = [
  {
    name: 'a',
    state: 'STATE_RUNNING',
    cpu: 1,
    memoryBytes: '8000000000',
    reconciling: false,
    displayName: 'alpha team',
    createTime: new Date('2024-01-01T00:00:00Z'),
    maxIdleDuration: '3600s',
    version: '1.10.4',
    gpu: 0,
  },
  {
    name: 'b',
    state: 'STATE_PAUSED',
    cpu: 4,
    memoryBytes: '16000000000',
    reconciling: true,
    displayName: 'beta',
    createTime: new Date('2024-02-01T00:00:00Z'),
    maxIdleDuration: '7200s',
    version: '1.10.10',
  },
  {
    name: 'c',
    state: 'STATE_RUNNING',
    cpu: 8,
    memoryBytes: '64000000000',
    reconciling: false,
    displayName: 'team gamma',
    createTime: new Date('2024-03-01T12:30:00Z'),
    maxIdleDuration: '1800.5s',
    version: '1.9.0',
    gpu: 2,
  },
];

function matching(filter: string): string[] {
  const predicate = compileFilter(filter, SCHEMA);
  return ENGINES.filter(predicate).map((e) => e.name);
}

function error(filter: string): string {
  try {
    compileFilter(filter, SCHEMA);
  } catch (e: unknown) {
    if (e instanceof ApiError) return `${e.code}: ${e.message}`;
    throw e;
  }
  throw new Error(`"${filter}" was accepted`);
}

describe('compileFilter()', () => {
  test.each<[string, string[]]>([
    ['', ['a', 'b', 'c']],
    ['state = STATE_RUNNING', ['a', 'c']],
    ['state != STATE_RUNNING', ['b']],
    ['state == STATE_PAUSED', ['b']],
    ['cpu > 1', ['b', 'c']],
    ['cpu >= 4 AND cpu <= 4', ['b']],
    ['memory_bytes < 10000000000', ['a']],
    ['reconciling', ['b']],
    ['reconciling = false', ['a', 'c']],
    ['NOT reconciling', ['a', 'c']],
    ['-cpu = 1', ['b', 'c']],
    ['display_name = "alpha*"', ['a']],
    ['display_name = "*gamma"', ['c']],
    ['display_name != "*team"', ['b', 'c']],
    ['display_name:beta', ['b']],
    ["display_name = 'team gamma'", ['c']],
    ['create_time > 2024-01-15T00:00:00Z', ['b', 'c']],
    ['create_time <= 2024-03-01T12:30:00+00:00', ['a', 'b', 'c']],
    ['max_idle_duration > 3600s', ['b']],
    ['max_idle_duration < 1800.6s', ['c']],
    ['version > 1.10.4', ['b']],
    ['version < 1.10', ['c']],
    ['gpu != 0', ['b', 'c']],
    ['gpu = 2', ['c']],
  ])('%s', (filter, expected) => {
    expect(matching(filter)).toEqual(expected);
  });

  test('OR binds tighter than AND, as AIP-160 says', () => {
    // a AND (b OR c), not (a AND b) OR c.
    expect(matching('cpu = 4 AND state = STATE_RUNNING OR reconciling')).toEqual(['b']);
    expect(matching('(cpu = 4 AND state = STATE_RUNNING) OR cpu = 8')).toEqual(['c']);
  });

  test('juxtaposed restrictions mean AND', () => {
    expect(matching('state = STATE_RUNNING cpu > 1')).toEqual(['c']);
  });

  test('NOT applies to a parenthesised expression', () => {
    expect(matching('NOT (cpu = 1 OR cpu = 8)')).toEqual(['b']);
  });

  test.each<[string, string]>([
    ['colour = red', 'unknown field "colour"'],
    ['cpu = four', 'cpu compares with an integer, got "four" (at column 7)'],
    ['reconciling = maybe', 'true or false'],
    ['state = RUNNING', 'one of STATE_RUNNING'],
    ['create_time > yesterday', 'RFC 3339'],
    ['max_idle_duration > 1h', 'a duration'],
    ['cpu = 1 AND', 'ends too early'],
    ['(cpu = 1', 'expected ")"'],
    ['cpu = 1)', 'unexpected ")" (at column 8)'],
    ['display_name = "open', 'unterminated string (at column 16)'],
    ['cpu', 'cpu needs a comparison'],
    ['cpu =', 'expected a value after "="'],
  ])('refuses %s', (filter, message) => {
    const text = error(filter);
    expect(text).toMatch(/^3: Invalid filter: /);
    expect(text).toContain(message);
  });

  test('parses into a tree with positions', () => {
    expect(parseFilter('a = 1 OR b')).toEqual({
      type: 'or',
      left: {
        type: 'restriction',
        field: 'a',
        at: 1,
        comparator: '=',
        value: { text: '1', quoted: false, at: 5 },
      },
      right: { type: 'restriction', field: 'b', at: 10 },
    });
  });
});

describe('compileOrder()', () => {
  const byName = (a: Engine, b: Engine): number => a.name.localeCompare(b.name);
  const order = (orderBy: string): string[] =>
    [...ENGINES].sort(compileOrder(orderBy, SCHEMA, byName)).map((e) => e.name);

  test('orders by fields, ascending unless desc, with the fallback for ties', () => {
    expect(order('cpu desc')).toEqual(['c', 'b', 'a']);
    expect(order('state, cpu desc')).toEqual(['b', 'c', 'a']);
    expect(order('version')).toEqual(['c', 'a', 'b']);
    expect(order('reconciling desc, name')).toEqual(['b', 'a', 'c']);
    expect(order('')).toEqual(['a', 'b', 'c']);
  });

  test('sorts unset values first', () => {
    expect(order('gpu')).toEqual(['b', 'a', 'c']);
  });

  test('refuses unknown fields and directions', () => {
    expect(() => compileOrder('colour', SCHEMA, byName)).toThrow('unknown field "colour"');
    expect(() => compileOrder('cpu sideways', SCHEMA, byName)).toThrow('optionally followed by "desc"');
  });
});
