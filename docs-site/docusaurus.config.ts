/**
 * The AI Engine Manager documentation site. It builds offline: no external fonts, scripts or
 * images, and every internal link is checked at build time.
 *
 * Environment:
 * - ALGOLIA_APP_ID, ALGOLIA_API_KEY, ALGOLIA_INDEX_NAME: the hosted search (DocSearch). Without
 *   them the site ships its own search index instead, for clusters without internet access.
 * - AIEM_DOCS_TEST_PAGES=1: adds the pages the browser tests use to provoke a crash and a failed
 *   chunk load (never set for a published build).
 */
import { readFileSync } from 'node:fs';
import type { Config, PluginConfig } from '@docusaurus/types';
import type * as Preset from '@docusaurus/preset-classic';
import { codeColourCss, codeTheme } from './src/code-theme';
import { footerLinks, navbarItems } from './src/site-links';

/** The product release these pages describe: the root package's version. */
const productVersion = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

const BASE_URL = '/ai-engine-manager/';

/** The hosted search, when all three settings are given; half a configuration is a mistake. */
function algoliaConfig(): Preset.ThemeConfig['algolia'] | undefined {
  const settings = {
    appId: process.env['ALGOLIA_APP_ID'] ?? '',
    apiKey: process.env['ALGOLIA_API_KEY'] ?? '',
    indexName: process.env['ALGOLIA_INDEX_NAME'] ?? '',
  };
  const given = Object.values(settings).filter((value) => value !== '').length;
  if (given === 0) return undefined;
  if (given < 3)
    throw new Error('Set all of ALGOLIA_APP_ID, ALGOLIA_API_KEY and ALGOLIA_INDEX_NAME, or none');
  // One index may hold several products' pages; facets by version or language would hide them.
  return { ...settings, contextualSearch: false };
}

const algolia = algoliaConfig();

/** Without the hosted search, a search index built with the site serves the same box offline. */
const localSearch: PluginConfig = [
  '@easyops-cn/docusaurus-search-local',
  {
    hashed: true,
    indexBlog: false,
    docsRouteBasePath: '/',
    language: ['en'],
    highlightSearchTermsOnTargetPage: false,
  },
];

/** The pages the browser tests provoke failures on, and a page with every heading level. */
const testPlugins: PluginConfig[] =
  process.env['AIEM_DOCS_TEST_PAGES'] === '1'
    ? [
        './src/plugins/test-pages.ts',
        [
          'content-docs',
          {
            id: 'test-docs',
            path: 'src/test-pages/docs',
            routeBasePath: 'test-pages/docs',
            sidebarPath: false,
          },
        ],
      ]
    : [];

const REDOC_THEME = 'theme-redoc';

const config: Config = {
  title: 'AI Engine Manager',
  tagline: 'Driverless AI engines, H2O clusters and notebook engines on Kubernetes, on demand',
  favicon: 'img/favicon.svg',
  url: 'https://docs.h2o.ai',
  baseUrl: BASE_URL,
  trailingSlash: undefined,
  onBrokenLinks: 'throw',
  onBrokenAnchors: 'throw',
  markdown: { hooks: { onBrokenMarkdownLinks: 'throw' } },
  i18n: { defaultLocale: 'en', locales: ['en'] },
  customFields: { productVersion },
  clientModules: ['./src/client/html-endings.ts', './src/client/idle-prefetch.ts'],
  // Rspack and SWC instead of webpack and Babel: the build is several times faster. Faster's
  // parallel page rendering needs the one v4 flag below; the other v4 flags stay off.
  future: {
    faster: {
      swcJsLoader: true,
      swcJsMinimizer: true,
      swcHtmlMinimizer: true,
      lightningCssMinimizer: true,
      mdxCrossCompilerCache: true,
      rspackBundler: true,
      // Warning: Rspack's cache in node_modules/.cache outlived changes to the site's own
      // plugins and served stale modules; every build starts clean instead.
      rspackPersistentCache: false,
      ssgWorkerThreads: true,
      gitEagerVcs: true,
    },
    v4: { removeLegacyPostBuildHeadAttribute: true },
  },
  headTags: [
    {
      // Pages may only show images the site ships; a third-party image would be a request to
      // the internet from every reader (and fails on air-gapped clusters).
      tagName: 'meta',
      attributes: { 'http-equiv': 'Content-Security-Policy', content: "img-src 'self' data:" },
    },
    // Each colour mode's code colours (see src/code-theme.ts), in the page itself: the served
    // code blocks are coloured for the reader's mode before any style sheet or script arrives.
    { tagName: 'style', attributes: {}, innerHTML: codeColourCss },
  ],
  presets: [
    [
      'classic',
      {
        docs: {
          routeBasePath: '/',
          sidebarPath: './sidebars.ts',
          versions: { current: { label: 'Next', badge: false } },
        },
        blog: false,
        pages: {},
        theme: { customCss: './src/css/custom.css' },
        sitemap: { ignorePatterns: [`${BASE_URL}test-pages/**`] },
      } satisfies Preset.Options,
    ],
  ],
  themes: [
    // Redoc, as redocusaurus sets it up (its plugin is added below), through the wrapper in
    // src/plugins/api-reference-theme.ts.
    ['docusaurus-theme-redoc', { id: REDOC_THEME, primaryColor: '#1a5fb4' }],
    ...(algolia ? [] : [localSearch]),
  ],
  plugins: [
    './src/plugins/html-endings.ts',
    './src/plugins/prism-out-of-main.ts',
    [
      './src/plugins/api-reference.ts',
      {
        id: 'engine-manager',
        themeId: REDOC_THEME,
        spec: 'static/openapi/engine-manager.swagger.json',
        route: '/api/',
        // "Download" offers the generated document itself, from this site: the default link
        // is absolute on the published host, which readers of a local or air-gapped copy
        // cannot reach.
        url: `${BASE_URL}openapi/engine-manager.swagger.json`,
        normalizeUrl: false,
      },
    ],
    ...testPlugins,
  ],
  themeConfig: {
    image: 'img/logo.svg',
    colorMode: { defaultMode: 'light', disableSwitch: false, respectPrefersColorScheme: false },
    docs: { sidebar: { hideable: false, autoCollapseCategories: false } },
    tableOfContents: { minHeadingLevel: 2, maxHeadingLevel: 3 },
    navbar: {
      title: 'AI Engine Manager',
      logo: { alt: 'AI Engine Manager', src: 'img/logo.svg', width: 32, height: 32 },
      hideOnScroll: false,
      items: navbarItems,
    },
    footer: {
      style: 'dark',
      links: footerLinks,
      copyright: `AI Engine Manager ${productVersion} · Apache License 2.0`,
    },
    // Warning: no `additionalLanguages` (bash and the like render as plain text). Redoc's theme
    // makes the bundler hand every Prism language file the `prismjs` package instead of the
    // code blocks' Prism, so an extra language made the server and the browser highlight
    // code blocks differently, and React rendered every page with code a second time.
    prism: {
      theme: codeTheme,
      darkTheme: codeTheme,
    },
    ...(algolia && { algolia }),
  } satisfies Preset.ThemeConfig,
};

export default config;
