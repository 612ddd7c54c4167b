import fc from 'fast-check';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { compileOrdering } from './ordering.ts';
import { keysetPage, nextPageToken, page, pageOffset, pageSize } from './pagination.ts';

describe('pageSize()', () => {
  test.each([
    [undefined, 50],
    [0, 50],
    [1, 1],
    [1000, 1000],
    [1001, 1000],
    [2 ** 31 - 1, 1000],
  ])('takes %p as %i', (requested, size) => {
    expect(pageSize(requested)).toBe(size);
  });
  test('refuses a negative size, naming page_size', () => {
    expect(() => pageSize(-1)).toThrow(ApiError);
    expect(() => pageSize(-1)).toThrow('Invalid page_size');
  });
});

describe('page()', () => {
  const items = Array.from({ length: 7 }, (_, i) => i);

  test('walks every item exactly once, in order, ending with an empty token', () => {
    const seen: number[] = [];
    let token = '';
    let pages = 0;
    do {
      const result = page(items, { pageSize: 3, pageToken: token }, 'parent=w');
      seen.push(...result.items);
      token = result.nextPageToken;
      pages++;
    } while (token !== '');
    expect(seen).toEqual(items);
    expect(pages).toBe(3);
  });

  test('gives an empty token when everything fits, and for no items at all', () => {
    expect(page(items, {}, 'q').nextPageToken).toBe('');
    expect(page([], { pageSize: 5 }, 'q')).toEqual({ items: [], nextPageToken: '' });
  });

  test('refuses a token of another query and a token it did not make', () => {
    const { nextPageToken } = page(items, { pageSize: 2 }, 'parent=w filter=a');
    expect(() => pageOffset(nextPageToken, 'parent=w filter=b')).toThrow('different query');
    for (const forged of [
      'not-a-token',
      Buffer.from('{"o":-1}').toString('base64url'),
      Buffer.from('[]').toString('base64url'),
    ]) {
      expect(() => pageOffset(forged, 'q')).toThrow('Invalid page_token');
    }
  });
});

describe('page tokens, whatever the caller sends', () => {
  const b64 = (text: string): string => Buffer.from(text).toString('base64url');

  test.each(['null', '1', '[]', '"o"', '{"o":-1,"q":""}', '{"o":1.5}', '{"o":"1"}', '{}'])(
    'refuses a token made of %s as INVALID_ARGUMENT naming page_token',
    (json) => {
      expect(() => pageOffset(b64(json), 'q')).toThrow('Invalid page_token');
    },
  );

  test('any text is an offset or INVALID_ARGUMENT naming page_token, never another error', () => {
    const token = fc.oneof(
      fc.string(),
      fc.jsonValue().map((v) => b64(JSON.stringify(v))),
    );
    fc.assert(
      fc.property(token, fc.string(), (text, query) => {
        try {
          expect(Number.isInteger(pageOffset(text, query))).toBe(true);
        } catch (error: unknown) {
          expect(error).toMatchObject({ code: Code.INVALID_ARGUMENT, violations: [{ field: 'page_token' }] });
        }
      }),
      { numRuns: 3_000 },
    );
  });

  test('walking the pages of any list visits every item once, in order; another query refuses the token', () => {
    fc.assert(
      fc.property(fc.nat({ max: 300 }), fc.integer({ min: 0, max: 60 }), (total, size) => {
        const items = Array.from({ length: total }, (_, i) => i);
        const seen: number[] = [];
        let token = '';
        do {
          const result = page(items, { pageSize: size, pageToken: token }, 'parent=a');
          seen.push(...result.items);
          if (result.nextPageToken !== '') {
            expect(() => pageOffset(result.nextPageToken, 'parent=b')).toThrow('different query');
          }
          token = result.nextPageToken;
        } while (token !== '');
        expect(seen).toEqual(items);
      }),
      { numRuns: 300 },
    );
  });
});

describe('keysetPage(): pages that hold under concurrent creates and deletes', () => {
  interface Item {
    name: string;
    created: Date;
    cpu: number;
  }
  const SCHEMA = {
    name: { type: 'string' as const, get: (i: Item) => i.name },
    create_time: { type: 'timestamp' as const, get: (i: Item) => i.created },
    cpu: { type: 'int' as const, get: (i: Item) => i.cpu },
  };
  const item = (n: number, cpu: number): Item => ({
    name: `e${n}`,
    created: new Date(Date.UTC(2026, 0, 1) + Math.floor(n / 3) * 1000),
    cpu,
  });

  test('walking every page while items come and go shows each item that stayed exactly once, in order', () => {
    const change = fc.record({ create: fc.boolean(), cpu: fc.integer({ min: 1, max: 4 }), pick: fc.nat() });
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 120 }),
        fc.integer({ min: 1, max: 25 }),
        fc.constantFrom('', 'cpu desc', 'cpu, name desc'),
        fc.array(change, { maxLength: 40 }),
        (cpus, size, orderBy, changes) => {
          let items = cpus.map((cpu, n) => item(n, cpu));
          const original = new Set(items.map((i) => i.name));
          const ordering = compileOrdering(orderBy, SCHEMA, ['create_time desc', 'name']);
          const seen: Item[] = [];
          let token = '';
          let round = 0;
          do {
            const result = keysetPage(items, { pageSize: size, pageToken: token }, 'q', ordering);
            seen.push(...result.items);
            token = result.nextPageToken;
            // Between two pages, someone creates or deletes an item.
            const next = changes[round++];
            if (next?.create === true) items = [...items, item(1000 + round, next.cpu)];
            else if (next !== undefined && items.length > 0) {
              const gone = items[next.pick % items.length];
              items = items.filter((i) => i !== gone);
              original.delete(gone?.name ?? '');
            }
          } while (token !== '');
          const names = seen.map((i) => i.name);
          expect(new Set(names).size).toBe(names.length);
          for (const name of original) expect(names).toContain(name);
          const keys = seen.map((i) => ordering.key(i));
          for (let i = 1; i < keys.length; i++)
            expect(ordering.compare(keys[i - 1] ?? [], keys[i] ?? [])).toBeLessThan(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a token binds its query, refuses a forged key, and an offset token of an earlier release still works', () => {
    const ordering = compileOrdering('cpu desc', SCHEMA, ['create_time desc', 'name']);
    const items = [item(1, 1), item(2, 2), item(3, 3)];
    const first = keysetPage(items, { pageSize: 1 }, 'q', ordering);
    expect(first.items.map((i) => i.name)).toEqual(['e3']);
    expect(() =>
      keysetPage(items, { pageSize: 1, pageToken: first.nextPageToken }, 'other', ordering),
    ).toThrow('different query');
    const forged = Buffer.from(JSON.stringify({ k: ['x', 'y'], q: 'q' })).toString('base64url');
    expect(() => keysetPage(items, { pageToken: forged }, 'q', ordering)).toThrow('Invalid page_token');
    const offset = nextPageToken(2, 3, 'q');
    expect(keysetPage(items, { pageToken: offset }, 'q', ordering).items.map((i) => i.name)).toEqual(['e1']);
  });
});
