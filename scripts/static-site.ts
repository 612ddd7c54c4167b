/**
 * A small static file server for the built documentation site, as a plain web host serves it:
 * files as they are, a folder's index.html, and 404.html with status 404 for anything else.
 * It never rewrites `.html` endings: the build holds every page as `x/index.html` and `x.html`
 * (docs-site/src/plugins/html-endings.ts), and the site shows both as `x` (the browser tests
 * check exactly that), and answers only under its mount path. Text is
 * sent gzip-compressed to clients that accept it, as web hosts do.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, resolve, sep } from 'node:path';
import { createGzip } from 'node:zlib';

/** A running server. */
export interface StaticSite {
  /** The site's address, ending in the mount path, e.g. `http://127.0.0.1:3000/ai-engine-manager/`. */
  url: string;
  /** The server's origin, e.g. `http://127.0.0.1:3000`. */
  origin: string;
  close(): Promise<void>;
}

/** Where and what to serve. */
export interface StaticSiteOptions {
  /** The build folder. */
  root: string;
  /** The URL path the folder appears at; `/ai-engine-manager/` for the docs site. */
  mount: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** The file a URL path names inside root, or undefined; never a file outside root. */
async function fileFor(root: string, relativePath: string): Promise<string | undefined> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(relativePath);
  } catch {
    return undefined;
  }
  const path = resolve(root, `.${sep}${decoded}`);
  if (path !== root && !path.startsWith(root + sep)) return undefined;
  if (await isFile(path)) return path;
  const index = join(path, 'index.html');
  return (await isFile(index)) ? index : undefined;
}

const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.json', '.xml', '.yaml', '.svg', '.txt']);

function send(request: IncomingMessage, response: ServerResponse, status: number, file: string): void {
  const type = CONTENT_TYPES[extname(file)] ?? 'application/octet-stream';
  const gzip = COMPRESSIBLE.has(extname(file)) && /\bgzip\b/.test(request.headers['accept-encoding'] ?? '');
  response.writeHead(status, {
    'content-type': type,
    // Built assets have content hashes in their names and never change; pages may.
    'cache-control': file.includes(`${sep}assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
    vary: 'accept-encoding',
    ...(gzip && { 'content-encoding': 'gzip' }),
  });
  const body = createReadStream(file);
  if (gzip) body.pipe(createGzip()).pipe(response);
  else body.pipe(response);
}

/** Starts serving; resolves once the server listens. */
export async function serveStaticSite(options: StaticSiteOptions): Promise<StaticSite> {
  const root = resolve(options.root);
  const mount = options.mount.endsWith('/') ? options.mount : `${options.mount}/`;
  const notFound = join(root, '404.html');
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const pathname = new URL(request.url ?? '/', 'http://localhost').pathname;
    const file = pathname.startsWith(mount) ? await fileFor(root, pathname.slice(mount.length)) : undefined;
    if (file) send(request, response, 200, file);
    else if (await isFile(notFound)) send(request, response, 404, notFound);
    else response.writeHead(404).end();
  };
  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, host, done);
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host}:${port}`;
  return {
    url: `${origin}${mount}`,
    origin,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => {
          done();
        });
      }),
  };
}
