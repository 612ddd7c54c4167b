/**
 * Search on the documentation site: the hosted-search dialog (DocSearch) and the search page,
 * against a faked search service (test/browser/fake-algolia.ts).
 */
import { describe, expect, test } from '@jest/globals';
import type { Page } from 'playwright-core';
import { fakeSearchService, type SearchRecord } from './fake-algolia.ts';
import { OVERVIEW_PAGE } from './routes.ts';
import { BASE_PATH, openPage, useSite } from './site.ts';

const site = useSite();

const PUBLISHED = `https://docs.h2o.ai${BASE_PATH}`;
const RECORDS: SearchRecord[] = [
  {
    url: `${PUBLISHED}${OVERVIEW_PAGE}`,
    hierarchy: { lvl0: 'Get started', lvl1: 'What is AI Engine Manager' },
  },
  {
    url: `${PUBLISHED}api/`,
    hierarchy: { lvl0: 'Reference', lvl1: 'AI Engine Manager API', lvl2: 'DAIEngineService' },
  },
];

const dialog = (page: Page) => page.locator('.DocSearch-Modal');
const searchInput = (page: Page) => page.locator('.DocSearch-Input');

async function openDialogWithShortcut(page: Page): Promise<void> {
  await page.keyboard.press('Control+k');
  await dialog(page).waitFor();
}

describe('search dialog', () => {
  test('Ctrl+K, Cmd+K and / open it; Escape closes it', async () => {
    const page = await site().newPage();
    await fakeSearchService(page, RECORDS);
    await openPage(page, site().url);
    for (const shortcut of ['Control+k', 'Meta+k', '/']) {
      // After Escape the focus is back on the search button, where "/" would type into it.
      await page.evaluate(() => {
        (document.activeElement as HTMLElement | null)?.blur();
      });
      await page.keyboard.press(shortcut);
      await dialog(page).waitFor();
      await expect(searchInput(page).evaluate((input) => input === document.activeElement)).resolves.toBe(
        true,
      );
      await page.keyboard.press('Escape');
      await dialog(page).waitFor({ state: 'detached' });
    }
  });

  test('lists the matching pages, and choosing one opens it in place', async () => {
    const page = await site().newPage();
    const service = await fakeSearchService(page, RECORDS);
    await openPage(page, site().url);
    await page.evaluate(() => {
      (window as unknown as { marker: string }).marker = 'same document';
    });
    await openDialogWithShortcut(page);
    await searchInput(page).fill('engine manager');
    const hits = page.locator('.DocSearch-Hit');
    await hits.first().waitFor();
    await expect(hits.allInnerTexts()).resolves.toEqual([
      expect.stringContaining('What is AI Engine Manager'),
      expect.stringContaining('DAIEngineService'),
    ]);
    expect(service.queries).toContain('engine manager');
    await hits.first().click();
    await page.waitForURL(site().at(OVERVIEW_PAGE));
    await expect(page.locator('article h1').innerText()).resolves.not.toBe('Page Not Found');
    // The hit opened by client-side navigation: the page was not reloaded.
    await expect(page.evaluate(() => (window as unknown as { marker?: string }).marker)).resolves.toBe(
      'same document',
    );
  });

  test('says "No results for" when nothing matches', async () => {
    const page = await site().newPage();
    await fakeSearchService(page, RECORDS);
    await openPage(page, site().url);
    await openDialogWithShortcut(page);
    await searchInput(page).fill('zzzqqq');
    const noResults = page.locator('.DocSearch-NoResults .DocSearch-Title');
    await noResults.waitFor();
    await expect(noResults.innerText()).resolves.toBe('No results for "zzzqqq"');
  });

  test('shows "Unable to fetch results" while the service is unreachable, and results once it is back', async () => {
    const page = await site().newPage();
    const service = await fakeSearchService(page, RECORDS);
    service.reachable = false;
    // The search library reports the failed request as an unhandled rejection as well.
    site().tolerateUncaught(/RetryError: Unreachable hosts/);
    await openPage(page, site().url);
    await openDialogWithShortcut(page);
    await searchInput(page).fill('engine');
    const error = page.locator('.DocSearch-ErrorScreen');
    await error.waitFor();
    await expect(error.locator('.DocSearch-Title').innerText()).resolves.toBe('Unable to fetch results');
    await expect(error.locator('.DocSearch-Help').innerText()).resolves.toBe(
      'You might want to check your network connection.',
    );
    // The dialog's own "No results" screen must not be visible behind it.
    await expect(page.locator('.DocSearch-NoResults').isVisible()).resolves.toBe(false);

    service.reachable = true;
    await searchInput(page).fill('engine manager');
    await page.locator('.DocSearch-Hit').first().waitFor();
    await expect(error.count()).resolves.toBe(0);

    // A new failure, then a fresh dialog: it starts clean, without the old error.
    service.reachable = false;
    await searchInput(page).fill('engines');
    await error.waitFor();
    await page.keyboard.press('Escape');
    await dialog(page).waitFor({ state: 'detached' });
    await openDialogWithShortcut(page);
    await expect(error.count()).resolves.toBe(0);
  });
});

describe('search page', () => {
  test('lists the results for the q query parameter', async () => {
    const page = await site().newPage();
    await fakeSearchService(page, RECORDS);
    await openPage(page, site().at('search?q=engine%20manager'));
    await expect(page.locator('h1').innerText()).resolves.toBe('Search results for "engine manager"');
    const result = page.locator('article h2 a', { hasText: 'What is AI Engine Manager' });
    await result.waitFor();
    await expect(result.getAttribute('href')).resolves.toBe(`${BASE_PATH}${OVERVIEW_PAGE}`);
  });
});
