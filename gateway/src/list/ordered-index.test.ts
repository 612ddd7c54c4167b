import fc from 'fast-check';
import { compileFilter, type FilterSchema } from './filter.ts';
import { groupValue, narrowest, pageGroups, requiredEqualities, type Viewer } from './index-plan.ts';
import { EMPTY_RUN, OrderedIndex, SortedRun, type IndexSpec, type OrderedRun } from './ordered-index.ts';
import { compileOrdering, type Ordering } from './ordering.ts';
import { keysetPage, runPage } from './pagination.ts';

/** An engine as far as lists see it. */
interface Item {
  name: string;
  state: string;
  creator: string;
  cpu: number;
  createTime?: Date | undefined;
}

const STATES = ['STATE_RUNNING', 'STATE_PAUSED', 'STATE_FAILED'];
const SCHEMA: FilterSchema<Item> = {
  name: { type: 'string', get: (i) => i.name },
  state: { type: 'enum', values: STATES, get: (i) => i.state },
  creator: { type: 'string', get: (i) => i.creator },
  cpu: { type: 'int', get: (i) => i.cpu },
  create_time: { type: 'timestamp', get: (i) => i.createTime },
};
const NEWEST_FIRST = ['create_time desc', 'name'];
const GROUPED = ['state', 'creator'];

/** The groupings a workspace's lists keep: the whole workspace, and one per grouped field. */
function specOf(ordering: Ordering<Item>, field?: string): IndexSpec<Item> {
  const spec = field === undefined ? undefined : SCHEMA[field];
  return {
    id: `${ordering.id}|${field ?? ''}`,
    key: (item) => ordering.key(item),
    compare: (a, b) => ordering.compare(a, b),
    group: spec === undefined ? () => '' : (item) => groupValue(spec, item),
  };
}

/** Indexes kept up to date from changes, as the watch cache keeps them, per order and field. */
class Indexes {
  private readonly items = new Map<string, Item>();
  private readonly indexes = new Map<string, OrderedIndex<Item>>();

  put(item: Item): void {
    const before = this.items.get(item.name);
    this.items.set(item.name, item);
    for (const index of this.indexes.values()) index.update(before, item);
  }

  delete(name: string): void {
    const before = this.items.get(name);
    this.items.delete(name);
    for (const index of this.indexes.values()) index.update(before, undefined);
  }

  all(): Item[] {
    return [...this.items.values()];
  }

  run(spec: IndexSpec<Item>, group: string): OrderedRun<Item> {
    let index = this.indexes.get(spec.id);
    if (index === undefined) {
      index = new OrderedIndex(spec, this.items.values());
      this.indexes.set(spec.id, index);
    }
    return index.group(group);
  }

  /** A page as the engine services read it: from the narrowest run that holds every match. */
  page(filter: string, orderBy: string, request: { pageSize?: number; pageToken?: string }, viewer = ADMIN) {
    const ordering = compileOrdering(orderBy, SCHEMA, NEWEST_FIRST);
    const candidates = pageGroups(filter, SCHEMA, GROUPED, viewer).map(({ field, value, everyMatches }) => ({
      run: this.run(specOf(ordering, field), value),
      everyMatches,
    }));
    const { run, everyMatches } = narrowest(candidates) ?? { run: EMPTY_RUN, everyMatches: true };
    const matches = compileFilter(filter, SCHEMA);
    return runPage(run, request, {
      query: `filter=${filter}&order_by=${orderBy}`,
      ordering,
      matches: (item) => sees(viewer, item) && matches(item),
      everyMatches,
    });
  }
}

/** Whom a list is for: an administrator, or a user who sees its own engines. */
const ADMIN: Viewer = { all: true };
const sees = (viewer: Viewer, item: Item): boolean => viewer.all || item.creator === viewer.creator;

/** The page as lists read it before indexes: filter everything, sort everything. */
function referencePage(
  items: readonly Item[],
  filter: string,
  orderBy: string,
  request: { pageSize?: number; pageToken?: string },
  viewer: Viewer,
) {
  const matches = compileFilter(filter, SCHEMA);
  const matching = items.filter((item) => sees(viewer, item) && matches(item));
  const ordering = compileOrdering(orderBy, SCHEMA, NEWEST_FIRST);
  const page = keysetPage(matching, request, `filter=${filter}&order_by=${orderBy}`, ordering);
  return { ...page, totalSize: matching.length };
}

const names = fc.constantFrom(...Array.from({ length: 12 }, (_, i) => `e${i}`));
const item = (name: fc.Arbitrary<string>): fc.Arbitrary<Item> =>
  fc.record({
    name,
    state: fc.constantFrom(...STATES),
    creator: fc.constantFrom('alice', 'bob', 'carol'),
    cpu: fc.integer({ min: 1, max: 4 }),
    // Equal times are common (a batch created in one second); some engines have none.
    createTime: fc.option(
      fc.integer({ min: 0, max: 5 }).map((s) => new Date(1_700_000_000_000 + s * 1000)),
      { nil: undefined },
    ),
  });
