import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DAIEngine, DAIEngine_State } from '../gen/ai/h2o/engine/v1/dai_engine.pb.ts';
import { DAIEngineProfile } from '../gen/ai/h2o/engine/v1/dai_engine_profile.pb.ts';
import { MESSAGES } from '../gen/messages.ts';
import {
  durationToJson,
  fromJson,
  JsonFieldError,
  readDuration,
  timestampToJson,
  toJson,
  type Json,
} from './canonical.ts';

const PKG = 'ai.h2o.engine.v1';

describe('Duration', () => {
  // Canonical JSON writes 0, 3, 6 or 9 fractional digits and reads any from 0 to 9.
  test.each([
    [{ seconds: '3600', nanos: 0 }, '3600s', '3600s'],
    [{ seconds: '1', nanos: 500_000_000 }, '1.500s', '1.5s'],
    [{ seconds: '0', nanos: 0 }, '0s', '0.0s'],
    [{ seconds: '0', nanos: 1 }, '0.000000001s', '0.000000001s'],
    [{ seconds: '0', nanos: 1_000 }, '0.000001s', '0.000001s'],
    [{ seconds: '-1', nanos: -500_000_000 }, '-1.500s', '-1.5s'],
  ])('%j is written as %s and read from %s', (duration, written, read) => {
    expect(durationToJson(duration)).toBe(written);
    expect(readDuration(written, 'd')).toEqual(duration);
    expect(readDuration(read, 'd')).toEqual(duration);
  });

  test.each(['1h', 'PT1H', '1.5', 's', '1.1234567891s', '315576000001s', ''])('rejects %p', (text) => {
    expect(() => readDuration(text, 'maxIdleDuration')).toThrow(JsonFieldError);
  });

  test('rejects a JSON number', () => {
    expect(() => readDuration(3600, 'maxIdleDuration')).toThrow('maxIdleDuration: expected a duration');
  });
});

describe('Timestamp', () => {
  test('is written in RFC 3339 UTC, with milliseconds only when there are any', () => {
    expect(timestampToJson(new Date('2023-02-16T10:34:13Z'))).toBe('2023-02-16T10:34:13Z');
    expect(timestampToJson(new Date('2023-02-16T10:34:13.120Z'))).toBe('2023-02-16T10:34:13.120Z');
  });
});

describe('toJson()', () => {
  test('emits zero values for unset scalars, lists, maps and enums, and omits unset messages and optionals', () => {
    const json = toJson(`${PKG}.DAIEngineProfile`, DAIEngineProfile.fromPartial({}));
    expect(json).toMatchObject({
      name: '',
      priority: 0,
      enabled: false,
      assignedOidcRoles: [],
      configurationOverride: {},
      configEditability: 'CONFIG_EDITABILITY_UNSPECIFIED',
    });
    for (const absent of [
      'maxRunningEngines',
      'cpuConstraint',
      'createTime',
      'updateTime',
      'maxUnusedDuration',
    ]) {
      expect(json).not.toHaveProperty(absent);
    }
    expect(Object.values(json)).not.toContain(null);
  });

  test('writes int64 as strings, int32 as numbers, enums by name, durations and times as text', () => {
    const engine = DAIEngine.fromPartial({
      cpu: 4,
      memoryBytes: '8589934592',
      state: DAIEngine_State.STATE_RUNNING,
      maxIdleDuration: { seconds: '3600', nanos: 0 },
      createTime: new Date('2026-01-02T03:04:05Z'),
      annotations: { team: 'a' },
    });
    expect(toJson(`${PKG}.DAIEngine`, engine)).toMatchObject({
      cpu: 4,
      memoryBytes: '8589934592',
      state: 'STATE_RUNNING',
      maxIdleDuration: '3600s',
      createTime: '2026-01-02T03:04:05Z',
      annotations: { team: 'a' },
    });
  });
});

