/**
 * The documentation site as a reader meets it: every route, the navbar and footer, colour
 * modes, the mobile layout, the table of contents and the API reference. Screenshots of the
 * main pages go to test/browser/artifacts/.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import type { Page } from 'playwright-core';
import { fakeSearchService } from './fake-algolia.ts';
import { GUIDE_PAGE, SITE_ROUTES } from './routes.ts';
import { waitFor } from '../cluster/wait.ts';
import { ARTIFACTS, BASE_PATH, DESKTOP, MOBILE, openPage, SEARCH_BOX, SEARCH_MODE, useSite } from './site.ts';

const site = useSite();

const OPENAPI = join(
  resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'),
  'docs-site/static/openapi/engine-manager.swagger.json',
);

const theme = (page: Page) => page.locator('html').getAttribute('data-theme');

/**
 * The routes opened: every one in the hosted-search build; in the offline build, which differs
 * only in its search (the index it ships and the navbar's box), the pages that show it
 * differently: the home page, the search page, a guide and the API reference.
 */
const ROUTES =
  SEARCH_MODE === 'offline'
    ? SITE_ROUTES.filter((route) => ['', 'api/', 'search?q=engine', GUIDE_PAGE].includes(route))
    : SITE_ROUTES;

describe('routes', () => {
  test.each(ROUTES.map((route) => [route]))('/ai-engine-manager/%s shows its page', async (route) => {
    const page = await site().sharedPage();
    // The search page asks the search service at once.
    const service = route.startsWith('search') ? await fakeSearchService(page, []) : undefined;
    // React reports a page it could not take over as served (and so rendered again) here.
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    // The page's address, and the same with `.html` as links from elsewhere write it: a plain
    // static host must answer both with the page.
    const addresses =
      route.includes('?') || route === '' ? [route] : [route, `${route.replace(/\/$/, '')}.html`];
    for (const address of addresses) {
      const status = await openPage(page, site().at(address));
      expect({ address, status }).toEqual({ address, status: 200 });
      // The API reference renders in the browser, after the page has started.
      if (route === 'api/') await page.locator('.redocusaurus .menu-content').waitFor();
      await expect(page.title()).resolves.not.toMatch(/Page Not Found/);
      await expect(page.locator('h1').first().innerText()).resolves.not.toBe('Page Not Found');
      // One main landmark, where screen readers jump to the content (plugins' pages included).
      await expect(page.getByRole('main').count()).resolves.toBe(1);
    }
    // Its question is answered before the page closes (hosted search; the offline index asks nobody).
    if (service !== undefined && SEARCH_MODE === 'hosted')
      await waitFor(() => Promise.resolve(service.queries.length > 0 || undefined), {
        what: 'the search page to ask the search service',
      });
    expect(consoleErrors).toEqual([]);
  });
});

