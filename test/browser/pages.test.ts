/**
 * What makes the pages more than text: the drawn diagrams (present, named for screen readers,
 * painted by the colour mode, inside the page), the Python / REST / kubectl tabs (the reader's
 * choice kept across pages and linkable, and by keyboard), code blocks (in the reader's colour
 * mode as served, in each theme's colours, and taken over without being built again), the
 * administrators' long programs folded away, and a content column wide enough for the programs.
 */
import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, test } from '@jest/globals';
import type { Page } from 'playwright-core';
import { DESKTOP, openPage, useSite } from './site.ts';

const site = useSite();

/** The pages with a drawn diagram, and the accessible name each diagram has. */
const DIAGRAMS: readonly [string, RegExp][] = [
  ['', /How AI Engine Manager is built/],
  ['get-started/what-is-ai-engine-manager', /How AI Engine Manager is built/],
  ['user-guide/dai-engine/manage-dai-engine/', /states of a Driverless AI engine/],
  ['user-guide/h2o-engine/manage-h2o-engine/', /states of an H2O engine/],
  ['user-guide/notebook-engine/manage-notebook-engine/', /states of a notebook engine/],
  ['administration/permissions', /checks a call passes/],
  ['administration/gpu-queues', /queue states of an engine/],
];

const CREATE_PAGES = ['dai', 'h2o', 'notebook'].map(
  (kind) => `user-guide/${kind}-engine/create-${kind}-engine/`,
);

/** A Prism theme's style for a token type (prism-react-renderer's PrismThemeEntry, the part used here). */
interface ThemeEntry {
  color?: string;
  fontStyle?: string;
}
/** A Prism theme (prism-react-renderer's PrismTheme, the part used here). */
interface PrismTheme {
  plain: ThemeEntry;
  styles: { types: string[]; style: ThemeEntry }[];
}

const SITE = join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'docs-site');

/**
 * The site's code themes for each mode (docs-site/src/code-theme.ts), loaded by Node in the
 * site's own project, where its packages are.
 */
async function codeThemes(): Promise<{ light: PrismTheme; dark: PrismTheme }> {
  const script =
    "const t = await import('./src/code-theme.ts');" +
    'console.log(JSON.stringify({ light: t.lightCodeTheme, dark: t.darkCodeTheme }));';
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', '--input-type=module', '-e', script],
    {
      cwd: SITE,
    },
  );
  return JSON.parse(stdout) as { light: PrismTheme; dark: PrismTheme };
}

/** `#rgb`, `#rrggbb` or `rgb(r, g, b)` as a browser reports a computed colour. */
function computedColour(colour: string): string {
  const hex = /^#([0-9a-f]+)$/i.exec(colour)?.[1];
  if (hex === undefined) return colour;
  const pairs = (hex.length === 3 ? hex.replace(/./g, '$&$&') : hex).match(/../g) ?? [];
  return `rgb(${pairs.map((pair) => parseInt(pair, 16)).join(', ')})`;
}

/**
 * The colour and font style prism-react-renderer gives a token of `types` under `theme`: the
 * theme's entries merged per type (a later entry for the same type wins), then the token's
 * types merged in order; what no type sets is the code's plain style.
 */
function prismStyle(theme: PrismTheme, types: string[]): { color: string; fontStyle: string } {
  const byType = new Map<string, ThemeEntry>([['plain', { color: theme.plain.color }]]);
  for (const { types: entryTypes, style } of theme.styles)
    for (const type of entryTypes) byType.set(type, { ...byType.get(type), ...style });
  const style = types.reduce<ThemeEntry>((merged, type) => ({ ...merged, ...byType.get(type) }), {});
  return {
    color: computedColour(style.color ?? theme.plain.color ?? ''),
    fontStyle: style.fontStyle ?? 'normal',
  };
}

