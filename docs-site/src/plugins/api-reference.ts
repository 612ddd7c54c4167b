/**
 * The API reference page (api/): redocusaurus's Redoc plugin, rendering the OpenAPI document
 * that `make generate` writes, with one change.
 *
 * Warning: the plugin also publishes the whole document as global data, which Docusaurus
 * bundles into the JavaScript of every page (about 340 KB, the largest part of it). The api/
 * page receives the document through its own route data and never reads the global copy, so
 * this wrapper publishes the global data without it.
 */
import redocPlugin, { validateOptions, type PluginOptions } from 'docusaurus-plugin-redoc';
import type { LoadContext } from '@docusaurus/types';

export { validateOptions };

type RedocPlugin = ReturnType<typeof redocPlugin>;

export default function apiReference(context: LoadContext, options: PluginOptions): RedocPlugin {
  const plugin = redocPlugin(context, options);
  const { contentLoaded } = plugin;
  return {
    ...plugin,
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