describe('navbar', () => {
  test.each([997, 1100, 1201, 1280, 1441])('at %i px nothing in it covers anything else', async (width) => {
    const page = await site().newPage({ viewport: { width, height: 800 } });
    await openPage(page, site().url);
    const overlaps = await page.evaluate(() => {
      const boxes = (selector: string) =>
        [...document.querySelectorAll(selector)].map((element) => ({
          name: (element as HTMLElement).innerText.trim() || element.className,
          box: element.getBoundingClientRect(),
        }));
      const left = boxes('.navbar__items:not(.navbar__items--right) > *');
      const right = boxes('.navbar__items--right > *');
      return left.flatMap((a) =>
        right
          .filter(
            ({ box }) => a.box.width > 0 && box.width > 0 && a.box.right > box.left && box.right > a.box.left,
          )
          .map((b) => `${a.name} under ${b.name}`),
      );
    });
    expect(overlaps).toEqual([]);
  });

  test('has the five product dropdowns, each listing external documentation', async () => {
    const page = await site().newPage();
    await openPage(page, site().url);
    const dropdowns = page.locator('.navbar__items:not(.navbar__items--right) > .dropdown');
    await expect(dropdowns.locator('> .navbar__link').allInnerTexts()).resolves.toEqual([
      'Platform',
      'Applications',
      'Models',
      'AI Engines',
      'GenAI',
    ]);
    for (const dropdown of await dropdowns.all()) {
      await dropdown.hover();
      const links = dropdown.locator('.dropdown__menu a');
      await links.first().waitFor();
      expect(await links.count()).toBeGreaterThan(1);
      for (const link of await links.all()) {
        await expect(link.isVisible()).resolves.toBe(true);
        await expect(link.getAttribute('href')).resolves.toMatch(/^https:\/\/docs\.h2o\.ai\//);
        await expect(link.getAttribute('target')).resolves.toBe('_blank');
        await expect(link.getAttribute('rel')).resolves.toContain('noopener');
      }
    }
    await expect(
      page.locator('.dropdown__menu a', { hasText: 'AI Engine Manager' }).getAttribute('href'),
    ).resolves.toBe('https://docs.h2o.ai/ai-engine-manager/');
  });

  test('has the search box, the colour mode switch, and the Learn More and Request a Demo buttons', async () => {
    const page = await site().newPage();
    await openPage(page, site().url);
    const right = page.locator('.navbar__items--right');
    await expect(right.locator(SEARCH_BOX).isVisible()).resolves.toBe(true);
    await expect(
      right.getByRole('button', { name: /Switch between dark and light mode/ }).isVisible(),
    ).resolves.toBe(true);
    const buttons = right.locator('a.button');
    // What they show; "Learn More" also tells screen readers where it leads.
    await expect(
      buttons.evaluateAll((links) => links.map((link) => link.firstChild?.textContent)),
    ).resolves.toEqual(['Learn More', 'Request a Demo']);
    await expect(
      right.getByRole('link', { name: 'Learn More about the H2O AI Cloud platform' }).isVisible(),
    ).resolves.toBe(true);
    await expect(
      buttons.evaluateAll((links) => links.map((link) => link.getAttribute('href'))),
    ).resolves.toEqual(['https://h2o.ai/platform/ai-cloud/', 'https://h2o.ai/demo/']);
    for (const button of await buttons.all()) {
      await expect(button.isVisible()).resolves.toBe(true);
      await expect(button.getAttribute('target')).resolves.toBe('_blank');
    }
  });
});

test('the home page leads to the quickstart, and each engine block to its guide', async () => {
  const page = await site().newPage();
  await openPage(page, site().url);
  const hero = page.locator('header .button');
  await expect(hero.allInnerTexts()).resolves.toEqual(['Quickstart', 'Get started', 'REST API reference']);
  await expect(hero.first().getAttribute('href')).resolves.toBe(`${BASE_PATH}get-started/quickstart`);
  for (const [title, guide] of [
    ['Driverless AI engines', 'user-guide/dai-engine/create-dai-engine/'],
    ['H2O engines', 'user-guide/h2o-engine/create-h2o-engine/'],
    ['Notebook engines', 'user-guide/notebook-engine/create-notebook-engine/'],
  ]) {
    await expect(page.getByRole('link', { name: title, exact: true }).getAttribute('href')).resolves.toBe(
      `${BASE_PATH}${guide}`,
    );
  }
});

test('the footer has the About us, Legal and Community link groups', async () => {
  const page = await site().newPage();
  await openPage(page, site().url);
  const columns = page.locator('footer .footer__col');
  await expect(columns.locator('.footer__title').allInnerTexts()).resolves.toEqual([
    'About us',
    'Legal',
    'Community',
  ]);
  for (const column of await columns.all()) {
    const hrefs = await column
      .locator('a')
      .evaluateAll((links) => links.map((link) => link.getAttribute('href')));
    expect(hrefs.length).toBeGreaterThan(1);
    for (const href of hrefs) expect(href).toMatch(/^https:\/\//);
  }
});

describe('colour mode', () => {
  test('is light by default, even when the system prefers dark', async () => {
    const page = await site().newPage({ colorScheme: 'dark' });
    await openPage(page, site().url);
    await expect(theme(page)).resolves.toBe('light');
    await expect(page.evaluate(() => getComputedStyle(document.body).color)).resolves.toBe('rgb(28, 30, 33)');
  });

  test('the switch turns it dark, and the choice stays across reloads and pages', async () => {
    const page = await site().newPage();
    await openPage(page, site().url);
    await page.getByRole('button', { name: /Switch between dark and light mode/ }).click();
    await expect(theme(page)).resolves.toBe('dark');
    // Light text on the dark background.
    await expect(page.evaluate(() => getComputedStyle(document.body).color)).resolves.toBe(
      'rgb(227, 227, 227)',
    );
    await openPage(page, site().url);
    await expect(theme(page)).resolves.toBe('dark');
    await openPage(page, site().at(GUIDE_PAGE));
    await expect(theme(page)).resolves.toBe('dark');
    await page.getByRole('button', { name: /Switch between dark and light mode/ }).click();
    await openPage(page, site().url);
    await expect(theme(page)).resolves.toBe('light');
  });
});

describe('layout', () => {
  test('at 996px wide the sidebar moves into a mobile menu', async () => {
    const page = await site().newPage({ viewport: MOBILE });
    await openPage(page, site().at(GUIDE_PAGE));
    await expect(page.locator('aside.theme-doc-sidebar-container').isVisible()).resolves.toBe(false);
    const toggle = page.getByRole('button', { name: 'Toggle navigation bar' });
    await toggle.click();
    const menu = page.locator('.navbar-sidebar');
    await menu.waitFor();
    // The mobile menu opens on the documentation's own sidebar, with this page in it.
    await expect(menu.locator('.menu__link--active').first().isVisible()).resolves.toBe(true);
    await expect(menu.getByRole('link', { name: 'REST API reference' }).isVisible()).resolves.toBe(true);
  });

  test('at 997px wide the sidebar shows beside the page, and it cannot be hidden', async () => {
    const page = await site().newPage({ viewport: { ...MOBILE, width: 997 } });
    await openPage(page, site().at(GUIDE_PAGE));
    await expect(page.locator('aside.theme-doc-sidebar-container').isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Toggle navigation bar' }).isVisible()).resolves.toBe(
      false,
    );
    await expect(page.getByRole('button', { name: 'Collapse sidebar' }).count()).resolves.toBe(0);
  });

  test('the table of contents lists second- and third-level headings only', async () => {
    const page = await site().newPage();
    await openPage(page, site().at('test-pages/docs/headings'));
    await expect(page.locator('.table-of-contents a').allInnerTexts()).resolves.toEqual([
      'Second level A',
      'Third level A',
      'Second level B',
      'Third level B',
    ]);
    // The same rule on a real guide page: the contents match its h2 and h3 headings.
    await openPage(page, site().at(GUIDE_PAGE));
    const headings = await page
      .locator('article :is(h2, h3)[id]')
      .evaluateAll((elements) => elements.map((element) => `#${element.id}`));
    await expect(
      page
        .locator('.table-of-contents a')
        .evaluateAll((links) => links.map((link) => link.getAttribute('href'))),
    ).resolves.toEqual(headings);
  });
});

test('api/ shows readers without JavaScript the name of the API and the OpenAPI document to download', async () => {
  const page = await site().newPage({ javaScriptEnabled: false });
  const response = await page.goto(site().at('api/'));
  expect(response?.status()).toBe(200);
  await expect(page.locator('main h1, .api-placeholder h1').first().innerText()).resolves.toBe(
    'AI Engine Manager API',
  );
  const link = page.getByRole('link', { name: 'downloaded' });
  await expect(link.getAttribute('href')).resolves.toBe(`${BASE_PATH}openapi/engine-manager.swagger.json`);
});

test('the API reference at api/ documents every service and operation of the OpenAPI document', async () => {
  const spec = JSON.parse(readFileSync(OPENAPI, 'utf8')) as {
    info: { title: string };
    tags: { name: string; 'x-displayName': string }[];
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  const operations = Object.values(spec.paths).flatMap((methods) => Object.values(methods));
  const page = await site().newPage();
  await openPage(page, site().at('api/'));
  const menu = page.locator('.redocusaurus .menu-content');
  await menu.waitFor();
  await expect(page.locator('.redocusaurus h1').first().innerText()).resolves.toContain(spec.info.title);
  // Services by the names of their resources, each operation by a short title, create first.
  for (const tag of spec.tags)
    await expect(menu.getByText(tag['x-displayName'], { exact: true }).count()).resolves.toBe(1);
  await expect(menu.getByText('Create a DAI engine profile', { exact: true }).count()).resolves.toBe(1);
  await expect(menu.getByText(/Requires actions\//).count()).resolves.toBe(0);
  // Redoc's h5 titles under an operation's h2 are announced one level down, not three.
  const subheadings = page.locator('.redocusaurus h5');
  expect(await subheadings.count()).toBeGreaterThan(0);
  await expect(
    subheadings.evaluateAll(
      (headings) => headings.filter((h) => h.getAttribute('aria-level') !== '3').length,
    ),
  ).resolves.toBe(0);
  await expect(page.locator('.redocusaurus [id*="/operation/"]').count()).resolves.toBe(operations.length);
  // The document itself can be downloaded from the page.
  const download = page.getByRole('link', { name: 'Download' }).first();
  const href = new URL((await download.getAttribute('href')) ?? '', page.url());
  expect(href.origin).toBe(new URL(site().url).origin);
  const response = await page.request.get(href.href);
  expect(response.status()).toBe(200);
  expect(((await response.json()) as { info: { title: string } }).info.title).toBe(spec.info.title);
});

describe('screenshots', () => {
  // The home page, the quickstart, a guide with tabs (and a folded program), a guide with a
  // diagram and tabs, and the API reference. The offline build differs from the hosted one only
  // in its search, which the navbar of every page holds: the home page shows it.
  const pages: Record<string, string> =
    SEARCH_MODE === 'offline'
      ? { home: '' }
      : {
          home: '',
          quickstart: 'get-started/quickstart',
          guide: GUIDE_PAGE,
          lifecycle: 'user-guide/dai-engine/manage-dai-engine/',
          api: 'api/',
        };
  const sizes = { desktop: DESKTOP, mobile: MOBILE };
  test.each(
    Object.entries(pages).flatMap(([name, path]) =>
      (['light', 'dark'] as const).flatMap((mode) =>
        Object.entries(sizes).map(([size, viewport]) => ({ name, path, mode, size, viewport })),
      ),
    ),
  )('$name in $mode mode at $size size', async ({ name, path, mode, size, viewport }) => {
    const page = await site().newPage({ viewport });
    await page.addInitScript((value) => {
      localStorage.setItem('theme', value);
    }, mode);
    await openPage(page, site().at(path));
    await expect(theme(page)).resolves.toBe(mode);
    await page.locator('h1').first().waitFor();
    if (name === 'api') await page.locator('.redocusaurus .menu-content').waitFor();
    // Whole pages, to show every diagram and tab; the API reference is too long for that.
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${mode}-${size}.png`), fullPage: name !== 'api' });
  });
});
