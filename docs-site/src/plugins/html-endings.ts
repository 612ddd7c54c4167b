/**
 * Every page also as `<path>.html`: links from elsewhere, crawlers and readers without JavaScript
 * ask for `py/installation.html`, and a plain static host answers a file that exists with 200 and
 * anything else with the not-found page. Docusaurus writes each page as `<path>/index.html`, so
 * after the build each is copied beside its folder. The copy is the same HTML; the client module
 * src/client/html-endings.ts shows the address without `.html` before the page starts, so the
 * router renders the same page the server sent.
 */
import { copyFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { LoadContext, Plugin } from '@docusaurus/types';

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

export default function htmlEndings(context: LoadContext): Plugin {
  return {
    name: 'aiem-html-endings',
    async postBuild({ outDir, routesPaths }) {
      const pages = new Set(
        routesPaths
          .filter((route) => route.startsWith(context.baseUrl) && !route.includes('*'))
          .map((route) => route.slice(context.baseUrl.length).replace(/\/$/, ''))
          // The home page is index.html already; 404.html is the host's not-found page.
          .filter((page) => page !== '' && page !== '404'),
      );
      for (const page of pages) {
        const source = join(outDir, page, 'index.html');
        const target = join(outDir, `${page}.html`);
        if ((await exists(source)) && !(await exists(target))) await copyFile(source, target);
      }
    },
  };
}
