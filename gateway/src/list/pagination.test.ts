import fc from 'fast-check';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { page, pageOffset, pageSize } from './pagination.ts';

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
