/**
 * site.test.ts against the build with the offline search index instead of the hosted search: the
 * pages that show search differently, the navbar, colour modes, the mobile layout and the API
 * reference, unchanged.
 */
process.env['AIEM_DOCS_SEARCH_MODE'] = 'offline';
await import('../site.test.ts');
