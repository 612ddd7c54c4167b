/**
 * Canonical proto3 JSON for the REST gateway, over the objects that ts-proto generates
 * (int64 as decimal strings, enums as numbers, Timestamp as Date, Duration as
 * {seconds, nanos}, FieldMask as string[]). ts-proto's own JSON methods are not canonical
 * (Duration becomes an object), so the REST side speaks through this module alone.
 *
 * Output follows "emit unpopulated": every scalar, list and map is present, with zero values
 * where unset; unset messages and unset `optional` scalars are omitted, never null.
 * Input accepts `null` as "unset" and ignores fields this server does not know (see
 * ARCHITECTURE.md, Decisions).
 */
import { ENUMS, MESSAGES, type FieldRow } from '../gen/messages.ts';

/** A JSON value as JSON.parse returns it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A value that does not fit its field; `field` is the JSON path, e.g. `daiEngine.cpu`. */
export class JsonFieldError extends Error {
  override name = 'JsonFieldError';
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
  }
}

type Obj = Record<string, unknown>;

const DURATION = 'google.protobuf.Duration';
const TIMESTAMP = 'google.protobuf.Timestamp';
const FIELD_MASK = 'google.protobuf.FieldMask';
const HTTP_BODY = 'google.api.HttpBody';
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function fieldsOf(type: string): readonly FieldRow[] {
  const fields = MESSAGES[type];
  if (fields === undefined) throw new TypeError(`Unknown message type ${type}`);
  return fields;
}

// ---------------------------------------------------------------- writing

/** The canonical JSON of a message of `type`. */
export function toJson(type: string, message: object): { [key: string]: Json } {
  const out: { [key: string]: Json } = {};
  const fields = message as Obj;
  for (const field of fieldsOf(type)) {
    const value = fields[field.json];
    if (value === undefined || value === null) {
      const zero = zeroJson(field);
      if (zero !== undefined) out[field.json] = zero;
      continue;
    }
    out[field.json] = fieldToJson(field, value);
  }
  return out;
}

/** What an unset field looks like: zero values for plain scalars, lists and maps; absent otherwise. */
function zeroJson(field: FieldRow): Json | undefined {
  if (field.repeated) return [];
  if (field.kind === 'map') return {};
  if (field.optional || field.kind === 'message') return undefined;
  return scalarToJson(field.kind, field.type, zeroValue(field.kind));
}

function fieldToJson(field: FieldRow, value: unknown): Json {
  if (field.repeated) return (value as unknown[]).map((v) => valueToJson(field.kind, field.type, v));
  if (field.kind === 'map') {
    const entries = Object.entries(value as Obj).map(([k, v]) => [
      k,
      valueToJson(field.value ?? 'string', field.type, v),
    ]);
    return Object.fromEntries(entries) as { [key: string]: Json };
  }
  return valueToJson(field.kind, field.type, value);
}

function valueToJson(kind: FieldRow['kind'], type: string | undefined, value: unknown): Json {
  if (kind === 'message') return messageToJson(type ?? '', value);
  return scalarToJson(kind, type, value);
}

function messageToJson(type: string, value: unknown): Json {
  if (type === DURATION) return durationToJson(value as { seconds: string; nanos: number });
  if (type === TIMESTAMP) return timestampToJson(value as Date);
  if (type === FIELD_MASK) return (value as string[]).join(',');
  if (type === HTTP_BODY) {
    const body = value as { contentType: string; data: Uint8Array };
    return { contentType: body.contentType, data: Buffer.from(body.data).toString('base64'), extensions: [] };
  }
  return toJson(type, value as Obj);
}

function scalarToJson(kind: FieldRow['kind'], type: string | undefined, value: unknown): Json {
  switch (kind) {
    case 'int64':
      return value as string;
    case 'bytes':
      return Buffer.from(value as Uint8Array).toString('base64');
    case 'enum':
      return ENUMS[type ?? '']?.find(([, n]) => n === value)?.[0] ?? (value as number);
    case 'double':
      return doubleToJson(value as number);
    default:
      return value as Json;
  }
}

