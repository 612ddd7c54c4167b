/** pages.test.ts against the build with the offline search index: diagrams, tabs, folds, column. */
process.env['AIEM_DOCS_SEARCH_MODE'] = 'offline';
await import('../pages.test.ts');
