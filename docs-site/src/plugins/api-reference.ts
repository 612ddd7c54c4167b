/**
 * The API reference page (api/): redocusaurus's Redoc plugin, rendering the OpenAPI document
 * that `make generate` writes, with two changes.
 *
 * Warning: the plugin also publishes the whole document as global data, which Docusaurus
 * bundles into the JavaScript of every page (about 340 KB, the largest part of it). The api/
 * page receives the document through its own route data and never reads the global copy, so
 * this wrapper publishes the global data without it.
 *
 * Redoc's bundle names an image on Redocly's CDN for its badge; redoc-logo-loader.cjs replaces it
 * at build time, so the page asks no other host for anything.
 */
import redocPlugin, { validateOptions, type PluginOptions } from 'docusaurus-plugin-redoc';
import { join } from 'node:path';
import type { LoadContext } from '@docusaurus/types';

export { validateOptions };

type RedocPlugin = ReturnType<typeof redocPlugin>;

export default function apiReference(context: LoadContext, options: PluginOptions): RedocPlugin {
  const plugin = redocPlugin(context, options);
  const { contentLoaded } = plugin;
  return {
    ...plugin,
    configureWebpack: () => ({
      module: {
        rules: [
          {
            test: /[\\/]redoc[\\/]bundles[\\/][^\\/]+\.js$/,
            use: [{ loader: join(context.siteDir, 'src', 'plugins', 'redoc-logo-loader.cjs') }],
          },
        ],
      },
    }),
    contentLoaded: contentLoaded
      ? (args) =>
          contentLoaded({
            ...args,
            actions: {
              ...args.actions,
              setGlobalData: (data) => {
                args.actions.setGlobalData({ ...(data as object), spec: undefined });
              },
            },
          })
      : undefined,
  };
}
