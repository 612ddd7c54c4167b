import { createHash } from 'node:crypto';
import { invalidArgument } from '../errors/api-error.ts';
import type { OrderedRun } from './ordered-index.ts';
import type { Ordering, SortKey } from './ordering.ts';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

/** The page size to use: 0 or unset means 50, larger than 1000 means 1000, negative is refused. */
export function pageSize(requested: number | undefined): number {
  if (requested === undefined || requested === 0) return DEFAULT_PAGE_SIZE;
  if (requested < 0) throw invalidArgument('page_size', `must not be negative, got ${requested}`);
  return Math.min(requested, MAX_PAGE_SIZE);
}

/** What a page token stands for: where the next page starts, for one query. */
interface TokenBody {
  /** Offset of the next item. */
  o: number;
  /** Hash of the query (filter, order, parent) the token belongs to. */
  q: string;
  /** Keyset tokens: the sort key of the last item shown (then `o` is absent). */
  k?: unknown;
}

function queryHash(query: string): string {
  return createHash('sha256').update(query).digest('base64url').slice(0, 16);
}

/**
 * An opaque token for the page that starts at `offset` of the results of `query` (the parent,
 * filter and order that produced them). The last page has no next page: its token is "".
 */
export function nextPageToken(offset: number, total: number, query: string): string {
  if (offset >= total) return '';
  const body: TokenBody = { o: offset, q: queryHash(query) };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/**
 * The offset a page token stands for; 0 for an empty token. A token that was not made by this
 * server, or was made for another query, is INVALID_ARGUMENT (as AIP-158 asks).
 */
export function pageOffset(token: string | undefined, query: string): number {
  if (token === undefined || token === '') return 0;
  const body = tokenBody(token);
  if (body === undefined || typeof body.o !== 'number' || !Number.isInteger(body.o) || body.o < 0) {
    throw invalidArgument('page_token', 'is not a token from a previous response');
  }
  if (body.q !== queryHash(query)) {
    throw invalidArgument('page_token', 'belongs to a different query (parent, filter or order_by changed)');
  }
  return body.o;
}

/** What a token says, if it is a JSON object at all (`null`, numbers and lists are not). */
function tokenBody(token: string): Partial<TokenBody> | undefined {
  try {
    const body: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    return typeof body === 'object' && body !== null ? body : undefined;
  } catch {
    return undefined;
  }
}

/** One page of `items`, and the token of the next. */
export function page<T>(
  items: readonly T[],
  request: { pageSize?: number; pageToken?: string },
  query: string,
): { items: T[]; nextPageToken: string } {
  const size = pageSize(request.pageSize);
  const offset = pageOffset(request.pageToken, query);
  const end = offset + size;
  return { items: items.slice(offset, end), nextPageToken: nextPageToken(end, items.length, query) };
}

/**
 * One page of `items` (those that match the query, in any order) in `ordering`, starting after
 * the item whose key the page token remembers, and the token of the next. A token holds the
 * last key shown, not a position: engines created or deleted between two pages never make a
 * page skip or repeat another engine. Tokens of earlier releases (offsets) still work.
 *
 * Work per page: one key per item and a sort of the items after the token, all in memory.
 */
export function keysetPage<T>(
  items: readonly T[],
  request: { pageSize?: number; pageToken?: string },
  query: string,
  ordering: Ordering<T>,
): { items: T[]; nextPageToken: string } {
  const size = pageSize(request.pageSize);
  const keyed = items.map((item) => ({ item, key: ordering.key(item) }));
  const after = pageStart(request.pageToken, query, ordering);
  const rest = (
    typeof after === 'number' ? keyed : keyed.filter((k) => ordering.compare(k.key, after) > 0)
  ).sort((a, b) => ordering.compare(a.key, b.key));
  const from = typeof after === 'number' ? after : 0;
  const shown = rest.slice(from, from + size);
  const last = shown.at(-1);
  const more = from + size < rest.length && last !== undefined;
  return {
    items: shown.map((k) => k.item),
    nextPageToken: more ? keysetToken(ordering.encode(last.key), query) : '',
  };
}

function keysetToken(key: unknown, query: string): string {
  return Buffer.from(JSON.stringify({ k: key, q: queryHash(query) })).toString('base64url');
}

/** Where a page starts: after a key, or at an offset (tokens of earlier releases, and none). */
function pageStart<T>(token: string | undefined, query: string, ordering: Ordering<T>): SortKey | number {
  if (token === undefined || token === '') return 0;
  const body = tokenBody(token);
  if (body?.k === undefined) return pageOffset(token, query);
  const key = ordering.decode(body.k);
  if (key === undefined) throw invalidArgument('page_token', 'is not a token from a previous response');
  if (body.q !== queryHash(query)) {
    throw invalidArgument('page_token', 'belongs to a different query (parent, filter or order_by changed)');
  }
  return key;
}

/** A page read from a run kept in order, the token of the next, and how many items match. */
export interface RunPage<T> {
  items: T[];
  nextPageToken: string;
  totalSize: number;
}

/** What a page of a run is read for: the query, its ordering, and which items match. */
export interface RunQuery<T> {
  /** The parent, filter and order, which a page token must belong to. */
  query: string;
  ordering: Ordering<T>;
  matches: (item: T) => boolean;
  /** Every item of the run matches (no filter is left to apply). */
  everyMatches: boolean;
}

/**
 * {@link keysetPage} over items already in `ordering` (a run of an ordered index): the page
 * starts by binary search after the token's key and reads on until `size` items match (and one
 * more, to know whether there is a next page), so a page costs the page and the items the filter
 * passes over, not the workspace. Pages and tokens are those keysetPage gives for the same items.
 *
 * The total is the run's size when every item matches; otherwise counting it reads the whole
 * run, testing each item (no sort, no keys).
 */
export function runPage<T>(
  run: OrderedRun<T>,
  request: { pageSize?: number; pageToken?: string },
  { query, ordering, matches, everyMatches }: RunQuery<T>,
): RunPage<T> {
  const size = pageSize(request.pageSize);
  const after = pageStart(request.pageToken, query, ordering);
  const test = everyMatches ? () => true : matches;
  // An offset (a token of an earlier release) counts matching items from the start.
  const { items, more } =
    typeof after === 'number'
      ? readMatches(run, { index: 0, skip: after }, size, test)
      : readMatches(run, { index: run.after(after), skip: 0 }, size, test);
  const last = items.at(-1);
  return {
    items,
    nextPageToken: more && last !== undefined ? keysetToken(ordering.encode(ordering.key(last)), query) : '',
    totalSize: everyMatches ? run.size : countMatches(run, matches),
  };
}

/** Up to `size` matching items from `index`, after skipping `skip` matches; and whether more match. */
function readMatches<T>(
  run: OrderedRun<T>,
  { index: start, skip }: { index: number; skip: number },
  size: number,
  matches: (item: T) => boolean,
): { items: T[]; more: boolean } {
  const items: T[] = [];
  let skipped = 0;
  for (let i = start; i < run.size; i++) {
    const item = run.at(i);
    if (item === undefined || !matches(item)) continue;
    if (skipped < skip) skipped++;
    else if (items.length === size) return { items, more: true };
    else items.push(item);
  }
  return { items, more: false };
}

function countMatches<T>(run: OrderedRun<T>, matches: (item: T) => boolean): number {
  let count = 0;
  for (let i = 0; i < run.size; i++) {
    const item = run.at(i);
    if (item !== undefined && matches(item)) count++;
  }
  return count;
}
