/**
 * A stand-in for the hosted search service (Algolia), installed on a page by request routing.
 * It answers the multi-query endpoint the search dialog calls (`POST /1/indexes/*\/queries` on
 * `<app>-dsn.algolia.net` and `<app>-N.algolianet.com`) with hits from a small record list,
 * in the service's response format, or fails every request as an unreachable network would.
 */
import type { Page, Route } from 'playwright-core';
import { fakedRequests } from './site.ts';

/** One searchable section of a page, as the crawler of the hosted search records it. */
export interface SearchRecord {
  /** The page address as the index stores it: the published site's, not this server's. */
  url: string;
  /** Section titles: lvl0 the category, lvl1 the page, lvl2 a heading on it. */
  hierarchy: { lvl0: string; lvl1: string; lvl2?: string };
}

/** Controls and observations of the fake service. */
export interface FakeSearchService {
  /** The queries received, in order. */
  readonly queries: string[];
  /** false: every request fails like a network without the service. */
  reachable: boolean;
}

interface QueryRequest {
  indexName: string;
  query?: string;
  params?: string;
}

function isSearchHost(url: URL): boolean {
  return url.hostname.endsWith('.algolia.net') || url.hostname.endsWith('.algolianet.com');
}

function words(query: string): string[] {
  return query.toLowerCase().split(/\s+/).filter(Boolean);
}

function highlight(
  text: string,
  query: string,
): { value: string; matchLevel: string; matchedWords: string[] } {
  const matched = words(query).filter((word) => text.toLowerCase().includes(word));
  let value = text;
  for (const word of matched) value = value.replace(new RegExp(`(${word})`, 'ig'), '<mark>$1</mark>');
  return { value, matchLevel: matched.length > 0 ? 'full' : 'none', matchedWords: matched };
}

function hitFor(record: SearchRecord, query: string, position: number): Record<string, unknown> {
  const { lvl0, lvl1, lvl2 } = record.hierarchy;
  const hierarchy = { lvl0, lvl1, lvl2: lvl2 ?? null, lvl3: null, lvl4: null, lvl5: null, lvl6: null };
  return {
    objectID: `record-${position}`,
    url: record.url,
    type: lvl2 ? 'lvl2' : 'lvl1',
    content: null,
    hierarchy,
    _highlightResult: {
      hierarchy: {
        lvl0: highlight(lvl0, query),
        lvl1: highlight(lvl1, query),
        ...(lvl2 && { lvl2: highlight(lvl2, query) }),
      },
    },
    _snippetResult: {},
  };
}

function search(records: SearchRecord[], request: QueryRequest): Record<string, unknown> {
  const query = request.query ?? new URLSearchParams(request.params ?? '').get('query') ?? '';
  const wanted = words(query);
  const hits = records
    .filter((record) => {
      const text = Object.values(record.hierarchy).join(' ').toLowerCase();
      return wanted.length > 0 && wanted.every((word) => text.includes(word));
    })
    .map((record, position) => hitFor(record, query, position));
  return {
    hits,
    nbHits: hits.length,
    page: 0,
    nbPages: hits.length > 0 ? 1 : 0,
    hitsPerPage: 20,
    processingTimeMS: 1,
    exhaustiveNbHits: true,
    query,
    params: request.params ?? '',
    index: request.indexName,
  };
}

/** Routes the page's search requests to the fake service holding `records`. */
export async function fakeSearchService(page: Page, records: SearchRecord[]): Promise<FakeSearchService> {
  const service: FakeSearchService = { queries: [], reachable: true };
  const answer = async (route: Route): Promise<void> => {
    const request = route.request();
    fakedRequests.add(request);
    const url = new URL(request.url());
    if (!service.reachable) {
      await route.abort('internetdisconnected');
      return;
    }
    const cors = { 'access-control-allow-origin': '*' };
    if (request.method() !== 'POST' || !url.pathname.endsWith('/queries')) {
      await route.fulfill({ status: 404, headers: cors, json: { message: 'Not found', status: 404 } });
      return;
    }
    const body = request.postDataJSON() as { requests: QueryRequest[] };
    service.queries.push(...body.requests.map((query) => query.query ?? ''));
    await route.fulfill({
      status: 200,
      headers: cors,
      json: { results: body.requests.map((query) => search(records, query)) },
    });
  };
  await page.route(isSearchHost, answer);
  return service;
}
