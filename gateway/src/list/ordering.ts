/**
 * AIP-132 `order_by` as sort keys. An item's key is its value of each order field, in the form
 * that compares by the field's type, followed by tie-breakers that make the order total (e.g.
 * newest first, then by name). Keys are computed once per item, and they are what a page token
 * remembers: the next page starts after the last key shown, wherever that item is now.
 */
import { invalidArgument } from '../errors/api-error.ts';
import type { Json } from '../json/canonical.ts';
import {
  compareSortValues,
  sortValue,
  type Comparable,
  type FieldType,
  type FilterSchema,
} from './filter.ts';

/** An item's sort key: one value per order field; `undefined` where the item has none. */
export type SortKey = readonly (Comparable | undefined)[];

export interface Ordering<T> {
  /** The fields and directions, e.g. `create_time desc,name asc`: equal ids order alike. */
  readonly id: string;
  key(item: T): SortKey;
  compare(a: SortKey, b: SortKey): number;
  /** The key as JSON (for page tokens), and back; `undefined` for JSON that is no such key. */
  encode(key: SortKey): Json;
  decode(json: unknown): SortKey | undefined;
}

interface OrderField<T> {
  field: string;
  type: FieldType;
  sign: 1 | -1;
  get: (item: T) => Comparable | undefined;
}

/**
 * The ordering of `orderBy` ("field [desc], other") over `schema`, then `tieBreakers` in the
 * same syntax (each field the caller did not name already).
 *
 * @throws ApiError INVALID_ARGUMENT naming `order_by`
 */
export function compileOrdering<T>(
  orderBy: string,
  schema: FilterSchema<T>,
  tieBreakers: readonly string[],
): Ordering<T> {
  const requested = orderParts(orderBy).map((part, index, parts) =>
    orderField(schema, part, parts.slice(0, index)),
  );
  const named = new Set(requested.map((f) => f.field));
  const fields = [
    ...requested,
    ...tieBreakers.map((part) => orderField(schema, part, [])).filter((f) => !named.has(f.field)),
  ];
  return {
    id: fields.map((f) => `${f.field} ${f.sign < 0 ? 'desc' : 'asc'}`).join(','),
    key: (item) => fields.map((f) => f.get(item)),
    compare: (a, b) => {
      for (const [i, f] of fields.entries()) {
        const order = compareSortValues(f.type, a[i], b[i]);
        if (order !== 0) return f.sign * order;
      }
      return 0;
    },
    encode: (key) => key.map(encodeValue),
    decode: (json) =>
      Array.isArray(json) && json.length === fields.length
        ? decodeValues(
            json,
            fields.map((f) => f.type),
          )
        : undefined,
  };
}

/** The comma-separated parts of an `order_by`, trimmed, the empty ones dropped. */
function orderParts(orderBy: string): string[] {
  return orderBy
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

function orderField<T>(schema: FilterSchema<T>, part: string, earlier: readonly string[]): OrderField<T> {
  const [field = '', direction = 'asc', extra] = part.split(/\s+/);
  const spec = Object.hasOwn(schema, field) ? schema[field] : undefined;
  if (spec === undefined) {
    throw invalidArgument(
      'order_by',
      `unknown field "${field.slice(0, 64)}"; orderable: ${Object.keys(schema).join(', ')}`,
    );
  }
  if (extra !== undefined || !['asc', 'desc'].includes(direction)) {
    throw invalidArgument(
      'order_by',
      `"${part.slice(0, 64)}" must be a field, optionally followed by "desc"`,
    );
  }
  // Each field once: a repeat orders nothing more, and it bounds the work of every comparison.
  if (earlier.some((other) => other.split(/\s+/)[0] === field)) {
    throw invalidArgument('order_by', `"${field}" is named more than once`);
  }
  return {
    field,
    type: spec.type,
    sign: direction === 'desc' ? -1 : 1,
    get: (item) => sortValue(spec, item),
  };
}

/** JSON has no bigint and no undefined: `{"i": "<digits>"}` and null stand for them. */
function encodeValue(value: Comparable | undefined): Json {
  if (value === undefined) return null;
  return typeof value === 'bigint' ? { i: value.toString() } : value;
}

function decodeValues(json: readonly unknown[], types: readonly FieldType[]): SortKey | undefined {
  const values: (Comparable | undefined)[] = [];
  for (const [i, item] of json.entries()) {
    const value = decodeValue(item);
    // A value of the wrong kind for its field was not made by this server.
    if (value === null || (value !== undefined && !fits(types[i], value))) return undefined;
    values.push(value);
  }
  return values;
}

function decodeValue(json: unknown): Comparable | undefined | null {
  if (json === null) return undefined;
  if (typeof json === 'string' || typeof json === 'number' || typeof json === 'boolean') return json;
  if (typeof json === 'object' && 'i' in json && typeof json.i === 'string' && /^-?\d{1,40}$/.test(json.i)) {
    return BigInt(json.i);
  }
  return null;
}

/** Whether a decoded value has the form `sortValue` gives fields of the type. */
function fits(type: FieldType | undefined, value: Comparable): boolean {
  switch (type) {
    case 'int':
    case 'duration':
      return typeof value === 'bigint';
    case 'timestamp':
      return typeof value === 'number' && Number.isFinite(value);
    case 'bool':
      return typeof value === 'boolean';
    default:
      return typeof value === 'string';
  }
}
