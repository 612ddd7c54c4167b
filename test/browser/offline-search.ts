/**
 * The offline search's tests (run by offline/search.test.ts, against the build without hosted
 * search): the navbar box with the index built with the site.
 */
import { describe, expect, test } from '@jest/globals';
import type { Page } from 'playwright-core';
import { OVERVIEW_PAGE } from './routes.ts';
import { BASE_PATH, openPage, SEARCH_BOX, useSite } from './site.ts';

const site = useSite();

const input = (page: Page) => page.locator(SEARCH_BOX);
const focused = (page: Page): Promise<boolean> =>
  input(page).evaluate((element) => element === document.activeElement);
/** The suggestions under the box. */
const suggestions = (page: Page) => page.locator('.navbar__search [role="listbox"] [role="option"]');

describe('offline search box', () => {
  test('/, Ctrl+K and Cmd+K focus it; "/" typed in the box stays text', async () => {
    // A page of its own for each shortcut: the box may also hear a shortcut after its key (the
    // search plugin's own handler), which would focus it again after a blur on a shared page.
    for (const shortcut of ['/', 'Control+k', 'Meta+k']) {
      const page = await site().newPage();
      await openPage(page, site().url);
      await expect(focused(page)).resolves.toBe(false);
      await page.keyboard.press(shortcut);
      await page.waitForFunction(
        (box) => document.activeElement === document.querySelector(box),
        SEARCH_BOX,
        {
          timeout: 5_000,
        },
      );
      if (shortcut !== '/') continue;
      await input(page).fill('');
      await page.keyboard.type('a/b');
      await expect(input(page).inputValue()).resolves.toBe('a/b');
    }
  });

  test('lists the matching pages, and choosing one opens it in place', async () => {
    const page = await site().newPage();
    await openPage(page, site().url);
    await page.evaluate(() => {
      (window as unknown as { marker: string }).marker = 'same document';
    });
    await input(page).fill('What is AI Engine Manager');
    const overview = suggestions(page).filter({ hasText: 'What is AI Engine Manager' }).first();
    await overview.waitFor();
    await overview.click();
    await page.waitForURL((url) => url.pathname === `${BASE_PATH}${OVERVIEW_PAGE}`);
    await expect(page.locator('article h1').innerText()).resolves.toBe('What is AI Engine Manager');
    await expect(page.evaluate(() => (window as unknown as { marker?: string }).marker)).resolves.toBe(
      'same document',
    );
  });

  test('says "No results for" with the query when nothing matches', async () => {
    const page = await site().newPage();
    await openPage(page, site().url);
    await input(page).fill('zzzqqq');
    const empty = page.locator('.navbar__search [role="listbox"] [class*="noResults_"]');
    await empty.waitFor();
    await expect(empty.innerText()).resolves.toBe('No results for "zzzqqq"');
    // Another query that finds nothing names itself, not the first one.
    await input(page).fill('qqqzzz');
    await page.waitForFunction(() =>
      document.querySelector('.navbar__search [class*="noResults_"]')?.textContent.includes('qqqzzz'),
    );
    await expect(empty.innerText()).resolves.toBe('No results for "qqqzzz"');
  });

  test('shows snippets in the words of the page, without the pipes of tables or other markup', async () => {
    const page = await site().newPage();
    await openPage(page, site().url);
    // Words that appear in the pages' tables (profile settings, states, permissions).
    for (const query of ['cumulative maximum', 'STATE_PAUSED', 'LIST_ASSIGNED']) {
      await input(page).fill(query);
      await suggestions(page).first().waitFor();
      const texts = await suggestions(page).allInnerTexts();
      expect(texts.length).toBeGreaterThan(0);
      expect(texts.filter((text) => /\|\s*-{3}|(^|\s)\|(\s|$)|\*\*|`/.test(text))).toEqual([]);
    }
  });
});

describe('offline search page', () => {
  test('lists the results for the q query parameter', async () => {
    const page = await site().newPage();
    await openPage(page, site().at('search?q=engine%20manager'));
    await expect(page.locator('h1').innerText()).resolves.toBe('Search results for "engine manager"');
    const result = page.locator('article h2 a', { hasText: 'What is AI Engine Manager' }).first();
    await result.waitFor();
    await expect(result.getAttribute('href')).resolves.toContain(`${BASE_PATH}${OVERVIEW_PAGE}`);
  });
});