/** A double as proto3 JSON writes it: a number, or the strings "NaN", "Infinity", "-Infinity". */
function doubleToJson(value: number): Json {
  return Number.isFinite(value) ? value : String(value);
}

function zeroValue(kind: FieldRow['kind']): unknown {
  const zeros: Partial<Record<FieldRow['kind'], unknown>> = {
    string: '',
    bool: false,
    int32: 0,
    double: 0,
    int64: '0',
    bytes: new Uint8Array(),
    enum: 0,
  };
  return zeros[kind];
}

/** `"3600s"`, `"1.5s"`, `"-0.000000001s"`: seconds with 0, 3, 6 or 9 fractional digits. */
export function durationToJson(duration: { seconds: string; nanos: number }): string {
  const seconds = BigInt(duration.seconds);
  const negative = seconds < 0n || duration.nanos < 0;
  const whole = seconds < 0n ? -seconds : seconds;
  const nanos = Math.abs(duration.nanos);
  if (nanos === 0) return `${negative ? '-' : ''}${whole}s`;
  let fraction = String(nanos).padStart(9, '0');
  while (fraction.endsWith('000')) fraction = fraction.slice(0, -3);
  return `${negative ? '-' : ''}${whole}.${fraction}s`;
}

/** RFC 3339 in UTC with a `Z`, and milliseconds only when there are any. */
export function timestampToJson(date: Date): string {
  return date.toISOString().replace('.000Z', 'Z');
}

// ---------------------------------------------------------------- reading

/**
 * Reads the canonical JSON of a message of `type` into the generated TypeScript shape.
 * `path` prefixes field names in errors (e.g. the request field the body binds to).
 *
 * @throws JsonFieldError when a value does not fit its field
 */
export function fromJson(type: string, json: Json, path = ''): Obj {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new JsonFieldError(path || '(body)', `expected a JSON object, got ${describe(json)}`);
  }
  const out: Obj = {};
  for (const field of fieldsOf(type)) {
    const value = json[field.json];
    const read =
      value === undefined || value === null
        ? zeroFor(field)
        : readField(field, value, join(path, field.json));
    if (read !== undefined) out[field.json] = read;
  }
  return out;
}

function join(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

function zeroFor(field: FieldRow): unknown {
  if (field.repeated) return [];
  if (field.kind === 'map') return {};
  if (field.optional || field.kind === 'message') return undefined;
  return zeroValue(field.kind);
}

function readField(field: FieldRow, value: Json, at: string): unknown {
  if (field.repeated) {
    if (!Array.isArray(value)) throw new JsonFieldError(at, `expected a list, got ${describe(value)}`);
    return value.map((v, i) => readValue(field.kind, field.type, v, `${at}[${i}]`));
  }
  if (field.kind === 'map') {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new JsonFieldError(at, `expected an object, got ${describe(value)}`);
    }
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        readValue(field.value ?? 'string', field.type, v, `${at}["${k}"]`),
      ]),
    );
  }
  return readValue(field.kind, field.type, value, at);
}

type Reader = (value: Json, at: string, type: string | undefined) => unknown;

const READERS: Record<FieldRow['kind'], Reader> = {
  string: (value, at) => {
    if (typeof value !== 'string') throw new JsonFieldError(at, `expected a string, got ${describe(value)}`);
    return value;
  },
  bool: (value, at) => {
    if (typeof value !== 'boolean')
      throw new JsonFieldError(at, `expected true or false, got ${describe(value)}`);
    return value;
  },
  int32: (value, at) => Number(readInteger(value, at, -(2n ** 31n), 2n ** 31n - 1n)),
  int64: (value, at) => String(readInteger(value, at, INT64_MIN, INT64_MAX)),
  double: (value, at) => {
    if (typeof value === 'number') return value;
    if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') return Number(value);
    if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
      return Number(value);
    throw new JsonFieldError(at, `expected a number, got ${describe(value)}`);
  },
  bytes: (value, at) => {
    if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) {
      throw new JsonFieldError(at, `expected base64 data, got ${describe(value)}`);
    }
    return new Uint8Array(Buffer.from(value, 'base64'));
  },
  enum: (value, at, type) => readEnum(value, at, type ?? ''),
  message: (value, at, type) => readMessage(value, at, type ?? ''),
  map: (_value, at) => {
    throw new JsonFieldError(at, 'nested maps are not supported');
  },
};

