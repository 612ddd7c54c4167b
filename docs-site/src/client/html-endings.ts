/**
 * Shows `x.html` and `x/index.html` addresses as `x` before the site starts, so the router, and
 * everything that reads the address, sees the page's own path (the site has no `.html` routes).
 *
 * Warning: without this, `/ai-engine-manager/index.html` rendered the home page twice. The server
 * sends the home page's HTML, which includes the wrong-baseUrl banner's placeholder (it is only
 * rendered at the exact base path); the browser then renders without it, React fails to hydrate
 * the page and appends a second copy instead of replacing the first.
 */
import ExecutionEnvironment from '@docusaurus/ExecutionEnvironment';
import siteConfig from '@generated/docusaurus.config';

function canonicalPath(pathname: string): string {
  const stripped = pathname.replace(/(?:\/index)?\.html$/, '');
  // The home page's path is the base URL itself, with its slash.
  return `${stripped}/` === siteConfig.baseUrl || stripped === '' ? siteConfig.baseUrl : stripped;
}

if (ExecutionEnvironment.canUseDOM) {
  const { pathname, search, hash } = window.location;
  if (pathname.endsWith('.html'))
    window.history.replaceState(window.history.state, '', `${canonicalPath(pathname)}${search}${hash}`);
}
