/**
 * A build-time rewrite of Redoc's bundle: its "API docs by Redocly" badge loads an image from
 * Redocly's CDN, which the site's content security policy refuses (readers' browsers then log an
 * error, and an air-gapped cluster could not load it anyway). The badge shows an empty image
 * from the page itself instead; its text and link stay. See src/plugins/api-reference.ts.
 */
const CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const EMPTY_IMAGE = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";

module.exports = function redocLogoLoader(source) {
  return source.split(CDN_LOGO).join(EMPTY_IMAGE);
};
