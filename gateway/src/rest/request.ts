import { MESSAGES, type FieldRow } from '../gen/messages.ts';
import type { Route } from '../gen/routes.ts';
import { invalidArgument } from '../errors/api-error.ts';
import { fromJson, JsonFieldError, type Json } from '../json/canonical.ts';

type JsonObject = { [key: string]: Json };

/** protoc's JSON name of a proto field name: `dai_engine_id` → `daiEngineId`. */
export function jsonName(protoName: string): string {
  return protoName.replace(/_([a-z0-9])/g, (_, ch: string) => ch.toUpperCase());
}

/**
 * The request message of `route` from the parts of an HTTP request, as grpc-gateway builds it:
 * the body (the whole request for `body: "*"`, or one field), then query parameters for fields
 * that neither the path nor the body bind, then the path variables, which win.
 *
 * @throws ApiError INVALID_ARGUMENT naming the field of any value that does not fit
 */
export function buildRequest(input: {
  route: Route;
  pathParams: Record<string, string>;
  query: URLSearchParams;
  body: Json | undefined;
}): Record<string, unknown> {
  const { route } = input;
  const json: JsonObject = {};
  const bodyField = route.body === '*' || route.body === '' ? undefined : jsonName(route.body);
  if (route.body === '*') Object.assign(json, requireObject(input.body));
  if (bodyField !== undefined && input.body !== undefined) json[bodyField] = input.body;
  if (route.body !== '*') addQuery(json, route.requestType, input.query, bodyField);
  for (const [path, value] of Object.entries(input.pathParams))
    setPath(json, path.split('.').map(jsonName), value);
  try {
    return fromJson(route.requestType, json);
  } catch (error: unknown) {
    if (error instanceof JsonFieldError)
      throw invalidArgument(protoPath(error.field), error.message.slice(error.field.length + 2));
    throw error;
  }
}

/**
 * A JSON field path as proto field names, as errors name fields (AIP-193):
 * `daiEngineProfile.cpuConstraint.min` → `dai_engine_profile.cpu_constraint.min`; map keys in
 * brackets stay as sent.
 */
export function protoPath(jsonPath: string): string {
  return jsonPath.replace(
    /(\["[^"]*"\])|[A-Z]/g,
    (match: string, key: string | undefined) => key ?? `_${match.toLowerCase()}`,
  );
}

function requireObject(body: Json | undefined): JsonObject {
  if (body === undefined) return {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidArgument('(body)', 'expected a JSON object');
  }
  return body;
}

/** Query parameters by JSON or proto name; empty values mean unset; unknown names are ignored. */
function addQuery(
  json: JsonObject,
  requestType: string,
  query: URLSearchParams,
  bodyField: string | undefined,
): void {
  const fields = MESSAGES[requestType] ?? [];
  for (const key of new Set(query.keys())) {
    const field = fields.find((f) => f.json === key || f.json === jsonName(key));
    if (field === undefined || field.json === bodyField) continue;
    const values = query.getAll(key).filter((v) => v !== '');
    if (values.length === 0) continue;
    json[field.json] = field.repeated
      ? values.map((v) => queryValue(field, v))
      : queryValue(field, values[values.length - 1] ?? '');
  }
}

/** A query string value as the JSON value of its field; booleans in any case (`True`, `false`). */
function queryValue(field: FieldRow, value: string): Json {
  if (field.kind !== 'bool') return value;
  const lower = value.toLowerCase();
  if (lower === 'true' || lower === 'false') return lower === 'true';
  throw invalidArgument(field.json, `expected true or false, got "${value}"`);
}

function setPath(json: JsonObject, path: string[], value: string): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (rest.length === 0) {
    json[head] = value;
    return;
  }
  const child = json[head];
  const object: JsonObject =
    child !== null && typeof child === 'object' && !Array.isArray(child) ? child : {};
  json[head] = object;
  setPath(object, rest, value);
}
