import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Caller } from '../auth/authorizer.ts';
import {
  isServerStream,
  type Authenticate,
  type CallHeaders,
  type Handlers,
  type ServerStream,
} from '../call/handler.ts';
import { ApiError, unauthenticated } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { ROUTES, type Route } from '../gen/routes.ts';
import type { Json } from '../json/canonical.ts';
import { toJsonText } from '../json/canonical-text.ts';
import { log } from '../log.ts';
import { bodyProblem } from './body.ts';
import { MAX_FILE_MESSAGE_BYTES } from '../sandbox/filesystem-service.ts';
import { buildRequest, jsonName } from './request.ts';
import { matchPattern, parsePattern, splitPath, type PathPattern } from './pattern.ts';

/** Largest accepted request body. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Sandbox file writes carry whole files: only that route reads bodies beyond MAX_BODY_BYTES. */
const FILE_WRITE = /\/filesystem:writeFile$/;

interface CompiledRoute {
  route: Route;
  pattern: PathPattern;
}

/**
 * The REST `/v1` API: every route of the generated table, interpreted at run time, calling the
 * same handlers as gRPC. Errors of any kind leave as a google.rpc.Status body with the HTTP
 * status of its code; routing failures too (404 NOT_FOUND, 405 UNIMPLEMENTED with `Allow`).
 *
 * Order: the caller is authenticated first, from the headers alone — before the body is read
 * and before routing — so an unauthenticated client can make the server do no more than check
 * a token, and learns nothing of the routes or of how its body would be judged.
 */
export function restRouter(handlers: Handlers, authenticate: Authenticate): Router {
  const routes: CompiledRoute[] = ROUTES.map((route) => ({ route, pattern: parsePattern(route.path) }));
  const callers = new WeakMap<Request, Caller>();
  const router = express.Router();
  router.use((req, _res, next) => {
    authenticate(headersOf(req)).then((caller) => {
      callers.set(req, caller);
      next();
    }, next);
  });
  // Clients send Content-Type: application/json even on POSTs without a body.
  const json = express.json({ limit: MAX_BODY_BYTES, strict: false, type: () => true });
  const fileJson = express.json({ limit: MAX_FILE_MESSAGE_BYTES, strict: false, type: () => true });
  router.use((req, res, next) => {
    (FILE_WRITE.test(req.path) ? fileJson : json)(req, res, next);
  });
  router.use((req, res, next) => {
    const caller = callers.get(req);
    if (caller === undefined) throw unauthenticated();
    serve({ routes, handlers, caller }, req, res).catch(next);
  });
  router.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const api = bodyParserError(error) ?? ApiError.from(error);
    if (api.code === Code.UNAUTHENTICATED) {
      res.set('WWW-Authenticate', 'Bearer realm="ai-engine-manager"');
      // Whatever body follows is not read: close rather than drain it for the next request.
      if (hasBody(req)) res.set('Connection', 'close');
    }
    writeError(res, api);
  });
  return router;
}

interface Mux {
  routes: CompiledRoute[];
  handlers: Handlers;
  caller: Caller;
}

async function serve({ routes, handlers, caller }: Mux, req: Request, res: Response): Promise<void> {
  const url = new URL(req.originalUrl, 'http://localhost');
  const path = splitPath(url.pathname);
  if (path === undefined) throw new ApiError(Code.INVALID_ARGUMENT, 'The path is not valid percent-encoding');
  const candidates = routes.flatMap(({ route, pattern }) => {
    const params = matchPattern(pattern, path);
    return params === undefined ? [] : [{ route, params }];
  });
  if (candidates.length === 0) {
    throw new ApiError(Code.NOT_FOUND, `No route for ${req.method} ${url.pathname}`, {
      reason: 'ROUTE_NOT_FOUND',
    });
  }
  // HEAD is GET without the body (Node leaves the body out of HEAD answers by itself).
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  const found = candidates.find(({ route }) => route.method === method);
  if (found === undefined) {
    const allowed = allowedMethods(candidates.map(({ route }) => route.method));
    res.set('Allow', allowed.join(', '));
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    const error = new ApiError(Code.UNIMPLEMENTED, `Method ${req.method} is not allowed on ${url.pathname}`, {
      reason: 'METHOD_NOT_ALLOWED',
    });
    writeError(res, error, 405);
    return;
  }
  const handler = handlers[`${found.route.service}.${found.route.rpc}`];
  if (handler === undefined) throw new ApiError(Code.UNIMPLEMENTED, `${found.route.rpc} is not implemented`);
  const body = req.body as Json | undefined;
  const problem = bodyProblem(body, ['', '*'].includes(found.route.body) ? '' : jsonName(found.route.body));
  if (problem !== undefined) throw problem;
  const request = buildRequest({
    route: found.route,
    pathParams: found.params,
    query: url.searchParams,
    body: emptyAsUndefined(body),
  });
  const closed = new AbortController();
  res.on('close', () => {
    // Only a caller gone before the answer is news to the handler; aborting after every answer
    // would build an AbortError (and its stack) per call for nobody.
    if (!res.writableFinished) closed.abort();
  });
  const response = await handler(request, { caller, signal: closed.signal });
  if (isServerStream(response)) await writeStream(res, found.route.responseType, response);
  // Written straight to text (what res.json would send, without building the JSON first).
  else res.status(200).type('application/json').send(toJsonText(found.route.responseType, response));
}

