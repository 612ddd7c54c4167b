/**
 * The JSON text REST answers are written as is byte for byte what JSON.stringify writes of the
 * canonical JSON object: for any message of the API, as built or frozen as the watch cache keeps
 * it (its text then kept), and for engines whose durations grow between reads.
 */
import { afterEach, describe, expect, jest, test } from '@jest/globals';
import fc from 'fast-check';
import { ENUMS, MESSAGES, type FieldRow } from '../gen/messages.ts';
import { deepFreeze, SharedParts } from '../../../shared/shared-parts.ts';
import {
  ID_LABEL,
  LAST_ACTIVITY_ANNOTATION,
  RESOURCE_KINDS,
  WORKSPACE_LABEL,
} from '../../../shared/resources.ts';
import { fromCustomResource, type CustomResource } from '../store/objects.ts';
import { fromJson, toJson, type Json } from './canonical.ts';
import { toJsonText } from './canonical-text.ts';

// Thousands of generated messages per property: about 1.5 s alone, beyond the default 5 s on a
// machine busy with other suites.
jest.setTimeout(60_000);

const TYPES = Object.keys(MESSAGES).sort();
const MAX_DEPTH = 3;

const previous = (type: string, message: object): string => JSON.stringify(toJson(type, message));

/** deepFreeze, but for bytes (typed arrays with elements cannot be frozen; no cached kind has them). */
function frozen<T>(value: T): T {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value) || value instanceof Date)
    return value;
  for (const child of Object.values(value)) frozen(child);
  return Object.freeze(value);
}

function scalar(kind: FieldRow['kind'], type: string | undefined): fc.Arbitrary<Json> {
  switch (kind) {
    case 'string':
      return fc.string({ unit: 'binary', maxLength: 12 });
    case 'bool':
      return fc.boolean();
    case 'int32':
      return fc.integer();
    case 'int64':
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);
    case 'double':
      return fc.oneof(fc.double(), fc.constantFrom('NaN', 'Infinity', '-Infinity'));
    case 'bytes':
      return fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b).toString('base64'));
    case 'enum':
      return fc.oneof(
        fc.constantFrom(...(ENUMS[type ?? ''] ?? [['X', 0] as const]).map(([name]) => name)),
        fc.integer({ min: -2, max: 99 }),
      );
    default:
      return fc.constant(null);
  }
}

function message(type: string | undefined, depth: number): fc.Arbitrary<Json> {
  switch (type) {
    case 'google.protobuf.Duration':
      return fc
        .tuple(fc.integer({ min: -1e6, max: 1e6 }), fc.integer({ min: 0, max: 999_999_999 }))
        .map(([s, n]) => `${s}.${String(n).padStart(9, '0')}s`);
    case 'google.protobuf.Timestamp':
      return fc.date({ noInvalidDate: true, min: new Date(0) }).map((d) => d.toISOString());
    case 'google.protobuf.FieldMask':
      return fc.array(fc.constantFrom('cpu', 'display_name', 'a.b')).map((p) => p.join(','));
    default:
      return depth >= MAX_DEPTH || type === undefined || MESSAGES[type] === undefined
        ? fc.constant(null)
        : body(type, depth + 1);
  }
}

function value(field: FieldRow, depth: number): fc.Arbitrary<Json> {
  const one = (kind: FieldRow['kind']): fc.Arbitrary<Json> =>
    kind === 'message' ? message(field.type, depth) : scalar(kind, field.type);
  if (field.repeated) return fc.array(one(field.kind), { maxLength: 3 });
  if (field.kind === 'map')
    // Keys that look like numbers too: JSON.stringify writes those first.
    return fc.dictionary(
      fc.oneof(fc.string({ maxLength: 6 }), fc.nat(20).map(String)),
      one(field.value ?? 'string'),
      {
        maxKeys: 4,
      },
    );
  return one(field.kind);
}

function body(type: string, depth = 0): fc.Arbitrary<Json> {
  const entries = (MESSAGES[type] ?? []).map((field) => [field.json, value(field, depth)] as const);
  return fc.record(Object.fromEntries(entries), { requiredKeys: [] }).map((r) => r as Json);
}

