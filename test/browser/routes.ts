/**
 * The documentation site's routes (product spec section 2), relative to the base path. Every
 * one must render its page, not the not-found page. Add a route here when a page is added.
 */
export const SITE_ROUTES: readonly string[] = [
  '',
  'api/',
  'search?q=engine',
  'get-started/what-is-ai-engine-manager',
  'get-started/access-ai-engines/',
  'release-notes',
  'user-guide/dai-engine/create-dai-engine/',
  'user-guide/dai-engine/manage-dai-engine/',
  'user-guide/h2o-engine/create-h2o-engine/',
  'user-guide/h2o-engine/manage-h2o-engine/',
  'user-guide/notebook-engine/create-notebook-engine/',
  'user-guide/notebook-engine/manage-notebook-engine/',
  'py/installation',
  'py/initialization',
  'py/login',
  'py/migration',
  'py/dai_examples',
  'py/h2o_examples',
  'py/notebook_examples',
  'py/clients/',
  'py/clients/connection_config',
  'py/clients/login',
  'py/clients/exception',
];

/** Guide pages: the TOC and screenshot tests read these. */
export const GUIDE_PAGE = 'get-started/what-is-ai-engine-manager';
