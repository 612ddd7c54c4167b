/**
 * JSON values as the strategic merge handles them, with the distinctions kubectl makes between
 * them: kubectl decodes documents into Go values, so integers and other numbers are different
 * types, and comparing two objects or two lists is an error rather than false.
 */
import { StrategicMergeError } from './errors.ts';

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** The Go type a decoded JSON value has: values of different kinds never merge. */
export type JsonKind = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'list' | 'object';

export function kindOf(value: JsonValue): JsonKind {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'object') return 'object';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value === 'boolean' ? 'boolean' : 'string';
}

export function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Sets a key, even `__proto__`: a plain assignment of that key would change the object's
 * prototype instead of adding a field.
 */
export function setField(object: JsonObject, key: string, value: JsonValue): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Removes a field; the keys are data, which is why they are computed. */
export function removeField(object: JsonObject, key: string): void {
  Reflect.deleteProperty(object, key);
}

/** The value of an own field; undefined when absent (JSON has no undefined, so it is unambiguous). */
export function fieldOf(object: JsonObject, key: string): JsonValue | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/**
 * Whether two values are equal as merge keys or list members: scalars by type and value;
 * objects and lists cannot be compared (kubectl fails on them), a scalar never equals either.
 * @throws StrategicMergeError when both are objects or both are lists
 */
export function sameValue(left: JsonValue | undefined, right: JsonValue | undefined, path: string): boolean {
  const leftKind = left === undefined ? 'null' : kindOf(left);
  const rightKind = right === undefined ? 'null' : kindOf(right);
  if (leftKind === rightKind && (leftKind === 'object' || leftKind === 'list')) {
    throw new StrategicMergeError(path, `cannot compare two ${leftKind}s as merge keys or list members`);
  }
  return leftKind === rightKind && (left ?? null) === (right ?? null);
}

/** A deep copy that is certain to be plain JSON: Dates become strings, undefined fields vanish. */
export function copyJson<T extends JsonValue>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