/** A message of any type of the API, as read from JSON, with some of its fields then unset. */
const messages = fc
  .constantFrom(...TYPES)
  .chain((type) => fc.tuple(fc.constant(type), body(type), fc.array(fc.nat(40), { maxLength: 4 })))
  .map(([type, json, unset]) => {
    let read: Record<string, unknown>;
    try {
      read = fromJson(type, json);
    } catch {
      read = {};
    }
    const fields = MESSAGES[type] ?? [];
    const left = new Set(unset.map((i) => fields[i % Math.max(1, fields.length)]?.json));
    return [type, Object.fromEntries(Object.entries(read).filter(([key]) => !left.has(key)))] as const;
  });

describe('toJsonText()', () => {
  test('writes what JSON.stringify writes of the canonical JSON, for any message', () => {
    fc.assert(
      fc.property(messages, ([type, read]) => {
        expect(toJsonText(type, read)).toBe(previous(type, read));
      }),
      { numRuns: 3_000 },
    );
  });

  test('writes a frozen message the same, and the same again from what it kept', () => {
    fc.assert(
      fc.property(messages, ([type, read]) => {
        const expected = previous(type, read);
        const cached = frozen(read);
        expect(toJsonText(type, cached)).toBe(expected);
        expect(toJsonText(type, cached)).toBe(expected);
      }),
      { numRuns: 3_000 },
    );
  });

  test('writes a parsed answer equal to the canonical JSON', () => {
    fc.assert(
      fc.property(messages, ([type, read]) => {
        expect(JSON.parse(toJsonText(type, frozen(read)))).toEqual(toJson(type, read));
      }),
      { numRuns: 500 },
    );
  });
});

describe('toJsonText() of cached engines', () => {
  const ENGINE = RESOURCE_KINDS.DAIEngine;
  const LIST = 'ai.h2o.engine.v1.ListDAIEnginesResponse';
  const start = new Date('2026-11-28T10:00:00Z');

  afterEach(() => {
    jest.useRealTimers();
  });

  /** An engine as the watch cache keeps it: read from its resource, its parts shared, frozen. */
  function cachedEngine(id: string, state: string, lastActivity?: string): object {
    const resource: CustomResource = {
      apiVersion: 'engine.h2o.ai/v1',
      kind: 'DAIEngine',
      metadata: {
        name: `w.${id}`,
        labels: { [WORKSPACE_LABEL]: 'w', [ID_LABEL]: id },
        uid: `uid-${id}`,
        creationTimestamp: '2026-11-28T09:00:00Z',
        ...(lastActivity === undefined ? {} : { annotations: { [LAST_ACTIVITY_ANNOTATION]: lastActivity } }),
      },
      spec: {
        profile: 'workspaces/global/daiEngineProfiles/p',
        daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6',
        cpu: 2,
        memoryBytes: '8589934592',
        config: { b: '1', a: '2', '10': 'x', '2': 'y' },
      },
      status: {
        state,
        runningSince: '2026-11-28T09:30:00Z',
        profileInfo: {
          name: 'workspaces/global/daiEngineProfiles/p',
          displayName: 'P',
          cpuConstraint: { min: '1', default: '1' },
        },
      },
    };
    return deepFreeze(new SharedParts().intern(fromCustomResource(ENGINE, resource)));
  }

  test('writes running and idle durations as they are at each read', () => {
    jest.useFakeTimers({ now: start });
    const engines = [
      cachedEngine('e1', 'STATE_RUNNING', '2026-11-28T09:50:00Z'),
      cachedEngine('e2', 'STATE_PAUSED'),
      cachedEngine('e3', 'STATE_RUNNING'),
    ];
    const page = { daiEngines: engines, nextPageToken: 'next', totalSize: 3 };
    const seen = new Set<string>();
    for (const ms of [0, 999, 1_000, 61_500, 3_600_000]) {
      jest.setSystemTime(start.getTime() + ms);
      const text = toJsonText(LIST, page);
      expect(text).toBe(previous(LIST, page));
      seen.add(text);
    }
    // Each second read shows its own durations: nothing of them was kept.
    expect(seen.size).toBe(4);
    jest.setSystemTime(start.getTime() + 61_500);
    expect(JSON.parse(toJsonText(LIST, page))).toMatchObject({
      daiEngines: [
        { currentRunningDuration: '1861s', currentIdleDuration: '661s' },
        { currentRunningDuration: '0s', currentIdleDuration: '0s' },
        { currentRunningDuration: '1861s', currentIdleDuration: '1861s' },
      ],
    });
  });
});