describe('fromJson()', () => {
  test('reads a create body with nulls for unset fields and ignores unknown fields', () => {
    const body: Json = {
      profile: 'workspaces/global/daiEngineProfiles/p1',
      daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6.1',
      cpu: null,
      memoryBytes: null,
      maxIdleDuration: null,
      displayName: 'My engine',
      aFieldOfANewerClient: { x: 1 },
    };
    const engine = fromJson(`${PKG}.DAIEngine`, body);
    expect(engine).toMatchObject({
      profile: 'workspaces/global/daiEngineProfiles/p1',
      displayName: 'My engine',
    });
    expect(engine['cpu']).toBeUndefined();
    expect(engine['memoryBytes']).toBeUndefined();
    expect(engine).not.toHaveProperty('aFieldOfANewerClient');
    // The result is a valid generated message: it survives the gRPC wire format unchanged.
    const decoded = DAIEngine.decode(DAIEngine.encode(engine as unknown as DAIEngine).finish());
    expect(toJson(`${PKG}.DAIEngine`, decoded)).toEqual(toJson(`${PKG}.DAIEngine`, engine));
  });

  test('accepts integers as numbers or decimal strings, as canonical JSON allows', () => {
    expect(fromJson(`${PKG}.DAIEngine`, { cpu: '4', memoryBytes: 1024 })).toMatchObject({
      cpu: 4,
      memoryBytes: '1024',
    });
  });

  test.each<[string, Json, string]>([
    ['a word for an int32', { cpu: 'four' }, 'daiEngine.cpu: expected an integer, got "four"'],
    ['a fraction for an int32', { cpu: 1.5 }, 'daiEngine.cpu: expected an integer'],
    ['an int32 out of range', { cpu: 2 ** 31 }, 'daiEngine.cpu: 2147483648 is out of range'],
    [
      'an int64 out of range',
      { memoryBytes: '9223372036854775808' },
      'daiEngine.memoryBytes: 9223372036854775808 is out of range',
    ],
    [
      'an unknown enum value',
      { state: 'STATE_NAPPING' },
      'daiEngine.state: "STATE_NAPPING" is not one of STATE_UNSPECIFIED',
    ],
    ['a number for a string', { displayName: 5 }, 'daiEngine.displayName: expected a string, got 5'],
    [
      'a non-string map value',
      { annotations: { a: 1 } },
      'daiEngine.annotations["a"]: expected a string, got 1',
    ],
    ['a bad duration', { maxIdleDuration: '1h' }, 'daiEngine.maxIdleDuration: expected a duration'],
    ['a bad time', { createTime: '2023-02-16' }, 'daiEngine.createTime: expected an RFC 3339 time'],
    ['a string for a bool', { storageResizing: 'yes' }, 'daiEngine.storageResizing: expected true or false'],
  ])('names the field of %s', (_what, body, message) => {
    expect(() => fromJson(`${PKG}.DAIEngine`, body, 'daiEngine')).toThrow(message);
  });

  test('rejects a body that is not an object, and a nested message that is not one', () => {
    expect(() => fromJson(`${PKG}.DAIEngine`, [1, 2])).toThrow('(body): expected a JSON object');
    expect(() => fromJson(`${PKG}.DAIEngineProfile`, { cpuConstraint: 'x' })).toThrow(
      'cpuConstraint: expected a JSON object',
    );
  });

  test('a profile round-trips: JSON to message to the same canonical JSON', () => {
    const json: Json = {
      name: 'workspaces/global/daiEngineProfiles/p1',
      displayName: 'Default',
      priority: 1,
      enabled: true,
      assignedOidcRolesEnabled: true,
      assignedOidcRoles: ['data-scientist'],
      maxRunningEngines: 2,
      cpuConstraint: { min: '1', max: '8', default: '2', cumulativeMax: '16' },
      gpuConstraint: { min: '0', default: '0' },
      memoryBytesConstraint: { min: '1073741824', default: '8589934592' },
      storageBytesConstraint: { min: '1073741824', default: '10737418240' },
      maxIdleDurationConstraint: { min: '0s', max: '86400s', default: '3600s' },
      maxRunningDurationConstraint: { min: '0s', default: '1.500s' },
      configEditability: 'CONFIG_EDITABILITY_FULL',
      configurationOverride: { a: 'b' },
      createTime: '2026-01-02T03:04:05Z',
    };
    const message = fromJson(`${PKG}.DAIEngineProfile`, json);
    expect(toJson(`${PKG}.DAIEngineProfile`, message)).toMatchObject(json);
  });
});

describe('HttpBody', () => {
  test('round-trips as content type and base64 data', () => {
    const type = 'ai.h2o.engine.v1.DAIEngineServiceDownloadLogsResponse';
    const message = {
      logs: { contentType: 'text/plain', data: new TextEncoder().encode('log line'), extensions: [] },
    };
    const json = toJson(type, message);
    expect(json).toEqual({ logs: { contentType: 'text/plain', data: 'bG9nIGxpbmU=', extensions: [] } });
    expect(fromJson(type, json)).toEqual({
      logs: { ...message.logs, data: new Uint8Array(Buffer.from('log line')) },
    });
  });
});

describe('the generated field table', () => {
  test('names exactly the properties of every generated message', async () => {
    const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'gen', 'ai', 'h2o', 'engine', 'v1');
    let checked = 0;
    for (const file of readdirSync(dir)) {
      const module = (await import(join(dir, file))) as Record<string, unknown>;
      for (const [name, fns] of Object.entries(module)) {
        const partial = (fns as { fromPartial?: (o: object) => object }).fromPartial;
        if (partial === undefined || name.includes('_') || name.endsWith('ServiceService')) continue;
        const table = MESSAGES[`${PKG}.${name}`]?.map((f) => f.json);
        expect({ name, keys: Object.keys(partial({})).every((k) => table?.includes(k)) }).toEqual({
          name,
          keys: true,
        });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });
});
