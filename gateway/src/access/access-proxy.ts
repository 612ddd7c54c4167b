/**
 * The engine access proxy: `/workspaces/{w}/{daiEngines|h2oEngines|notebookEngines}/{id}/…` on
 * the REST server, forwarded unchanged to the engine's server (each engine serves under its own
 * address's path). Every request and WebSocket upgrade is authenticated first (before anything
 * else of it is read), then authorized from the gateway's caches by the API's rule, then sent to
 * a ready address of the engine's Service; an engine that is not running gets an answer naming
 * its state instead. Bodies stream both ways with backpressure; nothing times an idle
 * connection out (Jupyter's kernel WebSockets, long polls and event streams stay open).
 */
import { Agent, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { NextFunction, Request, Response } from 'express';
import { createProxyServer } from 'http-proxy-3';
import type { Authorizer, Caller } from '../auth/authorizer.ts';
import type { Authenticate, CallHeaders, Handler, Handlers } from '../call/handler.ts';
import { ApiError, invalidArgument } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { log } from '../log.ts';
import type { ClusterPlacement, Store } from '../store/store-interface.ts';
import { ActivityRecorder } from './activity.ts';
import { reachEngine, type ReachedEngine } from './engine-access.ts';
import { parseEnginePath, type AccessCollection, type EnginePath } from './engine-path.ts';
import { EngineTargets, type Target } from './engine-targets.ts';
import { publicPath, sameOrigin, type BrowserLoginOptions } from './browser-login.ts';
import { forwardHeaders } from './forward-headers.ts';
import { cookieOf, SESSION_COOKIE, type Sessions } from './session.ts';
import {
  errorAnswer,
  noAddressError,
  notRunningError,
  unreachableError,
  wantsHtml,
  type Answer,
} from './state-answer.ts';

/** How the access proxy is set up. */
export interface AccessOptions {
  store: Store & ClusterPlacement;
  authorizer: Authorizer;
  /** The platform's public address: its scheme is the `X-Forwarded-Proto` engines are told. */
  publicUrl?: string;
  /**
   * Kinds whose engines get the client's `Authorization` header (DAI with OpenID verifies the
   * token itself); the others never see the product's token.
   */
  forwardAuthorization?: readonly AccessCollection[];
  /** The longest time between an engine's use and its activity record; a minute when unset. */
  activityIntervalMs?: number;
  /** How often an open WebSocket's access is checked again; 5 s when unset. */
  recheckEveryMs?: number;
  /**
   * The API's implementations: a paused engine's page offers its owner to resume it, through
   * the API's own resume call. No such offer when unset.
   */
  handlers?: Handlers;
  /**
   * Browser sign-in (`/auth/login`) at the platform's identity provider, ending in a session
   * cookie that engine addresses accept besides bearer tokens; bearer tokens only when unset.
   * Needs `publicUrl`.
   */
  login?: Omit<BrowserLoginOptions, 'authenticate' | 'publicUrl'>;
}

/** The proxy's options as the gateway passes them. */
export interface ProxyOptions extends AccessOptions {
  authenticate: Authenticate;
  /** Browser sessions as credentials, and where a browser without one signs in. */
  browser?: {
    sessions: Sessions;
    loginUrl(target: string): string;
    /** The platform's origin: the only one whose pages may use a session for changes and WebSockets. */
    origin: string;
  };
}

/** The proxy as the gateway mounts it. */
export interface AccessProxy {
  /** Express middleware: serves engine paths, passes every other request on. */
  handle: (req: Request, res: Response, next: NextFunction) => void;
  /** The HTTP server's `upgrade` listener: WebSockets to engines; every other upgrade is refused. */
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Starts watching engines' addresses (the proxy answers 503 until their copy is in sync). */
  start(): Promise<void>;
  /** Records pending activity, closes open WebSockets and stops watching. */
  stop(): Promise<void>;
}

/** What to do with a request: answer it here, pass it on, or forward it to an engine. */
type Decision =
  | { kind: 'other' }
  | { kind: 'answer'; answer: Answer }
  | { kind: 'resume'; engine: ReachedEngine; caller: Caller; html: boolean; call: Handler }
  | { kind: 'forward'; engine: ReachedEngine; path: EnginePath; caller: Caller; target: Target };

const RECHECK_MS = 5_000;

/** Methods that change nothing (RFC 9110 §9.2.1): the only ones another site may cause with a session. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

function callHeaders(req: IncomingMessage): CallHeaders {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** Whether the request announces a body, which is then not read when it is refused early. */
function hasBody(req: IncomingMessage): boolean {
  return Number(req.headers['content-length'] ?? '0') > 0 || req.headers['transfer-encoding'] !== undefined;
}

/** Only WebSocket upgrades of GET requests reach engines (no h2c, no other protocol). */
function checkUpgrade(req: IncomingMessage): void {
  if (req.method !== 'GET' || req.headers.upgrade?.toLowerCase() !== 'websocket')
    throw invalidArgument('upgrade', 'only WebSocket upgrades of GET requests reach engines');
}

function writeAnswer(res: ServerResponse, req: IncomingMessage, answer: Answer): void {
  // A body the proxy does not forward is not drained for the next request: close instead.
  if (hasBody(req)) res.setHeader('connection', 'close');
  res.writeHead(answer.status, answer.headers).end(answer.body);
}

/** An answer on a socket whose upgrade is refused: a complete HTTP response, then close. */
function writeRawAnswer(socket: Duplex, answer: Answer): void {
  const headers = {
    ...answer.headers,
    'content-length': String(Buffer.byteLength(answer.body)),
    connection: 'close',
  };
  const head = [
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ].join('\r\n');
  socket.end(`${head}\r\n\r\n${answer.body}`);
}

/** A browser's way to a sign-in that returns to where it was going. */
function signInFirst(location: string): Answer {
  return {
    status: 302,
    headers: { location, 'cache-control': 'no-store', 'content-type': 'text/html; charset=utf-8' },
    body: '',
  };
}

/** The proxy over the gateway's caches and authorizer. */
export function accessProxy(options: ProxyOptions): AccessProxy {
  const { store, authorizer, authenticate } = options;
  const targets = new EngineTargets({ kubeConfig: store.kubeConfig, namespace: store.namespace, log });
  const activity = new ActivityRecorder({
    annotate: (kind, name, annotations) => store.annotate(kind, name, annotations),
    log,
    ...(options.activityIntervalMs === undefined ? {} : { intervalMs: options.activityIntervalMs }),
  });
  const proto = options.publicUrl?.startsWith('https:') === true ? 'https' : 'http';
  // The path of the public address, which the pages' own links start with.
  const basePath = options.publicUrl === undefined ? '' : publicPath(options.publicUrl);
  const forwardAuthorization = new Set(options.forwardAuthorization ?? []);
  const recheckMs = options.recheckEveryMs ?? RECHECK_MS;
  // Connections to engines are kept for the next request; no proxy timeout (see the header).
  const agent = new Agent({ keepAlive: true });
  const proxy = createProxyServer({ agent, ws: true, xfwd: false, toProxy: true, prependPath: false });
  const tunnels = new Set<Duplex>();
  /** Activity of WebSocket traffic, by upgrade request (the proxy's events name only the request). */
  const wsTouches = new WeakMap<IncomingMessage, () => void>();
  proxy.on('proxyReqWs', (proxyReq, req, socket) => {
    const touch = wsTouches.get(req);
    if (touch === undefined) return;
    proxyReq.on('upgrade', (_res, engineSocket) => {
      socket.on('data', touch);
      engineSocket.on('data', touch);
    });
  });

  /**
   * Who is calling: a bearer token when the request has one (programs), else a browser session.
   * A session is ambient (the browser sends it whoever made the page), so a WebSocket or a
   * state-changing request with one must come from this platform's own pages.
   */
  async function identify(req: IncomingMessage, websocket: boolean): Promise<Caller> {
    const headers = callHeaders(req);
    const session = cookieOf(headers['cookie'], SESSION_COOKIE);
    const { browser } = options;
    if (headers['authorization'] !== undefined || browser === undefined || session === undefined)
      return authenticate(headers);
    const caller = await browser.sessions.caller(session);
    if ((websocket || !SAFE_METHODS.has(req.method ?? '')) && !sameOrigin(req.headers, browser.origin))
      throw new ApiError(
        Code.PERMISSION_DENIED,
        websocket
          ? "WebSockets to engines are accepted from this platform's pages only"
          : "Changes through an engine's address are accepted from this platform's pages only",
        { reason: 'CROSS_SITE_REQUEST' },
      );
    return caller;
  }

  async function decide(req: IncomingMessage, websocket: boolean): Promise<Decision> {
    const verdict = parseEnginePath(req.url ?? '');
    if (verdict.kind === 'other') return { kind: 'other' };
    const html = !websocket && wantsHtml(req.headers.accept);
    try {
      // Who is calling comes first: an unauthenticated client learns nothing of paths or engines.
      const caller = await identify(req, websocket);
      if (verdict.kind === 'refused') throw invalidArgument('path', verdict.problem);
      if (websocket) checkUpgrade(req);
      const engine = await reachEngine({ store, authorizer }, caller, verdict.engine);
      const call = isResumePost(req, engine) ? resumeCall(engine) : undefined;
      if (call !== undefined) return { kind: 'resume', engine, caller, html, call };
      return where({ engine, path: verdict.engine, caller }, html);
    } catch (error: unknown) {
      return refusal(ApiError.from(error), req, html);
    }
  }

  /** The answer to a request refused before it reached an engine. */
  function refusal(failure: ApiError, req: IncomingMessage, html: boolean): Decision {
    // A browser opening an engine signs in first, and comes back to the page it asked for.
    const { browser } = options;
    if (failure.code === Code.UNAUTHENTICATED && html && req.method === 'GET' && browser !== undefined)
      return { kind: 'answer', answer: signInFirst(browser.loginUrl(req.url ?? '/')) };
    return answer(failure, { html });
  }

  /** Where a request the caller may make goes: to a ready address of a running engine, or an answer. */
  function where(
    reached: Omit<Extract<Decision, { kind: 'forward' }>, 'kind' | 'target'>,
    html: boolean,
  ): Decision {
    const { engine } = reached;
    if (engine.state !== 'STATE_RUNNING')
      return answer(notRunningError(engine.name, engine.state), {
        html,
        state: engine.state,
        ...(resumeCall(engine) === undefined ? {} : { resumeAction: resumeTarget(engine) }),
      });
    const target = engine.services
      .map((service) => targets.target(service, engine.uid, engine.access.port))
      .find((t) => t !== undefined);
    if (target === undefined) return answer(noAddressError(engine.name), { html, state: engine.state });
    return { kind: 'forward', ...reached, target };
  }

  function answer(error: ApiError, how: Parameters<typeof errorAnswer>[1]): Decision {
    return { kind: 'answer', answer: errorReply(error, how) };
  }

  /** The answer to a refused request; a fault of the server's own is logged. */
  function errorReply(error: ApiError, how: Parameters<typeof errorAnswer>[1]): Answer {
    if (error.isServerFault && error.code !== Code.UNAVAILABLE)
      log.error({ err: error.cause ?? error, code: error.code }, error.message);
    return errorAnswer(error, how);
  }

  /**
   * The API's call that resumes the engine, when the caller may resume it from its page: paused,
   * theirs to change, of a kind that resumes.
   */
  function resumeCall(engine: ReachedEngine): Handler | undefined {
    const rpc = engine.access.resumeRpc;
    if (engine.state !== 'STATE_PAUSED' || !engine.mayChange || rpc === undefined) return undefined;
    return options.handlers?.[rpc];
  }

  /** The engine's address with `?resume`: where its page's Resume button posts. */
  function resumeTarget(engine: ReachedEngine): string {
    return `${basePath}/${engine.name}/?resume`;
  }

  /** A POST of the page's Resume button (a paused engine's address serves nothing else). */
  function isResumePost(req: IncomingMessage, engine: ReachedEngine): boolean {
    return req.method === 'POST' && req.url === `/${engine.name}/?resume`;
  }

  /** Resumes the engine by the API's own call, as its caller, then sends the browser to its address. */
  function resume(
    res: ServerResponse,
    req: IncomingMessage,
    decision: Extract<Decision, { kind: 'resume' }>,
  ): void {
    const { engine, caller, html, call } = decision;
    call({ name: engine.name }, { caller }).then(
      () => {
        writeAnswer(res, req, {
          status: 303,
          headers: { location: `${basePath}/${engine.name}/`, 'cache-control': 'no-store' },
          body: '',
        });
      },
      (error: unknown) => {
        writeAnswer(res, req, errorReply(ApiError.from(error), { html }));
      },
    );
  }

  function prepare(
    req: IncomingMessage,
    decision: Extract<Decision, { kind: 'forward' }>,
    websocket: boolean,
  ): void {
    req.headers = forwardHeaders(req.headers, {
      clientAddress: req.socket.remoteAddress ?? '',
      proto,
      forwardAuthorization: forwardAuthorization.has(decision.path.collection),
      websocket,
    });
    activity.touch(decision.engine.access.kind, decision.engine.name);
  }

  function forwardWeb(req: Request, res: Response, decision: Extract<Decision, { kind: 'forward' }>): void {
    const html = wantsHtml(req.headers.accept);
    // Express may have rewritten req.url; the engine gets the target exactly as the client sent it.
    req.url = req.originalUrl;
    prepare(req, decision, false);
    const target = { host: decision.target.host, port: decision.target.port, protocol: 'http:' };
    proxy.web(req, res, { target }, (error) => {
      log.warn({ err: error, engine: decision.engine.name }, 'Failed to reach engine');
      if (!res.headersSent)
        writeAnswer(
          res,
          req,
          errorAnswer(unreachableError(decision.engine.name, error), { html, httpStatus: 502 }),
        );
      else res.destroy();
    });
  }

  /** Closes the tunnel once its caller may no longer open the engine (deleted, paused, shared no more). */
  function watchAccess(socket: Duplex, decision: Extract<Decision, { kind: 'forward' }>): void {
    const timer = setInterval(() => {
      reachEngine({ store, authorizer }, decision.caller, decision.path).then(
        (engine) => {
          if (engine.state !== 'STATE_RUNNING' || engine.uid !== decision.engine.uid) socket.destroy();
        },
        () => socket.destroy(),
      );
    }, recheckMs);
    timer.unref();
    tunnels.add(socket);
    socket.once('close', () => {
      clearInterval(timer);
      tunnels.delete(socket);
    });
  }

  function forwardWebSocket(
    req: IncomingMessage,
    { socket, head }: { socket: Duplex; head: Buffer },
    decision: Extract<Decision, { kind: 'forward' }>,
  ): void {
    prepare(req, decision, true);
    wsTouches.set(req, () => {
      activity.touch(decision.engine.access.kind, decision.engine.name);
    });
    watchAccess(socket, decision);
    const target = { host: decision.target.host, port: decision.target.port, protocol: 'http:' };
    proxy.ws(req, socket, head, { target }, (error) => {
      log.warn({ err: error, engine: decision.engine.name }, 'Failed to reach engine');
      if (socket.writable && !socket.destroyed)
        writeRawAnswer(
          socket,
          errorAnswer(unreachableError(decision.engine.name, error), { html: false, httpStatus: 502 }),
        );
    });
  }

  return {
    handle(req, res, next) {
      decide(req, false).then((decision) => {
        if (decision.kind === 'other') next();
        else if (decision.kind === 'answer') writeAnswer(res, req, decision.answer);
        else if (decision.kind === 'resume') resume(res, req, decision);
        else forwardWeb(req, res, decision);
      }, next);
    },
    upgrade(req, socket, head) {
      socket.on('error', () => socket.destroy());
      decide(req, true).then(
        (decision) => {
          if (decision.kind === 'forward') forwardWebSocket(req, { socket, head }, decision);
          else if (decision.kind === 'answer') writeRawAnswer(socket, decision.answer);
          else if (decision.kind === 'resume') socket.destroy();
          else
            writeRawAnswer(
              socket,
              errorAnswer(new ApiError(Code.NOT_FOUND, `No WebSocket is served at "${req.url ?? ''}"`), {
                html: false,
              }),
            );
        },
        () => socket.destroy(),
      );
    },
    start: () => targets.start(),
    async stop() {
      for (const socket of tunnels) socket.destroy();
      proxy.close();
      agent.destroy();
      await Promise.all([activity.stop(), targets.stop()]);
    },
  };
}
