/**
 * One API call, written once as its request message in canonical JSON, made over REST (through
 * the route the generated table binds it to, as grpc-gateway clients send it) or over gRPC.
 */
import type { Metadata, ServiceError } from '@grpc/grpc-js';
import { fromJson, type Json } from '../../gateway/src/json/canonical.ts';
import { ROUTES, type Route } from '../../gateway/src/gen/routes.ts';
import type { ApiServer } from '../helpers/api-server.ts';

/** A request message in canonical JSON. */
export type Message = Record<string, Json>;

/** `Service.Rpc` (short service name), e.g. `DAIEngineService.GetDAIEngine`, of every route. */
export const RPCS: readonly string[] = [
  ...new Set(ROUTES.map((r) => `${r.service.slice(r.service.lastIndexOf('.') + 1)}.${r.rpc}`)),
];

/** What a call answered: a gRPC code (0 for success) and, on success, the response message. */
export interface Outcome {
  code: number;
  message?: Record<string, unknown>;
}

function routeOf(rpc: string): Route {
  const route = ROUTES.find(
    (r) => r.service.endsWith(`.${rpc.split('.')[0] ?? ''}`) && r.rpc === rpc.split('.')[1],
  );
  if (route === undefined) throw new Error(`No route for ${rpc}`);
  return route;
}

const camel = (snake: string): string => snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function valueAt(message: Message, path: string): Json | undefined {
  let value: Json | undefined = message;
  for (const part of path.split('.')) {
    value = value !== null && typeof value === 'object' && !Array.isArray(value) ? value[part] : undefined;
  }
  return value;
}

/** Top-level scalar fields of `message` not in `used`, as a query string. */
function queryOf(message: Message, used: ReadonlySet<string>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(message)) {
    if (!used.has(key) && value !== null && typeof value !== 'object') query.set(key, String(value));
  }
  return query.size > 0 ? `?${query.toString()}` : '';
}

/** The HTTP request of a call: its route's path with the variables filled in, body or query. */
export function restRequest(rpc: string, message: Message): { method: string; path: string; body?: Json } {
  const route = routeOf(rpc);
  const used = new Set<string>();
  const path = route.path.replace(/\{([^}=]+)(=[^}]*)?\}/g, (_all, field: string) => {
    const jsonPath = field.split('.').map(camel).join('.');
    used.add(jsonPath.split('.')[0] ?? '');
    const value = valueAt(message, jsonPath);
    if (typeof value !== 'string') throw new Error(`${rpc}: ${jsonPath} must be a string`);
    return encodeURIComponent(value);
  });
  if (route.body === '*') return { method: route.method, path, body: message };
  const bodyField = route.body === '' ? undefined : camel(route.body);
  if (bodyField !== undefined) used.add(bodyField);
  const body = bodyField === undefined ? undefined : message[bodyField];
  return {
    method: route.method,
    path: `${path}${queryOf(message, used)}`,
    ...(body === undefined ? {} : { body }),
  };
}

/** Makes the call over REST with `headers`. */
export async function overRest(
  api: ApiServer,
  call: { rpc: string; message: Message; headers: Record<string, string> },
): Promise<Outcome> {
  const { method, path, body } = restRequest(call.rpc, call.message);
  const response = await api.rest(method, path, body, call.headers);
  if (response.status === 200) return { code: 0, message: response.json };
  const code = response.json['code'];
  if (typeof code !== 'number') throw new Error(`HTTP ${response.status} without a status body`);
  return { code, message: { httpStatus: response.status, ...response.json } };
}

/** Makes the call over gRPC with `metadata`. */
export async function overGrpc(
  api: ApiServer,
  call: { rpc: string; message: Message; metadata: Metadata },
): Promise<Outcome> {
  const request = fromJson(routeOf(call.rpc).requestType, call.message);
  try {
    return { code: 0, message: await api.grpc(call.rpc, request, call.metadata) };
  } catch (error: unknown) {
    return { code: (error as ServiceError).code, message: { details: (error as ServiceError).details } };
  }
}
