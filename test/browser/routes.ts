/** The sections of the Python client reference, each a folder under py/clients/ (spec section 2). */
export const CLIENT_SECTIONS: readonly string[] = [
  'auth',
  'base',
  'constraint',
  'convert',
  'engine_id',
  'engine',
  'dai_engine',
  'dai_engine_profile',
  'dai_engine_version',
  'h2o_engine',
  'h2o_engine_profile',
  'h2o_engine_version',
  'notebook_engine',
  'notebook_engine_image',
  'notebook_engine_profile',
];

/**
 * The documentation site's routes (product spec section 2), relative to the base path. Every
 * one must render its page, not the not-found page. Add a route here when a page is added.
 */
export const SITE_ROUTES: readonly string[] = [
  '',
  'api/',
  'search?q=engine',
  'get-started/what-is-ai-engine-manager',
  'get-started/quickstart',
  'get-started/access-ai-engines/',
  'release-notes',
  'user-guide/dai-engine/create-dai-engine/',
  'user-guide/dai-engine/manage-dai-engine/',
  'user-guide/h2o-engine/create-h2o-engine/',
  'user-guide/h2o-engine/manage-h2o-engine/',
  'user-guide/notebook-engine/create-notebook-engine/',
  'user-guide/notebook-engine/manage-notebook-engine/',
  'user-guide/sandbox-engine/create-sandbox-engine/',
  'user-guide/sandbox-engine/run-processes/',
  'user-guide/sandbox-engine/sandbox-files/',
  'user-guide/sandbox-engine/ports-metrics-and-services/',
  'user-guide/kubectl-and-gitops',
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
  ...CLIENT_SECTIONS.map((section) => `py/clients/${section}/`),
  'py/clients/auth/token_api_client',
  'py/clients/base/image_pull_policy',
  'py/clients/constraint/profile_constraint_duration',
  'py/clients/constraint/profile_constraint_numeric',
  'py/clients/convert/duration_convertor',
  'py/clients/convert/quantity_convertor',
  'py/clients/engine_id/generator',
  ...['client', 'mapper', 'page', 'state', 'type'].map((page) => `py/clients/engine/${page}`),
  ...['dai_engine', 'h2o_engine', 'notebook_engine'].flatMap((section) =>
    ['client', 'page', 'state'].map((page) => `py/clients/${section}/${page}`),
  ),
  // For administrators: installing, configuring and granting permissions.
  'administration/install',
  'administration/configuration',
  'administration/permissions',
  'administration/kubernetes-access',
  'administration/sandbox-engines',
  'administration/gpu-queues',
];

/** Where the home page's "Get started" leads. */
export const OVERVIEW_PAGE = 'get-started/what-is-ai-engine-manager';

/** A guide page: the table of contents, layout and screenshot tests read it. */
export const GUIDE_PAGE = 'user-guide/dai-engine/create-dai-engine/';