type Change = { put: Item } | { delete: string };
const change: fc.Arbitrary<Change> = fc.oneof(
  { arbitrary: item(names).map((put) => ({ put })), weight: 3 },
  { arbitrary: names.map((name) => ({ delete: name })), weight: 1 },
);
const FILTERS = [
  '',
  'state = STATE_RUNNING',
  'state = STATE_RUNNING AND cpu > 1',
  'creator = bob',
  'creator = "alice" state = STATE_PAUSED',
  'creator = al*',
  'state = STATE_FAILED OR cpu >= 3',
  'NOT state = STATE_RUNNING',
  'cpu > 2',
  'state : STATE_PAUSED AND creator != carol',
];
const ORDERS = ['', 'create_time desc', 'cpu desc', 'cpu, creator desc', 'name desc', 'create_time'];

function apply(indexes: Indexes, c: Change): void {
  if ('put' in c) indexes.put(c.put);
  else indexes.delete(c.delete);
}

describe('SortedRun', () => {
  const spec = {
    key: (n: number) => [n],
    compare: (a: readonly unknown[], b: readonly unknown[]) => Number(a[0]) - Number(b[0]),
  };

  test('keeps numbers sorted through inserts and removals, and seeks past a key', () => {
    const run = new SortedRun(spec);
    for (const n of [5, 1, 9, 3, 7]) run.insert(n);
    run.remove(9);
    run.remove(4);
    expect(Array.from({ length: run.size }, (_, i) => run.at(i))).toEqual([1, 3, 5, 7]);
    expect(run.after([3])).toBe(2);
    expect(run.after([4])).toBe(2);
    expect(run.after([0])).toBe(0);
    expect(run.after([7])).toBe(4);
  });
});

describe('requiredEqualities()', () => {
  test.each([
    ['state = STATE_RUNNING', [{ field: 'state', value: 'STATE_RUNNING' }], true],
    ['state = STATE_RUNNING AND cpu > 1', [{ field: 'state', value: 'STATE_RUNNING' }], false],
    [
      'creator = "bob" state : STATE_PAUSED',
      [
        { field: 'creator', value: 'bob' },
        { field: 'state', value: 'STATE_PAUSED' },
      ],
      false,
    ],
    ['state = STATE_RUNNING OR cpu > 1', [], false],
    ['NOT state = STATE_RUNNING', [], false],
    ['creator = al*', [], false],
    ['state != STATE_RUNNING', [], false],
    ['cpu = 2', [], false],
    ['', [], false],
  ])('%p names %p', (filter, equalities, alone) => {
    expect(requiredEqualities(filter, SCHEMA, GROUPED)).toEqual({ equalities, alone });
  });
});

describe('pages read from ordered indexes', () => {
  test('equal those of filtering and sorting everything, after any changes, for any query', () => {
    fc.assert(
      fc.property(
        fc.array(change, { maxLength: 40 }),
        fc.array(change, { maxLength: 20 }),
        fc.constantFrom(...FILTERS),
        fc.constantFrom(...ORDERS),
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom<Viewer>(ADMIN, { all: false, creator: 'alice' }, { all: false, creator: 'bob' }),
        (before, after, filter, orderBy, pageSize, viewer) => {
          const indexes = new Indexes();
          for (const c of before) apply(indexes, c);
          // Indexes built now, then kept up to date by the changes that follow.
          indexes.page(filter, orderBy, {}, viewer);
          for (const c of after) apply(indexes, c);
          let token = '';
          let pages = 0;
          do {
            const request = { pageSize, pageToken: token };
            const expected = referencePage(indexes.all(), filter, orderBy, request, viewer);
            const actual = indexes.page(filter, orderBy, request, viewer);
            expect(actual.items.map((i) => i.name)).toEqual(expected.items.map((i) => i.name));
            expect(actual.nextPageToken).toBe(expected.nextPageToken);
            expect(actual.totalSize).toBe(expected.totalSize);
            token = actual.nextPageToken;
          } while (token !== '' && ++pages < 20);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('never skip or repeat an engine that exists throughout, whatever is created and deleted between pages', () => {
    const stable = fc.uniqueArray(item(fc.constantFrom(...Array.from({ length: 15 }, (_, i) => `s${i}`))), {
      selector: (i) => i.name,
      minLength: 1,
    });
    const churn: fc.Arbitrary<Change> = fc.oneof(
      item(fc.constantFrom(...Array.from({ length: 15 }, (_, i) => `c${i}`))).map((put) => ({ put })),
      fc.constantFrom(...Array.from({ length: 15 }, (_, i) => `c${i}`)).map((name) => ({ delete: name })),
    );
    fc.assert(
      fc.property(
        stable,
        fc.array(fc.array(churn, { maxLength: 6 }), { minLength: 40, maxLength: 40 }),
        fc.constantFrom('', 'state = STATE_RUNNING', 'cpu > 1', 'creator = bob'),
        fc.constantFrom(...ORDERS),
        fc.integer({ min: 1, max: 4 }),
        (engines, between, filter, orderBy, pageSize) => {
          const indexes = new Indexes();
          for (const e of engines) indexes.put(e);
          const matches = compileFilter(filter, SCHEMA);
          const seen: string[] = [];
          let token = '';
          for (const changes of between) {
            const page = indexes.page(filter, orderBy, { pageSize, pageToken: token });
            seen.push(...page.items.map((i) => i.name));
            token = page.nextPageToken;
            if (token === '') break;
            for (const c of changes) apply(indexes, c);
          }
          expect(token).toBe('');
          // Each engine that existed throughout exactly once (a churned name may come back anew).
          const shown = seen.filter((name) => name.startsWith('s'));
          expect(shown.sort()).toEqual(
            engines
              .filter(matches)
              .map((e) => e.name)
              .sort(),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
