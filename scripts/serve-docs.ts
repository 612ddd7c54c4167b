/**
 * `make docs-serve`: the built documentation site (docs-site/build) at
 * http://127.0.0.1:3000/ai-engine-manager/ until Ctrl+C. AIEM_HOST and AIEM_DOCS_PORT move it.
 */
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStaticSite } from './static-site.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const site = await serveStaticSite({
  root: join(ROOT, 'docs-site', 'build'),
  mount: '/ai-engine-manager/',
  host: process.env['AIEM_HOST'] ?? '127.0.0.1',
  port: Number(process.env['AIEM_DOCS_PORT'] ?? 3000),
});
console.log(`Documentation site: ${site.url}  (Ctrl+C stops)`);
await new Promise<void>((done) => {
  process.once('SIGINT', done);
  process.once('SIGTERM', done);
});
await site.close();
