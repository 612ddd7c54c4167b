import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Authenticate, CallHeaders, Handlers } from '../call/handler.ts';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { ROUTES, type Route } from '../gen/routes.ts';
import { toJson, type Json } from '../json/canonical.ts';
import { log } from '../log.ts';
import { buildRequest } from './request.ts';
import { matchPattern, parsePattern, splitPath, type PathPattern } from './pattern.ts';

/** Largest accepted request body. */
export const MAX_BODY_BYTES = 1024 * 1024;

interface CompiledRoute {
  route: Route;
  pattern: PathPattern;
}

/**
 * The REST `/v1` API: every route of the generated table, interpreted at run time, calling the
 * same handlers as gRPC. Errors of any kind leave as a google.rpc.Status body with the HTTP
 * status of its code; routing failures too (404 NOT_FOUND, 405 UNIMPLEMENTED).
 */
export function restRouter(handlers: Handlers, authenticate: Authenticate): Router {
  const routes: CompiledRoute[] = ROUTES.map((route) => ({ route, pattern: parsePattern(route.path) }));
  const router = express.Router();
  // Clients send Content-Type: application/json even on POSTs without a body.
  router.use(express.json({ limit: MAX_BODY_BYTES, strict: false, type: () => true }));
  router.use((req, res, next) => {
    serve({ routes, handlers, authenticate }, req, res).catch(next);
  });
  router.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    writeError(res, bodyParserError(error) ?? ApiError.from(error));
  });
  return router;
}

interface Mux {
  routes: CompiledRoute[];
  handlers: Handlers;
  authenticate: Authenticate;
}

async function serve({ routes, handlers, authenticate }: Mux, req: Request, res: Response): Promise<void> {
  // Who is calling is settled before anything about the routes is revealed or run.
  const caller = await authenticate(headersOf(req));
  const url = new URL(req.originalUrl, 'http://localhost');
  const path = splitPath(url.pathname);
  if (path === undefined) throw new ApiError(Code.INVALID_ARGUMENT, 'The path is not valid percent-encoding');
  const candidates = routes.flatMap(({ route, pattern }) => {
    const params = matchPattern(pattern, path);
    return params === undefined ? [] : [{ route, params }];
  });
  const found = candidates.find(({ route }) => route.method === req.method);
  if (found === undefined) {
    if (candidates.length > 0) {
      throw new ApiError(Code.UNIMPLEMENTED, `Method ${req.method} is not allowed on ${url.pathname}`, {
        reason: 'METHOD_NOT_ALLOWED',
      });
    }
    throw new ApiError(Code.NOT_FOUND, `No route for ${req.method} ${url.pathname}`, {
      reason: 'ROUTE_NOT_FOUND',
    });
  }
  const handler = handlers[`${found.route.service}.${found.route.rpc}`];
  if (handler === undefined) throw new ApiError(Code.UNIMPLEMENTED, `${found.route.rpc} is not implemented`);
  const body = req.body as Json | undefined;
  const request = buildRequest({
    route: found.route,
    pathParams: found.params,
    query: url.searchParams,
    body: emptyAsUndefined(body),
  });
  const response = await handler(request, { caller });
  res.status(200).json(toJson(found.route.responseType, response));
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

/** Malformed or oversized bodies, as reported by express.json, as client errors. */
function bodyParserError(error: unknown): ApiError | undefined {
  const type = typeof error === 'object' && error !== null && 'type' in error ? error.type : undefined;
  if (type === 'entity.parse.failed')
    return new ApiError(Code.INVALID_ARGUMENT, 'The request body is not valid JSON', {
      reason: 'INVALID_JSON',
    });
  if (type === 'entity.too.large') {
    return new ApiError(Code.INVALID_ARGUMENT, `The request body is larger than ${MAX_BODY_BYTES} bytes`, {
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

function writeError(res: Response, error: ApiError): void {
  // Server-side failures are ours to investigate: keep their cause, which the client never sees.
  if (error.isServerFault) log.error({ err: error.cause ?? error, code: error.code }, error.message);
  res.status(error.httpStatus).json(error.toStatus());
}
