/**
 * `make bench-docs`: Lighthouse scores of the built documentation site (docs-site/build): all
 * four categories for the main pages, on the mobile profile Lighthouse uses by default and on
 * its desktop profile, then the accessibility score of every page of the sitemap. The site is
 * served locally by the same static server the browser tests use, and audited with the
 * machine's Chromium; reports go to .run/bench/docs/.
 *
 * Environment: AIEM_DOCS_BENCH_PAGES (comma-separated paths under the base path, default the
 * home page, the quickstart and the DAI engine guides), AIEM_DOCS_BENCH_RUNS (runs per page and
 * profile, default 5; the median is reported), AIEM_DOCS_BENCH_ALL=0 (skip the
 * accessibility audit of every page), CHROMIUM_PATH (default /usr/bin/chromium).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CHROMIUM_PATH, QUIET_CHROMIUM_FLAGS } from './chromium.ts';
import { serveStaticSite } from './static-site.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BUILD = join(ROOT, 'docs-site', 'build');
const LIGHTHOUSE = join(ROOT, 'docs-site', 'node_modules', 'lighthouse', 'cli', 'index.js');
const REPORTS = join(ROOT, '.run', 'bench', 'docs');
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'] as const;
const CHROME_ARGS = ['--headless=new', ...QUIET_CHROMIUM_FLAGS];

interface LighthouseResult {
  categories: Record<string, { score: number | null }>;
}

/**
 * Runs per page and profile; the median is reported. On a shared machine one run's simulated
 * performance varies by several points (Lighthouse's own advice is the median of several).
 */
const RUNS = Number(process.env['AIEM_DOCS_BENCH_RUNS'] ?? '5');

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

const pages = (
  process.env['AIEM_DOCS_BENCH_PAGES'] ??
  ',get-started/quickstart,user-guide/dai-engine/create-dai-engine/,user-guide/dai-engine/manage-dai-engine/'
)
  .split(',')
  .map((page) => page.trim());

/**
 * Runs Lighthouse once on `url` and returns the scores of `categories`, 0–100. The JSON report
 * is `<report>.report.json`, with an HTML one beside it when `html`.
 */
async function lighthouse(
  url: string,
  report: string,
  categories: readonly string[],
  options: { html: boolean; flags: string[] },
): Promise<Record<string, number>> {
  const json = `${report}.report.json`;
  await promisify(execFile)(
    process.execPath,
    [
      LIGHTHOUSE,
      url,
      `--only-categories=${categories.join(',')}`,
      '--output=json',
      // With two outputs Lighthouse names them <path>.report.<format>; with one, <path> itself.
      ...(options.html ? ['--output=html', `--output-path=${report}`] : [`--output-path=${json}`]),
      '--quiet',
      ...options.flags,
    ],
    { env: { ...process.env, CHROME_PATH: CHROMIUM_PATH } },
  );
  const result = JSON.parse(readFileSync(json, 'utf8')) as LighthouseResult;
  return Object.fromEntries(
    categories.map((category) => [category, Math.round((result.categories[category]?.score ?? 0) * 100)]),
  );
}

/** Runs Lighthouse once on a main page, all categories, on the mobile or the desktop profile. */
const audit = (url: string, name: string, desktop: boolean): Promise<Record<string, number>> =>
  lighthouse(url, join(REPORTS, name), CATEGORIES, {
    html: true,
    flags: [`--chrome-flags=${CHROME_ARGS.join(' ')}`, ...(desktop ? ['--preset=desktop'] : [])],
  });

/** RUNS audits of one page, one after another (in parallel they would slow each other). */
async function auditRuns(url: string, name: string, desktop: boolean): Promise<Record<string, number>[]> {
  const runs: Record<string, number>[] = [];
  for (let run = 0; run < RUNS; run++) runs.push(await audit(url, name, desktop));
  return runs;
}

/** Every page the sitemap lists, as paths under the base path. */
function sitemapPages(): string[] {
  const sitemap = readFileSync(join(BUILD, 'sitemap.xml'), 'utf8');
  return [...sitemap.matchAll(/<loc>([^<]+)<\/loc>/g)].map(([, loc]) =>
    new URL(loc ?? '').pathname.replace(/^\/ai-engine-manager\//, ''),
  );
}

/**
 * The accessibility score of every page; the pages below 100 are listed. One Chromium, started
 * here with a debugging port, serves every audit (a Chromium per page would take half an hour),
 * and nothing is throttled, since accessibility does not depend on speed.
 */
async function accessibilityOfEveryPage(siteUrl: string): Promise<{ pages: number; below: string[] }> {
  const port = 9333;
  const chromium = spawn(CHROMIUM_PATH, [...CHROME_ARGS, `--remote-debugging-port=${port}`, 'about:blank'], {
    stdio: 'ignore',
  });
  const flags = [
    `--port=${port}`,
    '--throttling-method=provided',
    // A page is whole once it has loaded; waiting for the network to go quiet (the search
    // index, prefetches) took ten seconds a page and changes nothing here.
    '--max-wait-for-load=5000',
    '--disable-full-page-screenshot',
  ];
  const all = sitemapPages();
  const below: string[] = [];
  try {
    for (const [index, page] of all.entries()) {
      const { accessibility: score } = await lighthouse(
        new URL(page, siteUrl).href,
        join(REPORTS, `every-page-${index}`),
        ['accessibility'],
        { html: false, flags },
      );
      if (score !== 100) below.push(`/${page} ${score}`);
    }
  } finally {
    chromium.kill();
  }
  return { pages: all.length, below };
}

if (!existsSync(join(BUILD, 'index.html'))) throw new Error(`${BUILD} is missing: run 'make docs'`);
mkdirSync(REPORTS, { recursive: true });
const site = await serveStaticSite({ root: BUILD, mount: '/ai-engine-manager/' });
const rows: { page: string; profile: string; scores: Record<string, number> }[] = [];
/** The accessibility audit of every page: how many, and those below 100. */
let everyPage: { pages: number; below: string[] } | undefined;
try {
  for (const page of pages) {
    for (const profile of ['mobile', 'desktop']) {
      const name = `${page.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '') || 'home'}-${profile}`;
      const runs = await auditRuns(new URL(page, site.url).href, name, profile === 'desktop');
      const scores = Object.fromEntries(
        CATEGORIES.map((category) => [category, median(runs.map((scores) => scores[category] ?? 0))]),
      );
      rows.push({ page: `/${page}`, profile, scores });
      const performances = runs.map((scores) => scores['performance']).join(', ');
      console.log(
        `${`/ai-engine-manager/${page}`.padEnd(52)} ${profile.padEnd(8)} ${CATEGORIES.map(
          (category) => `${category} ${scores[category]}`,
        ).join('  ')}  (performance of each run: ${performances})`,
      );
    }
  }
  if (process.env['AIEM_DOCS_BENCH_ALL'] !== '0') {
    const { pages: count, below } = await accessibilityOfEveryPage(site.url);
    console.log(
      below.length === 0
        ? `Accessibility of every page (${count}): 100`
        : `Accessibility below 100 on ${below.length} of ${count} pages:\n  ${below.join('\n  ')}`,
    );
    everyPage = { pages: count, below };
  }
} finally {
  await site.close();
}
writeFileSync(join(REPORTS, 'summary.json'), `${JSON.stringify({ rows, everyPage }, null, 2)}\n`);
console.log(`Reports: ${REPORTS}`);