/** The colours a diagram's text, boxes and arrows are painted with. */
function diagramColours(page: Page): Promise<{ text: string; box: string; arrow: string; body: string }> {
  return page.evaluate(() => {
    const colour = (selector: string, property: 'fill' | 'stroke') => {
      const element = document.querySelector(`figure svg ${selector}`);
      return element === null ? 'missing' : getComputedStyle(element)[property];
    };
    return {
      text: colour('.diagram-text', 'fill'),
      box: colour('.diagram-box', 'stroke'),
      arrow: colour('.diagram-arrow', 'fill'),
      body: getComputedStyle(document.body).color,
    };
  });
}

describe('diagrams', () => {
  test.each(DIAGRAMS)('/%s shows its diagram as a named image inside the page', async (path, name) => {
    const page = await site().sharedPage();
    await openPage(page, site().at(path));
    const drawing = page.locator('figure.diagram-figure svg');
    await expect(drawing.count()).resolves.toBe(1);
    await expect(page.getByRole('img', { name }).count()).resolves.toBe(1);
    // Drawn, not typed: boxes and arrows, and no text diagram left on the page.
    await expect(drawing.locator('.diagram-box').count()).resolves.toBeGreaterThan(2);
    await expect(drawing.locator('.diagram-arrow').count()).resolves.toBeGreaterThan(2);
    await expect(page.locator('code.language-text', { hasText: '--->' }).count()).resolves.toBe(0);
    // It fits the page: no wider than its column, and visible.
    const fits = await drawing.evaluate((svg) => {
      const box = svg.getBoundingClientRect();
      const column = (svg.closest('article, main, .col') ?? document.body).getBoundingClientRect();
      return (
        box.width > 200 && box.height > 100 && box.left >= column.left - 1 && box.right <= column.right + 1
      );
    });
    expect(fits).toBe(true);
  });

  test('a diagram is painted from the colour mode: its text is the page text colour in light and in dark mode', async () => {
    const page = await site().newPage();
    await openPage(page, site().at('user-guide/dai-engine/manage-dai-engine/'));
    const light = await diagramColours(page);
    expect(light.text).toBe(light.body);
    await page.getByRole('button', { name: /Switch between dark and light mode/ }).click();
    const dark = await diagramColours(page);
    expect(dark.text).toBe(dark.body);
    expect(dark.text).not.toBe(light.text);
    expect(dark.box).not.toBe(light.box);
    expect(dark.arrow).not.toBe(light.arrow);
  });
});

describe('Python, REST and kubectl tabs', () => {
  test.each(CREATE_PAGES)(
    '/%s shows how to create the engine in Python, with curl and with kubectl',
    async (path) => {
      const page = await site().newPage();
      await openPage(page, site().at(path));
      const tabs = page.getByRole('tab');
      await expect(tabs.allInnerTexts()).resolves.toEqual(['Python', 'REST (curl)', 'kubectl']);
      const visibleCode = () => page.locator('[role="tabpanel"]:not([hidden]) pre').first().innerText();
      await expect(visibleCode()).resolves.toContain('h2o_engine_manager');
      await page.getByRole('tab', { name: 'REST (curl)' }).click();
      await expect(visibleCode()).resolves.toMatch(/curl .*-X POST/);
      await page.getByRole('tab', { name: 'kubectl' }).click();
      await expect(visibleCode()).resolves.toContain('apiVersion: engine.h2o.ai/v1');
    },
  );

  test("the reader's choice holds on the next page, and ?client= links to a tab", async () => {
    const page = await site().newPage();
    await openPage(page, site().at(CREATE_PAGES[0] ?? ''));
    await page.getByRole('tab', { name: 'REST (curl)' }).click();
    await openPage(page, site().at(CREATE_PAGES[1] ?? ''));
    await expect(page.getByRole('tab', { selected: true }).innerText()).resolves.toBe('REST (curl)');
    const fresh = await site().newPage();
    await openPage(fresh, `${site().at(CREATE_PAGES[2] ?? '')}?client=kubectl`);
    await expect(fresh.getByRole('tab', { selected: true }).innerText()).resolves.toBe('kubectl');
  });

  test('the arrow keys move between the tabs and Enter opens one', async () => {
    const page = await site().newPage();
    await openPage(page, site().at(CREATE_PAGES[0] ?? ''));
    await page.getByRole('tab', { name: 'Python' }).focus();
    await page.keyboard.press('ArrowLeft');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('kubectl');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('REST (curl)');
    await page.keyboard.press('Enter');
    await expect(page.getByRole('tab', { selected: true }).innerText()).resolves.toBe('REST (curl)');
  });

  test('the page with the DAI engine states also pauses and resumes in all three ways', async () => {
    const page = await site().newPage();
    await openPage(page, site().at('user-guide/dai-engine/manage-dai-engine/'));
    await expect(page.getByRole('tab').allInnerTexts()).resolves.toEqual([
      'Python',
      'REST (curl)',
      'kubectl',
    ]);
    await page.getByRole('tab', { name: 'kubectl' }).click();
    await expect(page.locator('[role="tabpanel"]:not([hidden]) pre').innerText()).resolves.toContain(
      '"paused":true',
    );
  });
});

