/**
 * Canonical JSON against inputs built from the API's own message tables: every value a caller
 * may send either reads into a message or is refused as a JsonFieldError naming the field
 * (never another error, which would be a 500), and what the server writes reads back into the
 * same JSON.
 */
import fc from 'fast-check';
import { ENUMS, MESSAGES, type FieldRow } from '../gen/messages.ts';
import { fromJson, JsonFieldError, toJson, type Json } from './canonical.ts';

const TYPES = Object.keys(MESSAGES).sort();
const MAX_DEPTH = 3;

/** Any JSON at all, shallow: what a confused or hostile caller sends. */
const noise: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 2 }).map((v) => v as Json);

const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });

/** A value of a scalar kind, as canonical JSON spells it (and the other spellings it allows). */
function scalar(kind: FieldRow['kind'], type: string | undefined): fc.Arbitrary<Json> {
  switch (kind) {
    case 'string':
      return fc.string({ unit: 'binary', maxLength: 12 });
    case 'bool':
      return fc.boolean();
    case 'int32':
      return fc.oneof(fc.integer(), fc.integer().map(String), fc.double());
    case 'int64':
      return fc.oneof(int64.map(String), fc.integer(), fc.bigInt().map(String), fc.string({ maxLength: 4 }));
    case 'double':
      return fc.oneof(
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e999'),
      );
    case 'bytes':
      return fc.oneof(
        fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b).toString('base64')),
        fc.string({ maxLength: 6 }),
      );
    case 'enum':
      return fc.oneof(
        fc.constantFrom(
          ...(ENUMS[type ?? ''] ?? [['X', 0] as const]).flatMap(([name, value]) => [name, value]),
        ),
        fc.integer({ min: -2, max: 99 }),
      );
    default:
      return noise;
  }
}

/** A value of a message type, with the well-known types in their string forms. */
function message(type: string | undefined, depth: number): fc.Arbitrary<Json> {
  switch (type) {
    case 'google.protobuf.Duration':
      return fc.oneof(
        fc.integer().map((s) => `${s}s`),
        fc.double().map((s) => `${s}s`),
        fc.string({ maxLength: 6 }),
      );
    case 'google.protobuf.Timestamp':
      return fc.oneof(
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        fc.constantFrom(
          '2024-02-30T00:00:00Z',
          '0001-01-01T00:00:00Z',
          '9999-12-31T23:59:59.999999999Z',
          'yesterday',
        ),
      );
    case 'google.protobuf.FieldMask':
      return fc.oneof(
        fc.array(fc.constantFrom('cpu', 'display_name', 'a.b', 'memoryBytes', '')).map((p) => p.join(',')),
        fc.string({ maxLength: 8 }),
      );
    default:
      return depth >= MAX_DEPTH || type === undefined || MESSAGES[type] === undefined
        ? noise
        : body(type, depth + 1);
  }
}

function value(field: FieldRow, depth: number): fc.Arbitrary<Json> {
  const one = (kind: FieldRow['kind']): fc.Arbitrary<Json> =>
    kind === 'message' ? message(field.type, depth) : scalar(kind, field.type);
  if (field.repeated) return fc.array(one(field.kind), { maxLength: 3 });
  if (field.kind === 'map')
    return fc.dictionary(fc.string({ maxLength: 6 }), one(field.value ?? 'string'), { maxKeys: 3 });
  return one(field.kind);
}

/** An object of `type`: some of its fields, mostly well-typed, sometimes noise or null. */
function body(type: string, depth = 0): fc.Arbitrary<Json> {
  const fields = MESSAGES[type] ?? [];
  const entries = fields.map(
    (field) =>
      [
        field.json,
        fc.oneof(
          { weight: 6, arbitrary: value(field, depth) },
          { weight: 1, arbitrary: noise },
          fc.constant(null),
        ),
      ] as const,
  );
  return fc.record(Object.fromEntries(entries), { requiredKeys: [] }).map((r) => r as Json);
}

const request = fc.constantFrom(...TYPES).chain((type) => fc.tuple(fc.constant(type), body(type)));

describe('canonical JSON over every message of the API', () => {
  test('reads any input into a message, or refuses it naming the field', () => {
    fc.assert(
      fc.property(request, ([type, json]) => {
        try {
          fromJson(type, json);
        } catch (error: unknown) {
          expect(error).toBeInstanceOf(JsonFieldError);
          expect((error as JsonFieldError).field).not.toBe('');
        }
      }),
      { numRuns: 4_000 },
    );
  });

  test('refuses anything but an object at the top, naming the body', () => {
    fc.assert(
      fc.property(fc.constantFrom(...TYPES), noise, (type, json) => {
        fc.pre(json === null || typeof json !== 'object' || Array.isArray(json));
        expect(() => fromJson(type, json)).toThrow(JsonFieldError);
      }),
      { numRuns: 300 },
    );
  });

  test('what the server writes, it reads back into the same JSON', () => {
    fc.assert(
      fc.property(request, ([type, json]) => {
        let read: Record<string, unknown>;
        try {
          read = fromJson(type, json);
        } catch {
          return;
        }
        const written = toJson(type, read);
        expect(toJson(type, fromJson(type, written))).toEqual(written);
        // And it is JSON: nothing a JSON text cannot hold (undefined, NaN as a number, bigint).
        expect(JSON.parse(JSON.stringify(written))).toEqual(written);
      }),
      { numRuns: 4_000 },
    );
  });
});
