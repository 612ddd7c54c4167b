import fc from 'fast-check';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { compileFilter, FILTER_LIMITS, parseFilter, type FilterSchema } from './filter.ts';
import { compileOrdering } from './ordering.ts';

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
    ['version = 1.10.4', ['a']],
    ['version != 1.10.4', ['b', 'c']],
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
    ['version > jupyter', 'version > needs a release number such as 1.10.6, got "jupyter"'],
  ])('refuses %s', (filter, message) => {
    const text = error(filter);
    expect(text).toMatch(/^3: Invalid filter: /);
    expect(text).toContain(message);
  });

  test('parses into a tree with positions', () => {
    expect(parseFilter('a = 1 OR b OR (c)')).toEqual({
      type: 'or',
      operands: [
        {
          type: 'restriction',
          field: 'a',
          at: 1,
          comparator: '=',
          value: { text: '1', quoted: false, at: 5 },
        },
        { type: 'restriction', field: 'b', at: 10 },
        { type: 'restriction', field: 'c', at: 16 },
      ],
    });
  });
});

describe('filter limits', () => {
  test('takes a filter at every limit', () => {
    const ors = Array.from({ length: FILTER_LIMITS.restrictions }, () => 'cpu = 1').join(' OR ');
    expect(ors.length).toBeLessThanOrEqual(FILTER_LIMITS.length);
    expect(matching(ors)).toEqual(['a']);
    const nested = `${'('.repeat(FILTER_LIMITS.depth)}cpu = 4${')'.repeat(FILTER_LIMITS.depth)}`;
    expect(matching(nested)).toEqual(['b']);
  });

  test.each<[string, string, string]>([
    ['20,000 ORs', Array.from({ length: 20_000 }, () => 'a').join(' OR '), 'longer than 16384 characters'],
    [
      '1,001 restrictions',
      Array.from({ length: 1_001 }, () => 'cpu=1').join(' '),
      'more than 1000 restrictions',
    ],
    ['5,000 nested parentheses', `${'('.repeat(5_000)}cpu = 1${')'.repeat(5_000)}`, 'nest deeper than 32'],
    [
      '33 nested parentheses',
      `${'('.repeat(33)}cpu = 1${')'.repeat(33)}`,
      'nest deeper than 32 (at column 33)',
    ],
    ['a field named after Object.prototype', 'constructor = 1', 'unknown field "constructor"'],
    ['__proto__', '__proto__:x', 'unknown field "__proto__"'],
  ])('refuses %s with INVALID_ARGUMENT naming the limit', (_, filter, message) => {
    expect(error(filter)).toContain(message);
  });
});

/** A filter built from known fields and values, and what it should match, computed apart. */
type Expression =
  | { op: 'and' | 'or'; operands: Expression[] }
  | { op: 'not'; operand: Expression }
  | { op: 'cpu' | 'state'; comparator: '=' | '!=' | '<' | '>='; value: number | string };

const restriction: fc.Arbitrary<Expression> = fc.oneof(
  fc.record({
    op: fc.constant('cpu' as const),
    comparator: fc.constantFrom('=' as const, '!=' as const, '<' as const, '>=' as const),
    value: fc.integer({ min: -1, max: 9 }),
  }),
  fc.record({
    op: fc.constant('state' as const),
    comparator: fc.constantFrom('=' as const, '!=' as const),
    value: fc.constantFrom('STATE_RUNNING', 'STATE_PAUSED', 'STATE_STARTING'),
  }),
);

const { expression } = fc.letrec<{ expression: Expression }>((tie) => ({
  expression: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    restriction,
    fc.record({ op: fc.constant('not' as const), operand: tie('expression') }),
    fc.record({
      op: fc.constantFrom('and' as const, 'or' as const),
      operands: fc.array(tie('expression'), { minLength: 2, maxLength: 4 }),
    }),
  ),
}));

/** The expression as filter text, every compound in parentheses. */
function render(e: Expression): string {
  switch (e.op) {
    case 'and':
    case 'or':
      return `(${e.operands.map(render).join(e.op === 'and' ? ' AND ' : ' OR ')})`;
    case 'not':
      return `NOT (${render(e.operand)})`;
    default:
      return `${e.op} ${e.comparator} ${e.value}`;
  }
}

