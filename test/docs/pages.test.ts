/**
 * The documentation pages' Python is code, not copies: no page holds a Python snippet of its own,
 * every included file exists, and every example program is shown on some page (the programs run
 * in test/compat/docs-examples.test.ts). And every content route of the product specification
 * has its page.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLIENT_SECTIONS } from '../browser/routes.ts';

const SITE = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs-site');
const DOCS = join(SITE, 'docs');
const EXAMPLES = join(SITE, 'examples');

function files(dir: string, pattern: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path, pattern);
    return pattern.test(entry.name) ? [path] : [];
  });
}

const pages = files(DOCS, /\.mdx?$/).map((path) => ({
  page: relative(DOCS, path),
  text: readFileSync(path, 'utf8'),
}));

/** The files a page includes with `import X from '!!raw-loader!@site/<path>'`. */
function includes(text: string): string[] {
  return [...text.matchAll(/from '!!raw-loader!@site\/([^']+)'/g)].map((m) => m[1] ?? '');
}

test('no page writes Python inline: Python on the site comes from files under docs-site/examples', () => {
  const inline = pages
    .filter((p) => /^\s*```\s*(python|py|python3|pycon)\b/m.test(p.text))
    .map((p) => p.page);
  expect(inline).toEqual([]);
});

test('every file a page includes exists, and Python comes from docs-site/examples', () => {
  const missing = pages.flatMap((p) => includes(p.text).filter((f) => !existsSync(join(SITE, f))));
  expect(missing).toEqual([]);
  const elsewhere = pages.flatMap((p) =>
    includes(p.text).filter((f) => f.endsWith('.py') && !f.startsWith('examples/')),
  );
  expect(elsewhere).toEqual([]);
});

test('every example program is shown on a page, and pages show Python with the python language', () => {
  const shown = new Set(pages.flatMap((p) => includes(p.text)));
  const programs = files(EXAMPLES, /\.py$/).map((f) => relative(SITE, f));
  expect(programs.filter((f) => !shown.has(f))).toEqual([]);
  for (const { page, text } of pages) {
    for (const block of text.matchAll(/<CodeBlock language="(\w+)" title="([^"]+)">/g)) {
      if (block[2]?.endsWith('.py')) expect(`${page}: ${block[1] ?? ''}`).toBe(`${page}: python`);
    }
  }
});

test('every content route of the specification has its page', () => {
  const routes = [
    'get-started/what-is-ai-engine-manager.md',
    'get-started/access-ai-engines/index.mdx',
    'release-notes.md',
    'user-guide/dai-engine/create-dai-engine/index.mdx',
    'user-guide/dai-engine/manage-dai-engine/index.mdx',
    'user-guide/h2o-engine/create-h2o-engine/index.mdx',
    'user-guide/h2o-engine/manage-h2o-engine/index.mdx',
    'user-guide/notebook-engine/create-notebook-engine/index.mdx',
    'user-guide/notebook-engine/manage-notebook-engine/index.mdx',
    'py/installation.md',
    'py/initialization.mdx',
    'py/login.mdx',
    'py/migration.mdx',
    'py/dai_examples.mdx',
    'py/h2o_examples.mdx',
    'py/notebook_examples.mdx',
    'py/clients/index.md',
    'py/clients/connection_config.md',
    'py/clients/login.md',
    'py/clients/exception.md',
    ...CLIENT_SECTIONS.map((section) => `py/clients/${section}/index.md`),
  ];
  expect(routes.filter((r) => !existsSync(join(DOCS, r)))).toEqual([]);
});
