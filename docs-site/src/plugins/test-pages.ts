/**
 * Pages that let the browser tests provoke failures a reader can meet: a page that crashes
 * while rendering, and a part of a page whose code fails to download. Only builds made with
 * AIEM_DOCS_TEST_PAGES=1 (the test build) have them; a published site never does.
 */
import type { LoadContext, Plugin } from '@docusaurus/types';

export default function testPages(context: LoadContext): Plugin {
  return {
    name: 'aiem-test-pages',
    contentLoaded({ actions }) {
      for (const page of ['crash', 'lazy']) {
        actions.addRoute({
          path: `${context.baseUrl}test-pages/${page}`,
          component: `@site/src/test-pages/${page}.tsx`,
          exact: true,
        });
      }
    },
  };
}
