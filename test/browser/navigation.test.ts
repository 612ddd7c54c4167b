/**
 * How the documentation site behaves when things go wrong or are slow: unknown addresses (and
 * the way on from the not-found page),
 * `.html` addresses, a crashing page, a wrong base URL, failed downloads, the progress bar,
 * and prefetching on slow connections.
 */
import { describe, expect, test } from '@jest/globals';
import type { Page, Request } from 'playwright-core';
import { waitFor } from '../cluster/wait.ts';
import { fakeSearchService } from './fake-algolia.ts';
import { OVERVIEW_PAGE } from './routes.ts';
import { BASE_PATH, openPage, SEARCH_MODE, useSite } from './site.ts';

const site = useSite();

/** Route chunks: every script but the two the first load always needs. */
const ROUTE_CHUNK = /\/assets\/js\/(?!main\.|runtime~main\.)[^/]+\.js$/;

const heading = (page: Page) => page.locator('h1').first();

/** Marks the current document, to tell a client-side navigation from a full reload. */
async function markDocument(page: Page): Promise<void> {
  await page.evaluate(() => {
    (window as unknown as { marker?: string }).marker = 'before';
  });
}
async function documentMark(page: Page): Promise<string | undefined> {
  return page.evaluate(() => (window as unknown as { marker?: string }).marker);
}

describe('addresses', () => {
  test('an unknown path shows the not-found page', async () => {
    const page = await site().newPage();
    for (const path of ['no/such/page', 'get-started/no-such-page', 'nope.html']) {
      const status = await openPage(page, site().at(path));
      expect(status).toBe(404);
      await expect(heading(page).innerText()).resolves.toBe('Page Not Found');
      await expect(page.getByText('We could not find what you were looking for.').isVisible()).resolves.toBe(
        true,
      );
    }
  });

  test('the not-found page offers a search of the documentation and the main sections', async () => {
    const page = await site().newPage();
    const service = SEARCH_MODE === 'hosted' ? await fakeSearchService(page, []) : undefined;
    await openPage(page, site().at('no/such/page'));
    const sections = page.getByRole('navigation', { name: 'Main sections' }).getByRole('link');
    await expect(sections.allInnerTexts()).resolves.toEqual([
      'Quickstart',
      'Get started',
      'User guide',
      'Python client',
      'Administration',
      'REST API reference',
    ]);
    await page.getByLabel('Search the documentation').fill('pause engine');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(
      (url) => url.pathname === `${BASE_PATH}search` && url.searchParams.get('q') === 'pause engine',
    );
    // (The offline page titles the results once its index has loaded.)
    await page.locator('h1', { hasText: 'Search results for "pause engine"' }).waitFor();
    // The hosted search page asks the (faked) service; its answer comes before the page closes.
    if (service !== undefined)
      await waitFor(() => Promise.resolve(service.queries.length > 0 || undefined), {
        what: 'the search page to ask the search service',
      });
  });

  test('paths ending in .html or /index.html show the page of the path without that ending', async () => {
    const page = await site().newPage();
    await openPage(page, site().at(OVERVIEW_PAGE));
    const title = await heading(page).innerText();
    expect(title).not.toBe('Page Not Found');
    for (const path of [`${OVERVIEW_PAGE}.html`, `${OVERVIEW_PAGE}/index.html`]) {
      // The server answers the page itself, as a plain static host does with the built files:
      // crawlers and readers without JavaScript get it too.
      await expect(openPage(page, site().at(path))).resolves.toBe(200);
      await expect(heading(page).innerText()).resolves.toBe(title);
      await expect(page.locator('h1').count()).resolves.toBe(1);
      // The address bar shows the page's own address.
      expect(page.url()).toBe(site().at(OVERVIEW_PAGE));
    }
    for (const path of ['index.html', '.html']) {
      await openPage(page, site().at(path));
      await expect(page.locator('h1').allInnerTexts()).resolves.toEqual(['AI Engine Manager']);
      expect(page.url()).toBe(site().url);
    }
  });

  test('a site served at the wrong base path shows the red baseUrl banner', async () => {
    const wrong = await site().serveAt('/');
    const page = await site().newPage();
    await page.goto(wrong.url);
    const banner = page.locator('#__docusaurus-base-url-issue-banner');
    await banner.waitFor();
    await expect(banner.innerText()).resolves.toContain('Your Docusaurus site did not load properly.');
    await expect(banner.innerText()).resolves.toContain('We suggest trying baseUrl = /');
    await expect(banner.evaluate((element) => getComputedStyle(element).borderColor)).resolves.toBe(
      'rgb(255, 0, 0)',
    );
    // Served at the right base path, the banner stays hidden.
    await openPage(page, site().url);
    await expect(page.locator('#__docusaurus-base-url-issue-banner').isVisible()).resolves.toBe(false);
  });
});