describe('code blocks', () => {
  const GUIDE = 'user-guide/dai-engine/create-dai-engine/';
  let themes: Promise<{ light: PrismTheme; dark: PrismTheme }>;
  beforeAll(() => {
    themes = codeThemes();
  });
  /** A page whose reader chose `mode` before. */
  const inMode = async (mode: string) => {
    const page = await site().newPage();
    await page.addInitScript((chosen) => {
      localStorage.setItem('theme', chosen);
    }, mode);
    return page;
  };
  /** The first code block's background, and the colour and style of its first keyword. */
  const codeColours = (page: Page) =>
    page.evaluate(() => {
      const pre = document.querySelector('article pre');
      const keyword = pre?.querySelector('.token.keyword');
      if (!pre || !keyword) throw new Error('no code block with a keyword on the page');
      const { color, fontStyle } = getComputedStyle(keyword);
      return { background: getComputedStyle(pre).backgroundColor, keyword: color, fontStyle };
    });

  test.each([
    // GitHub's colours in light mode, Dracula's in dark mode (docs-site/src/code-theme.ts).
    {
      mode: 'light',
      colours: { background: 'rgb(246, 248, 250)', keyword: 'rgb(0, 0, 159)', fontStyle: 'normal' },
    },
    {
      mode: 'dark',
      colours: { background: 'rgb(40, 42, 54)', keyword: 'rgb(189, 147, 249)', fontStyle: 'italic' },
    },
  ])(
    "are in the $mode colours as served, before the site's scripts run, and stay so",
    async ({ mode, colours }) => {
      const served = await inMode(mode);
      // Only the page's own inline script (which sets the colour mode) runs.
      await served.route('**/assets/js/**', (route) => route.abort());
      await served.goto(site().at(GUIDE));
      await expect(codeColours(served)).resolves.toEqual(colours);
      const started = await inMode(mode);
      await openPage(started, site().at(GUIDE));
      await expect(codeColours(started)).resolves.toEqual(colours);
    },
  );

  test('the switch recolours the code blocks of the open page', async () => {
    const page = await site().newPage();
    await openPage(page, site().at(GUIDE));
    const light = await codeColours(page);
    await page.getByRole('button', { name: /Switch between dark and light mode/ }).click();
    await expect(codeColours(page)).resolves.toEqual({
      background: 'rgb(40, 42, 54)',
      keyword: 'rgb(189, 147, 249)',
      fontStyle: 'italic',
    });
    expect(light.background).toBe('rgb(246, 248, 250)');
  });

  test.each(['light', 'dark'] as const)(
    'every token on a guide page has the colour and style the %s theme gives its types',
    async (mode) => {
      const theme = (await themes)[mode];
      const page = await inMode(mode);
      await openPage(page, site().at(GUIDE));
      const tokens = await page.evaluate(() =>
        [...document.querySelectorAll('article pre .token')].map((span) => {
          const { color, fontStyle } = getComputedStyle(span);
          return {
            types: [...span.classList].filter((name) => name !== 'token').join(' '),
            color,
            fontStyle,
          };
        }),
      );
      expect(tokens.length).toBeGreaterThan(100);
      const seen = [...new Map(tokens.map((token) => [token.types, token])).values()];
      expect(seen).toEqual(seen.map(({ types }) => ({ types, ...prismStyle(theme, types.split(' ')) })));
    },
  );

  test('are taken over as served when the page starts, not built again', async () => {
    const page = await site().newPage();
    await page.addInitScript(() => {
      document.addEventListener('DOMContentLoaded', () => {
        (window as unknown as { served: Element | null }).served = document.querySelector('article pre code');
      });
    });
    await openPage(page, site().at(GUIDE));
    // The copy buttons appear after the page's first effects, which is when the theme built
    // every code block again.
    await page.waitForFunction(
      () => document.querySelectorAll('article button[aria-label*="Copy"]').length > 0,
    );
    await expect(
      page.evaluate(
        () =>
          (window as unknown as { served: Element }).served === document.querySelector('article pre code'),
      ),
    ).resolves.toBe(true);
  });
});

