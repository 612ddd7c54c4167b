/**
 * Keeps the code highlighter out of the script every page runs first. The classic theme's client
 * module that registers extra Prism languages imports Prism (and its built-in languages) into the
 * main bundle, where setting it up was a quarter of that script's start-up on a phone. The site
 * registers no extra language (docusaurus.config.ts says why), so that module has nothing to do:
 * it is replaced by an empty one, and Prism comes with the code block's own chunk: only pages
 * with code load it, and it starts with the page's own code, apart from the site's.
 */
import { createRequire } from 'node:module';
import type { LoadContext, Plugin } from '@docusaurus/types';

const THEME_MODULE = '@docusaurus/theme-classic/lib/prism-include-languages';

export default function prismOutOfMain(context: LoadContext): Plugin {
  const { prism } = context.siteConfig.themeConfig as { prism?: { additionalLanguages?: string[] } };
  if ((prism?.additionalLanguages ?? []).length > 0)
    throw new Error(
      'prism.additionalLanguages needs the theme module that src/plugins/prism-out-of-main.ts removes',
    );
  // The path the theme lists its client module by: the resolved file without its extension.
  const themeModule = createRequire(import.meta.url)
    .resolve(THEME_MODULE)
    .replace(/\.js$/, '');
  return {
    name: 'aiem-prism-out-of-main',
    configureWebpack: () => ({ resolve: { alias: { [`${themeModule}$`]: false } } }),
  };
}