function holds(e: Expression, engine: Engine): boolean {
  switch (e.op) {
    case 'and':
      return e.operands.every((o) => holds(o, engine));
    case 'or':
      return e.operands.some((o) => holds(o, engine));
    case 'not':
      return !holds(e.operand, engine);
    default: {
      const actual = e.op === 'cpu' ? engine.cpu : engine.state;
      const order = actual < e.value ? -1 : actual > e.value ? 1 : 0;
      return { '=': order === 0, '!=': order !== 0, '<': order < 0, '>=': order >= 0 }[e.comparator];
    }
  }
}

describe('filter properties', () => {
  test('a filter matches exactly what its expression says', () => {
    fc.assert(
      fc.property(expression, (e) => {
        const text = render(e);
        fc.pre(text.length <= FILTER_LIMITS.length && (text.match(/\(/g) ?? []).length <= 200);
        try {
          expect(matching(text)).toEqual(ENGINES.filter((engine) => holds(e, engine)).map((x) => x.name));
        } catch (problem: unknown) {
          // Only the nesting limit may refuse a generated filter.
          if (!(problem instanceof ApiError && problem.message.includes('nest deeper'))) throw problem;
        }
      }),
      { numRuns: 300 },
    );
  });

  test('any text either compiles into a predicate that never throws, or is refused as INVALID_ARGUMENT', () => {
    const words = fc.constantFrom(
      'cpu',
      'state',
      'version',
      'AND',
      'OR',
      'NOT',
      '-',
      '(',
      ')',
      '=',
      '<=',
      ':',
      '"x',
      "'y'",
      '1.a',
      'STATE_RUNNING',
      '2024-01-01T00:00:00Z',
      '3600s',
      'constructor',
      '*',
      '\uD800',
    );
    const text = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc.array(words, { maxLength: 30 }).map((w) => w.join(' ')),
    );
    fc.assert(
      fc.property(text, (filter) => {
        let predicate: ((e: Engine) => boolean) | undefined;
        try {
          predicate = compileFilter(filter, SCHEMA);
        } catch (problem: unknown) {
          expect(problem).toBeInstanceOf(ApiError);
          expect(problem).toMatchObject({ code: Code.INVALID_ARGUMENT, violations: [{ field: 'filter' }] });
          return;
        }
        for (const engine of ENGINES) expect(typeof predicate(engine)).toBe('boolean');
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('compileOrdering()', () => {
  const sorted = (items: readonly Engine[], orderBy: string): Engine[] => {
    const ordering = compileOrdering(orderBy, SCHEMA, ['name']);
    return [...items].sort((a, b) => ordering.compare(ordering.key(a), ordering.key(b)));
  };
  const order = (orderBy: string): string[] => sorted(ENGINES, orderBy).map((e) => e.name);
  const byName = ['name'];

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
    expect(() => compileOrdering('colour', SCHEMA, byName)).toThrow('unknown field "colour"');
    expect(() => compileOrdering('cpu sideways', SCHEMA, byName)).toThrow('optionally followed by "desc"');
    expect(() => compileOrdering('cpu, name desc, cpu desc', SCHEMA, byName)).toThrow(
      '"cpu" is named more than once',
    );
    expect(() => compileOrdering('constructor', SCHEMA, byName)).toThrow('unknown field "constructor"');
  });

  test('leaves versions that are no release numbers out of ordering comparisons, and matches them by equality', () => {
    const withImage = [...ENGINES, { ...(ENGINES[0] as Engine), name: 'n', version: 'jupyter' }];
    const names = (filter: string): string[] =>
      withImage.filter(compileFilter(filter, SCHEMA)).map((e) => e.name);
    expect(names('version >= 0.1.0')).toEqual(['a', 'b', 'c']);
    expect(names('version < 99')).toEqual(['a', 'b', 'c']);
    expect(names('version = jupyter')).toEqual(['n']);
    expect(names('NOT version >= 0.1.0')).toEqual(['n']);
  });

  test('orders by versions that are not numbers (image ids), without failing', () => {
    const versions = ['jupyter', '1.10.4', '1.a', '2+build', ''];
    const bySpec = (v: string): Engine => ({ ...(ENGINES[0] as Engine), version: v, name: v });
    expect(sorted(versions.map(bySpec), 'version').map((e) => e.name)).toEqual([
      '1.10.4',
      '1.a',
      '2+build',
      '',
      'jupyter',
    ]);
  });
});
