/**
 * navigation.test.ts against the build with the offline search index instead of the hosted
 * search: addresses, error pages and navigation, unchanged.
 */
process.env['AIEM_DOCS_SEARCH_MODE'] = 'offline';
await import('../navigation.test.ts');