describe('failures', () => {
  test('a crashed page shows "This page crashed." and "Try again" brings it back', async () => {
    const page = await site().newPage();
    await page.addInitScript(() => {
      (window as unknown as { __aiemCrash: boolean }).__aiemCrash = true;
    });
    await openPage(page, site().at('test-pages/crash'));
    await expect(heading(page).innerText()).resolves.toBe('This page crashed.');
    const tryAgain = page.getByRole('button', { name: 'Try again' });
    // The navbar is outside the crashed part and stays usable.
    await expect(page.locator('.navbar__title').innerText()).resolves.toBe('AI Engine Manager');
    await markDocument(page);
    await page.evaluate(() => {
      (window as unknown as { __aiemCrash: boolean }).__aiemCrash = false;
    });
    await tryAgain.click();
    await page.getByText('The page rendered.').waitFor();
    await expect(heading(page).innerText()).resolves.toBe('Crash test');
    await expect(documentMark(page)).resolves.toBe('before');
  });

  test('a page whose code fails to download during navigation is reloaded in full', async () => {
    const page = await site().newPage();
    await openPage(page, site().url);
    await markDocument(page);
    const failed: string[] = [];
    // The reloaded page cannot load its code either, and says so.
    site().tolerateUncaught(/ChunkLoadError/);
    await page.route(ROUTE_CHUNK, async (route) => {
      failed.push(route.request().url());
      await route.abort('connectionreset');
    });
    // A client-side navigation fires no load event; only the full reload does (a new document).
    const reloaded = page.waitForEvent('load');
    await page.getByRole('link', { name: 'Get started' }).click();
    await reloaded;
    await page.waitForURL(site().at(OVERVIEW_PAGE));
    expect(failed.length).toBeGreaterThan(0);
    await expect(documentMark(page)).resolves.toBeUndefined();
    // The reloaded page comes from the server with its content, even without its scripts.
    await expect(heading(page).innerText()).resolves.not.toBe('Page Not Found');
  });

  test('a part of a page that fails to download shows an error box whose Retry loads it', async () => {
    const page = await site().newPage();
    const chunk = /\/assets\/js\/lazy-panel\.[0-9a-f]+\.js$/;
    await page.route(chunk, (route) => route.abort('connectionreset'));
    await openPage(page, site().at('test-pages/lazy'));
    const retry = page.getByRole('button', { name: 'Retry' });
    await retry.waitFor();
    const box = retry.locator('xpath=../..');
    await expect(box.innerText()).resolves.toContain('Loading chunk');
    await expect(box.evaluate((element) => getComputedStyle(element).backgroundColor)).resolves.toBe(
      'rgb(250, 56, 62)',
    );
    await page.unroute(chunk);
    await retry.click();
    await page.getByText('The panel loaded.').waitFor();
    await expect(retry.count()).resolves.toBe(0);
  });
});

describe('loading', () => {
  test('the navigation progress bar appears only after 200 ms', async () => {
    const page = await site().newPage();
    // Record, in the page's own clock, when a click happens and when the bar appears.
    await page.addInitScript(() => {
      const times = { click: 0, bar: 0 };
      (window as unknown as { times: typeof times }).times = times;
      document.addEventListener('click', () => (times.click = performance.now()), true);
      new MutationObserver(() => {
        if (!times.bar && document.getElementById('nprogress')) times.bar = performance.now();
      }).observe(document, { childList: true, subtree: true });
    });
    await openPage(page, site().url);
    // Hold the next page's code until the bar has shown, as a slow network would.
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route(ROUTE_CHUNK, async (route) => {
      await released;
      await route.continue();
    });
    await page.getByRole('link', { name: 'Get started' }).click();
    await page.locator('#nprogress').waitFor({ state: 'attached' });
    release();
    await page.waitForURL(site().at(OVERVIEW_PAGE));
    await page.locator('#nprogress').waitFor({ state: 'detached' });
    const times = await page.evaluate(
      () => (window as unknown as { times: { click: number; bar: number } }).times,
    );
    expect(times.click).toBeGreaterThan(0);
    expect(times.bar - times.click).toBeGreaterThanOrEqual(200);
  });

  test.each([
    { connection: { effectiveType: '4g', saveData: false }, prefetches: true },
    { connection: { effectiveType: '2g', saveData: false }, prefetches: false },
    { connection: { effectiveType: 'slow-2g', saveData: false }, prefetches: false },
    { connection: { effectiveType: '4g', saveData: true }, prefetches: false },
  ])(
    'pages are prefetched: $prefetches on $connection.effectiveType, saveData $connection.saveData',
    async ({ connection, prefetches }) => {
      const page = await site().newPage();
      await page.addInitScript((value) => {
        Object.defineProperty(navigator, 'connection', { value, configurable: true });
        // Count delivered visibility callbacks: the moments the site decides to prefetch links.
        const Observer = window.IntersectionObserver;
        const seen = { callbacks: 0 };
        (window as unknown as { seen: typeof seen }).seen = seen;
        window.IntersectionObserver = class extends Observer {
          constructor(callback: IntersectionObserverCallback, options?: IntersectionObserverInit) {
            super((entries, observer) => {
              callback(entries, observer);
              seen.callbacks += 1;
            }, options);
          }
        };
      }, connection);
      const scripts: Request[] = [];
      await openPage(page, site().url);
      page.on('request', (request) => {
        if (ROUTE_CHUNK.test(request.url())) scripts.push(request);
      });
      await page.waitForFunction(
        () => (window as unknown as { seen: { callbacks: number } }).seen.callbacks > 0,
      );
      // Hovering a link is the other trigger: it loads the page's code ahead of the click.
      await page.getByRole('link', { name: 'Get started' }).hover();
      // The links seen are prefetched one per idle moment, so the page is given two.
      await page.evaluate(
        () => new Promise((resolve) => requestIdleCallback(() => requestIdleCallback(resolve))),
      );
      const prefetchLinks = await page.locator('link[rel="prefetch"]').count();
      if (prefetches) {
        expect(prefetchLinks).toBeGreaterThan(0);
        expect(scripts.length).toBeGreaterThan(0);
      } else {
        expect(prefetchLinks).toBe(0);
        expect(scripts).toEqual([]);
      }
    },
  );
});
