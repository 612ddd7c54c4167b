import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ServerCredentials } from '@grpc/grpc-js';
import express from 'express';
import { grpcServer, notServing } from './grpc/server.ts';
import type { Authenticate, Handlers } from './call/handler.ts';
import { restRouter } from './rest/mux.ts';
import { accessProxy, type AccessOptions, type AccessProxy } from './access/access-proxy.ts';
import { browserLogin } from './access/browser-login.ts';
import { log } from './log.ts';

/** How long a stopping gateway lets calls in flight finish, unless told otherwise. */
const DRAIN_MS = 2_000;

/** Where the gateway listens; port 0 picks a free one. */
export interface GatewayOptions {
  host: string;
  restPort: number;
  grpcPort: number;
  handlers: Handlers;
  /** Who is calling: runs before routing on every REST and gRPC call (not on /version or health). */
  authenticate: Authenticate;
  /** The product version that `GET /version` reports. */
  version: string;
  /** Whether calls can be served (`/readyz`): the store's caches are in sync. Always, when unset. */
  ready?: () => boolean;
  /**
   * Serve engines at their addresses (`/workspaces/{w}/{kind}/{id}/…`) through the access proxy,
   * which authenticates with `authenticate`; engines' addresses answer 404 when unset.
   */
  access?: AccessOptions;
}

/** A running gateway. */
export interface Gateway {
  restUrl: string;
  grpcAddress: string;
  /** gRPC health reports NOT_SERVING from now on (REST's /readyz follows `ready`). */
  notServing(): void;
  /** Stops accepting connections and calls; calls in flight get `drainMs` to finish, then are cut. */
  stop(drainMs?: number): Promise<void>;
}

/** Mounts the browser sign-in (when configured) and the access proxy on the REST server. */
function engineAccess(app: express.Express, access: AccessOptions, authenticate: Authenticate): AccessProxy {
  const { login, publicUrl } = access;
  if (login !== undefined && publicUrl === undefined) throw new Error('Browser sign-in needs the public URL');
  const signIn =
    login === undefined || publicUrl === undefined
      ? undefined
      : browserLogin({ ...login, publicUrl, authenticate });
  if (signIn !== undefined) app.use(signIn.router);
  const proxy = accessProxy({
    ...access,
    authenticate,
    ...(signIn === undefined || login === undefined
      ? {}
      : { browser: { sessions: login.sessions, loginUrl: signIn.loginUrl, origin: signIn.origin } }),
  });
  app.use(proxy.handle);
  return proxy;
}

/**
 * Starts the REST server (`/v1`, plus `GET /version`, `/healthz`, `/readyz`) and the gRPC server
 * on the same handlers. `GET /version` stays unauthenticated: clients call it to check that the
 * server is reachable before they log in.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const app = express();
  app.disable('x-powered-by');
  app.get('/version', (_req, res) => {
    res.json({ version: options.version });
  });
  app.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok');
  });
  app.get('/readyz', (_req, res) => {
    const ready = options.ready?.() ?? true;
    res
      .status(ready ? 200 : 503)
      .type('text/plain')
      .send(ready ? 'ok' : 'catching up with the cluster');
  });
  const { authenticate } = options;
  // Before the API's router, which would answer an engine's path 404; the proxy passes every
  // other path (all of /v1) on untouched.
  const access =
    options.access === undefined
      ? undefined
      : engineAccess(app, { handlers: options.handlers, ...options.access }, authenticate);
  app.use('/', restRouter(options.handlers, authenticate));
  const http: HttpServer = await new Promise((resolve, reject) => {
    const server = app.listen(options.restPort, options.host, () => {
      resolve(server);
    });
    server.once('error', reject);
  });
  if (access !== undefined) {
    http.on('upgrade', access.upgrade);
    access.start().catch((error: unknown) => {
      log.error({ err: error }, 'Failed to watch engine addresses');
    });
  }
  const { server: grpc, health } = grpcServer(options.handlers, authenticate);
  const grpcPort = await new Promise<number>((resolve, reject) => {
    grpc.bindAsync(
      `${options.host}:${options.grpcPort}`,
      ServerCredentials.createInsecure(),
      (error, port) => {
        if (error) reject(error);
        else resolve(port);
      },
    );
  });
  const restPort = (http.address() as AddressInfo).port;
  return {
    restUrl: `http://${options.host}:${restPort}`,
    grpcAddress: `${options.host}:${grpcPort}`,
    notServing: () => {
      notServing(health);
    },
    async stop(drainMs = DRAIN_MS): Promise<void> {
      // Drain: no new connections or calls; calls in flight get a moment to finish, then the
      // rest are cut, so a stop is bounded whatever clients do. Engine WebSockets are closed at
      // once: an upgraded connection would hold the server open until the cut.
      const accessStopped = access?.stop();
      const cut = setTimeout(() => {
        http.closeAllConnections();
        grpc.forceShutdown();
      }, drainMs);
      await Promise.all([
        new Promise<void>((resolve) => {
          http.close(() => {
            resolve();
          });
          http.closeIdleConnections();
        }),
        new Promise<void>((resolve) => {
          grpc.tryShutdown(() => {
            resolve();
          });
        }),
      ]);
      clearTimeout(cut);
      await accessStopped;
    },
  };
}
