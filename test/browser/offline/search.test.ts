/**
 * The offline search (the index built with the site, for air-gapped installations) behaves as
 * the hosted one does for readers: "/", Ctrl+K and Cmd+K reach it, it lists matching pages and
 * opens them in place, an empty result says "No results for" with the query, and the search page
 * lists the results of its q parameter. Nothing leaves the machine.
 */
process.env['AIEM_DOCS_SEARCH_MODE'] = 'offline';
await import('../offline-search.ts');
