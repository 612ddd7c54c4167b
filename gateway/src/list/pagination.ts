import { createHash } from 'node:crypto';
import { invalidArgument } from '../errors/api-error.ts';

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