function readValue(kind: FieldRow['kind'], type: string | undefined, value: Json, at: string): unknown {
  return READERS[kind](value, at, type);
}

/** An integer from a JSON number or a decimal string, within [min, max]. */
function readInteger(value: Json, at: string, min: bigint, max: bigint): bigint {
  let parsed: bigint | undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value)) parsed = BigInt(value);
  if (typeof value === 'string' && /^-?[0-9]+$/.test(value)) parsed = BigInt(value);
  if (parsed === undefined) throw new JsonFieldError(at, `expected an integer, got ${describe(value)}`);
  if (parsed < min || parsed > max)
    throw new JsonFieldError(at, `${parsed} is out of range [${min}, ${max}]`);
  return parsed;
}

function readEnum(value: Json, at: string, type: string): number {
  const values = ENUMS[type] ?? [];
  const found = values.find(([name, number]) => name === value || number === value);
  if (found === undefined) {
    throw new JsonFieldError(
      at,
      `${describe(value)} is not one of ${values.map(([name]) => name).join(', ')}`,
    );
  }
  return found[1];
}

function readMessage(value: Json, at: string, type: string): unknown {
  if (type === DURATION) return readDuration(value, at);
  if (type === TIMESTAMP) return readTimestamp(value, at);
  if (type === FIELD_MASK) {
    if (typeof value !== 'string')
      throw new JsonFieldError(at, `expected comma-separated paths, got ${describe(value)}`);
    return value === '' ? [] : value.split(',');
  }
  if (type === HTTP_BODY) return readHttpBody(value, at);
  return fromJson(type, value, at);
}

/** An HttpBody: content type and base64 data. */
function readHttpBody(value: Json, at: string): { contentType: string; data: Uint8Array; extensions: [] } {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new JsonFieldError(at, `expected an object, got ${describe(value)}`);
  const { contentType = '', data = '' } = value as { contentType?: Json; data?: Json };
  if (typeof contentType !== 'string' || typeof data !== 'string')
    throw new JsonFieldError(at, 'expected contentType and base64 data');
  return { contentType, data: new Uint8Array(Buffer.from(data, 'base64')), extensions: [] };
}

const DURATION_TEXT = /^(-)?([0-9]+)(?:\.([0-9]{1,9}))?s$/;
const MAX_DURATION_SECONDS = 315_576_000_000n;

/** A Duration from `"<seconds>[.<fraction>]s"`, within ±10,000 years as protobuf requires. */
export function readDuration(value: Json, at: string): { seconds: string; nanos: number } {
  const match = typeof value === 'string' ? DURATION_TEXT.exec(value) : null;
  if (match === null) {
    throw new JsonFieldError(at, `expected a duration such as "3600s" or "1.5s", got ${describe(value)}`);
  }
  const [, minus, whole = '0', fraction = ''] = match;
  const seconds = BigInt(whole);
  if (seconds > MAX_DURATION_SECONDS)
    throw new JsonFieldError(at, `${value as string} is longer than 10000 years`);
  const nanos = Number(fraction.padEnd(9, '0'));
  const sign = minus ? -1 : 1;
  return { seconds: String(seconds * BigInt(sign)), nanos: nanos === 0 ? 0 : nanos * sign };
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

function readTimestamp(value: Json, at: string): Date {
  const date = typeof value === 'string' && RFC3339.test(value) ? new Date(value) : undefined;
  if (date === undefined || Number.isNaN(date.getTime())) {
    throw new JsonFieldError(
      at,
      `expected an RFC 3339 time such as "2026-01-02T03:04:05Z", got ${describe(value)}`,
    );
  }
  return date;
}

function describe(value: Json | undefined): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
