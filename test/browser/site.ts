/**
 * Browser test harness for the documentation site: the test build (`make docs-test-build`)
 * served by a plain static server on 127.0.0.1, and the machine's Chromium driven headless by
 * playwright-core. Every page is guarded: a request to any host but 127.0.0.1 cannot resolve
 * and is recorded, and the test fails on it, unless a test's fake answered it (the search API);
 * an uncaught error in a page fails the test too.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, expect, jest } from '@jest/globals';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Page,
  type Request,
} from 'playwright-core';
import { CHROMIUM_PATH, QUIET_CHROMIUM_FLAGS } from '../../scripts/chromium.ts';
import { serveStaticSite, type StaticSite } from '../../scripts/static-site.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The site's base path. */
export const BASE_PATH = '/ai-engine-manager/';
/**
 * Which search the site under test has: `hosted` (Algolia DocSearch with test keys, its service
 * faked by test/browser/fake-algolia.ts) or `offline` (the index built with the site). The suites
 * that do not depend on it run in both (test/browser/offline/ imports them in offline mode).
 */
export const SEARCH_MODE: 'hosted' | 'offline' =
  process.env['AIEM_DOCS_SEARCH_MODE'] === 'offline' ? 'offline' : 'hosted';
/** The test build of that search mode, plus the test-only pages (`make docs-test-build`). */
export const TEST_BUILD =
  process.env['AIEM_DOCS_TEST_BUILD'] ??
  join(ROOT, 'docs-site', SEARCH_MODE === 'offline' ? 'build-test-offline' : 'build-test');
/** The navbar's search box of the mode. */
export const SEARCH_BOX = SEARCH_MODE === 'offline' ? '.navbar__search-input' : '.DocSearch-Button';
/** Screenshots land here (git-ignored); the offline mode's in a folder of their own. */
export const ARTIFACTS = join(
  ROOT,
  'test',
  'browser',
  'artifacts',
  SEARCH_MODE === 'offline' ? 'offline' : '',
);
const CHROMIUM_ARGS = [
  // Names other than 127.0.0.1 do not resolve: nothing leaves the machine, and the HTTP cache
  // stays on (Playwright's request routing would turn it off for every page).
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
  ...QUIET_CHROMIUM_FLAGS,
];

/** Requests a test's fake answered (the search service); every other outside request fails it. */
export const fakedRequests = new WeakSet<Request>();

/** Desktop and the widest mobile layout (the breakpoint is 996px inclusive). */
export const DESKTOP = { width: 1280, height: 800 };
export const MOBILE = { width: 996, height: 800 };

/** What a test file gets from useSite(). */
export interface Site {
  /** The site's address, `http://127.0.0.1:<port>/ai-engine-manager/`. */
  url: string;
  /** Absolute address of a path relative to the site root (`'api/'`). */
  at(path: string): string;
  /** A page in a fresh browser context (its own storage), guarded against outside requests. */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  /**
   * A page in a browser context shared by the test file, so that its HTTP cache spares later
   * pages the download and compilation of the site's scripts; guarded the same way.
   */
  sharedPage(): Promise<Page>;
  /** Lets this test's pages throw uncaught errors matching `pattern` (a provoked failure). */
  tolerateUncaught(pattern: RegExp): void;
  /** Serves the same build at another mount path, e.g. `/` for the wrong-baseUrl case. */
  serveAt(mount: string): Promise<StaticSite>;
}

/** Loads a page and waits until React has taken it over, so that it reacts to input. */
export async function openPage(page: Page, url: string): Promise<number | undefined> {
  const response = await page.goto(url);
  await page.locator('html[data-has-hydrated="true"]').waitFor({ state: 'attached' });
  return response?.status();
}

/**
 * Starts the server and Chromium for the test file, and after each test closes its contexts and
 * fails it if any page tried to reach another host.
 */
export function useSite(): () => Site {
  // A page load with hydration takes about a second; the API reference several.
  jest.setTimeout(30_000);
  let site: Site | undefined;
  let server: StaticSite | undefined;
  const extraServers: StaticSite[] = [];
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  let sharedContext: BrowserContext | undefined;
  const pages: Page[] = [];
  const outside: Request[] = [];
  const pageErrors: string[] = [];
  const tolerated: RegExp[] = [];

  beforeAll(async () => {
    if (!existsSync(join(TEST_BUILD, 'index.html')))
      throw new Error(`${TEST_BUILD} is missing: build it with 'make docs-test-build'`);
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await serveStaticSite({ root: TEST_BUILD, mount: BASE_PATH });
    // Playwright starts Chromium on a fresh, temporary profile folder of its own.
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
    const origin = server.url;
    const guard = async (context: BrowserContext): Promise<Page> => {
      context.on('request', (request) => {
        const url = new URL(request.url());
        if (/^https?:$/.test(url.protocol) && url.hostname !== '127.0.0.1') outside.push(request);
      });
      const page = await context.newPage();
      page.on('pageerror', (error) => pageErrors.push(`${page.url()}: ${String(error)}`));
      return page;
    };
    site = {
      url: origin,
      at: (path) => new URL(path, origin).href,
      newPage: async (options) => {
        if (!browser) throw new Error('Chromium is not running');
        const context = await browser.newContext({ viewport: DESKTOP, ...options });
        contexts.push(context);
        return guard(context);
      },
      sharedPage: async () => {
        if (!browser) throw new Error('Chromium is not running');
        sharedContext ??= await browser.newContext({ viewport: DESKTOP });
        const page = await guard(sharedContext);
        pages.push(page);
        return page;
      },
      tolerateUncaught: (pattern) => {
        tolerated.push(pattern);
      },
      serveAt: async (mount) => {
        const extra = await serveStaticSite({ root: TEST_BUILD, mount });
        extraServers.push(extra);
        return extra;
      },
    };
  });

  afterEach(async () => {
    await Promise.all([
      ...contexts.splice(0).map((context) => context.close()),
      ...pages.splice(0).map((page) => page.close()),
    ]);
    const leaked = outside
      .splice(0)
      .filter((request) => !fakedRequests.has(request))
      // The site's content security policy stops these in the page, before any network access.
      .filter((request) => request.failure()?.errorText !== 'csp')
      .map((request) => request.url());
    const uncaught = pageErrors
      .splice(0)
      .filter((error) => !tolerated.some((pattern) => pattern.test(error)));
    tolerated.splice(0);
    expect({ leaked, uncaught }).toEqual({ leaked: [], uncaught: [] });
  });

  afterAll(async () => {
    await sharedContext?.close();
    await browser?.close();
    await Promise.all([server?.close(), ...extraServers.map((extra) => extra.close())]);
  });

  return () => {
    if (!site) throw new Error('useSite() is used before its beforeAll hook ran');
    return site;
  };
}