/**
 * A server stream as grpc-gateway writes one: status 200, then one compact JSON envelope per
 * line, each written (and so sent as its own chunk) as it comes, so that clients read output
 * live. An error after the first byte can only travel as an `{"error": …}` envelope.
 */
async function writeStream(res: Response, type: string, stream: ServerStream): Promise<void> {
  res.status(200).type('application/json');
  res.flushHeaders();
  try {
    for await (const message of stream.messages) {
      if (res.destroyed) break;
      res.write(`{"result":${toJsonText(type, message)}}\n`);
    }
  } catch (error: unknown) {
    const api = ApiError.from(error);
    if (api.isServerFault) log.error({ err: api.cause ?? api, code: api.code }, api.message);
    if (!res.destroyed) res.write(`${JSON.stringify({ error: api.toStatus() })}\n`);
  }
  res.end();
}

/** The methods a path answers, for `Allow`: HEAD wherever GET is, and OPTIONS everywhere. */
function allowedMethods(methods: readonly string[]): string[] {
  const allowed = new Set(methods);
  if (allowed.has('GET')) allowed.add('HEAD');
  allowed.add('OPTIONS');
  return [...allowed].sort();
}

/** Whether the request announces a body (a length above zero, or chunks). */
function hasBody(req: Request): boolean {
  const length = Number(req.headers['content-length'] ?? '0');
  return length > 0 || req.headers['transfer-encoding'] !== undefined;
}

function headersOf(req: Request): CallHeaders {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** body-parser leaves `{}` for a request without a body. */
function emptyAsUndefined(body: Json | undefined): Json | undefined {
  return body !== null && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0
    ? undefined
    : body;
}

/** The body limit body-parser applied (file writes have their own). */
function limitOf(error: unknown): number {
  return typeof error === 'object' && error !== null && 'limit' in error
    ? Number(error.limit)
    : MAX_BODY_BYTES;
}

/** Malformed or oversized bodies, as reported by express.json, as client errors. */
function bodyParserError(error: unknown): ApiError | undefined {
  const type = typeof error === 'object' && error !== null && 'type' in error ? error.type : undefined;
  if (type === 'entity.parse.failed')
    return new ApiError(Code.INVALID_ARGUMENT, 'The request body is not valid JSON', {
      reason: 'INVALID_JSON',
    });
  if (type === 'entity.too.large') {
    return new ApiError(Code.INVALID_ARGUMENT, `The request body is larger than ${limitOf(error)} bytes`, {
      reason: 'BODY_TOO_LARGE',
    });
  }
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new ApiError(Code.INVALID_ARGUMENT, 'The request body must be UTF-8 JSON', {
      reason: 'UNSUPPORTED_ENCODING',
    });
  }
  return undefined;
}

/** Writes `error` as a google.rpc.Status with the HTTP status of its code, unless given another. */
function writeError(res: Response, error: ApiError, httpStatus = error.httpStatus): void {
  // Server-side failures are ours to investigate: keep their cause, which the client never sees.
  // Client errors are routine: a line at debug level, without a stack.
  if (error.isServerFault) log.error({ err: error.cause ?? error, code: error.code }, error.message);
  else log.debug({ code: error.code, reason: error.reason }, error.message);
  res.status(httpStatus).json(error.toStatus());
}