describe("administrators' programs", () => {
  test.each(CREATE_PAGES)('/%s folds the administrator program until the reader opens it', async (path) => {
    const page = await site().newPage();
    await openPage(page, site().at(path));
    const fold = page.locator('article details').first();
    await expect(fold.locator('summary').innerText()).resolves.toMatch(
      /administrator's program, admin_\w+\.py \(\d+ lines\)/,
    );
    const program = fold.locator('pre').first();
    await expect(program.isVisible()).resolves.toBe(false);
    await fold.locator('summary').click();
    await program.waitFor({ state: 'visible' });
    await expect(program.innerText()).resolves.toContain('login_custom');
  });
});

describe('content column', () => {
  const wide = { width: 1440, height: 900 };

  test.each([
    ...CREATE_PAGES,
    'py/dai_examples',
    'administration/configuration',
    'user-guide/sandbox-engine/run-processes/',
    'user-guide/sandbox-engine/sandbox-files/',
    'administration/sandbox-engines',
  ])('at 1440 px, /%s shows every Python program without sideways scrolling', async (path) => {
    const page = await site().newPage({ viewport: wide });
    await openPage(page, site().at(path));
    // Open the folds, so that their programs are laid out too.
    for (const summary of await page.locator('article details > summary').all()) await summary.click();
    const scrolling = await page
      .locator('article pre.language-python')
      .evaluateAll((blocks) =>
        blocks
          .filter((block) => block.scrollWidth > block.clientWidth + 1)
          .map((block) => block.textContent.slice(0, 60)),
      );
    expect(scrolling).toEqual([]);
    const column = await page.locator('article').evaluate((article) => article.getBoundingClientRect().width);
    expect(column).toBeGreaterThanOrEqual(820);
  });

  test('at the default desktop size the table of contents still shows beside the page', async () => {
    const page = await site().newPage({ viewport: DESKTOP });
    await openPage(page, site().at(CREATE_PAGES[0] ?? ''));
    await expect(page.locator('.theme-doc-toc-desktop').isVisible()).resolves.toBe(true);
    const [article, toc] = await Promise.all(
      ['article', '.theme-doc-toc-desktop'].map((selector) =>
        page.locator(selector).evaluate((element) => element.getBoundingClientRect().toJSON() as DOMRect),
      ),
    );
    expect(article?.right).toBeLessThanOrEqual(toc?.left ?? 0);
  });
});
