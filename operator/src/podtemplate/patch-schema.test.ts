import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { StrategicMergeError } from './errors.ts';
import { KUBERNETES_VERSION, PATCH_METADATA } from './gen/patch-metadata.ts';
import { lookupField, lookupListField, schemaType, type FieldMetadata } from './patch-schema.ts';

describe('lookupField()', () => {
  const podSpec = schemaType('PodSpec');

  test('gives the strategy without retainKeys, the merge key and the field type', () => {
    expect(lookupField(podSpec, 'volumes', 'spec.volumes')).toStrictEqual({
      type: { kind: 'list', items: 'Volume' },
      strategy: 'merge',
      mergeKey: 'name',
    });
    expect(lookupField(podSpec, 'nodeSelector', 'spec.nodeSelector')).toStrictEqual({
      type: { kind: 'map', values: 'string' },
      strategy: '',
      mergeKey: '',
    });
  });

  test('accepts a name that differs only in case, as encoding/json does', () => {
    expect(lookupField(podSpec, 'NodeSelector', 'spec.NodeSelector').type).toStrictEqual({
      kind: 'map',
      values: 'string',
    });
  });

  test('refuses unknown fields and objects in place of scalars', () => {
    expect(() => lookupField(podSpec, 'sidecars', 'spec.sidecars')).toThrow(
      new StrategicMergeError('spec.sidecars', 'PodSpec has no field "sidecars"'),
    );
    expect(() => lookupField(schemaType('string'), 'a', 'spec.hostname.a')).toThrow(StrategicMergeError);
    expect(() => lookupField(schemaType('map[string]string'), 'a', 'spec.nodeSelector.a')).toThrow(
      StrategicMergeError,
    );
  });
});

describe('lookupListField()', () => {
  test('gives the element type of a list field', () => {
    expect(lookupListField(schemaType('Container'), 'env', 'env')).toStrictEqual({
      type: { kind: 'struct', name: 'EnvVar', fields: PATCH_METADATA.EnvVar },
      strategy: 'merge',
      mergeKey: 'name',
    });
    expect(lookupListField(schemaType('ObjectMeta'), 'finalizers', 'metadata.finalizers').type).toStrictEqual(
      {
        kind: 'scalar',
        name: 'string',
      },
    );
  });

  test('refuses a field that is not a list', () => {
    expect(() => lookupListField(schemaType('PodSpec'), 'hostname', 'spec.hostname')).toThrow(
      StrategicMergeError,
    );
  });
});

/**
 * kubectl takes the patch metadata from the Go struct tags of k8s.io/api, the table from the
 * OpenAPI document generated from them; this reads the tags from the module cache and checks
 * that the two say the same, field by field.
 */
describe('the generated patch metadata', () => {
  const staging = `v0.${KUBERNETES_VERSION.slice('v1.'.length)}`;
  const structs = new Map([
    ...goStructs(readFileSync(join(moduleDir(`k8s.io/api@${staging}`), 'core/v1/types.go'), 'utf8')),
    ...goStructs(
      readFileSync(join(moduleDir(`k8s.io/apimachinery@${staging}`), 'pkg/apis/meta/v1/types.go'), 'utf8'),
    ),
  ]);
  const table: Readonly<Record<string, Readonly<Record<string, FieldMetadata>>>> = PATCH_METADATA;

  test(`matches the struct tags of k8s.io/api ${staging} for every type under PodTemplateSpec`, () => {
    let compared = 0;
    for (const [name, fields] of Object.entries(table)) {
      if (!structs.has(name)) continue;
      compared++;
      const tags = Object.fromEntries(
        goFields(structs, name).map((field) => [
          field.json,
          { strategy: field.strategy, mergeKey: field.mergeKey },
        ]),
      );
      const generated = Object.fromEntries(
        Object.entries(fields).map(([json, field]) => [
          json,
          { strategy: field.patchStrategy, mergeKey: field.patchMergeKey },
        ]),
      );
      expect({ type: name, fields: generated }).toStrictEqual({ type: name, fields: tags });
    }
    // Only scalars with OpenAPI names (Quantity, Time…) and the opaque FieldsV1 lack a Go struct here.
    expect(compared).toBeGreaterThanOrEqual(Object.keys(table).length - 1);
  });
});

interface GoField {
  json: string;
  strategy: string | undefined;
  mergeKey: string | undefined;
}

interface GoStruct {
  fields: GoField[];
  /** Embedded structs whose fields encoding/json promotes. */
  inline: string[];
}

function moduleDir(module: string): string {
  let cache: string;
  try {
    cache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  } catch {
    cache = join(homedir(), 'go', 'pkg', 'mod');
  }
  return join(cache, module);
}

/** The structs of a Go file, read line by line: gofmt'd API types have one field per line. */
function goStructs(source: string): Map<string, GoStruct> {
  const structs = new Map<string, GoStruct>();
  let current: GoStruct | undefined;
  for (const line of source.split('\n')) {
    const start = /^type (\w+) struct \{$/.exec(line);
    if (start?.[1] !== undefined) structs.set(start[1], (current = { fields: [], inline: [] }));
    else if (line === '}') current = undefined;
    else if (current !== undefined) addGoField(current, line);
  }
  return structs;
}

function addGoField(struct: GoStruct, line: string): void {
  const embedded = /^\t(?:\w+\.)?(\w+)(?:\s+`json:",inline"[^`]*`)?$/.exec(line);
  if (embedded?.[1] !== undefined) {
    struct.inline.push(embedded[1]);
    return;
  }
  const field = /^\t[^`/][^`]*`([^`]*)`$/.exec(line);
  const tags = field?.[1];
  const json = tags === undefined ? undefined : /json:"([^,"]*)/.exec(tags)?.[1];
  if (tags === undefined || json === undefined || json === '' || json === '-') return;
  struct.fields.push({
    json,
    strategy: /patchStrategy:"([^"]*)"/.exec(tags)?.[1],
    mergeKey: /patchMergeKey:"([^"]*)"/.exec(tags)?.[1],
  });
}

function goFields(structs: Map<string, GoStruct>, name: string): GoField[] {
  const struct = structs.get(name);
  if (struct === undefined) return [];
  return [...struct.inline.flatMap((inner) => goFields(structs, inner)), ...struct.fields];
}
