import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crdFor, KINDS } from './crds.ts';
import type { Api } from './descriptor.ts';
import { loadApi } from './load-api.ts';
import {
  INT64_TYPE,
  RESOURCE_TYPES_PATH,
  resourceModels,
  resourceTypesSource,
  schemaType,
  type ResourceModel,
} from './resource-types.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
let api: Api;

beforeAll(() => {
  api = loadApi();
}, 60_000);

function model(kind: string): ResourceModel {
  const found = resourceModels(api).kinds.find((k) => k.kind === kind);
  if (found === undefined) throw new Error(`No model of ${kind}`);
  return found;
}

/** The property's TypeScript type, by name. */
function types(properties: ResourceModel['spec']): Record<string, string> {
  return Object.fromEntries(properties.map((p) => [p.name, p.type]));
}

type Schema = { properties?: Record<string, unknown> };

/** The property names the kind's CRD schema gives its spec and status. */
function crdFields(kind: (typeof KINDS)[number]): { spec: string[]; status: string[] } {
  const crd = crdFor(api, kind) as {
    spec: { versions: { schema: { openAPIV3Schema: { properties: { spec: Schema; status: Schema } } } }[] };
  };
  const schema = crd.spec.versions[0]?.schema.openAPIV3Schema.properties;
  return {
    spec: Object.keys(schema?.spec.properties ?? {}),
    status: Object.keys(schema?.status.properties ?? {}),
  };
}

describe('the types of the stored custom resources', () => {
  it('gives each field the JSON type the gateway stores it as', () => {
    const spec = types(model('DAIEngine').spec);
    expect(spec['storageBytes']).toBe(INT64_TYPE);
    expect(spec['memoryBytes']).toBe(INT64_TYPE);
    expect(spec['cpu']).toBe('number');
    expect(spec['daiEngineVersion']).toBe('string');
    expect(spec['config']).toBe('{ [key: string]: string }');
    expect(spec['maxIdleDuration']).toBe('string');
    expect(spec['paused']).toBe('boolean');
    const status = types(model('DAIEngine').status);
    expect(status['state']).toBe('DAIEngineState');
    expect(status['resumeTime']).toBe('string');
    expect(status['profileInfo']).toBe('DAIEngineProfileInfo');
    expect(status['observedGeneration']).toBe('number');
    expect(types(model('SandboxEngine').status)['sandboxEngineTemplateInfo']).toBe(
      'SandboxEngineTemplateInfo',
    );
    expect(types(model('H2OEngine').spec)['nodeCount']).toBe('number');
  });

  it('keeps name, uid and times out of spec and status: they live in the metadata', () => {
    for (const kind of ['DAIEngine', 'SandboxEngine', 'Process']) {
      const names = [...model(kind).spec, ...model(kind).status].map((p) => p.name);
      for (const field of ['name', 'uid', 'createTime', 'deleteTime']) expect(names).not.toContain(field);
    }
  });

  it('names the enums and messages it refers to', () => {
    const { types: named } = resourceModels(api);
    const state = named.find((t) => t.name === 'DAIEngineState');
    const literals = state !== undefined && 'literals' in state.body ? state.body.literals : [];
    expect(literals).toContain('STATE_RUNNING');
    expect(literals).toContain('STATE_PAUSED');
    const template = named.find((t) => t.name === 'SandboxEngineTemplateInfo');
    const fields =
      template !== undefined && 'properties' in template.body ? types(template.body.properties) : {};
    expect(fields['memoryBytesLimit']).toBe(INT64_TYPE);
    expect(fields['milliCpuLimit']).toBe('number');
    expect(fields['environmentalVariables']).toBe('{ [key: string]: string }');
  });

  it('has exactly the fields the CustomResourceDefinition of each kind has', () => {
    for (const kind of KINDS) {
      const { spec, status } = crdFields(kind);
      expect({
        kind: kind.kind,
        spec: model(kind.kind)
          .spec.map((p) => p.name)
          .sort(),
      }).toEqual({
        kind: kind.kind,
        spec: spec.sort(),
      });
      expect({
        kind: kind.kind,
        status: model(kind.kind)
          .status.map((p) => p.name)
          .sort(),
      }).toEqual({
        kind: kind.kind,
        status: status.sort(),
      });
    }
  });

  it('types the fields kept beside the API message from their schemas', () => {
    expect(
      schemaType({
        type: 'array',
        items: {
          type: 'object',
          required: ['type'],
          properties: { type: { type: 'string' }, status: { type: 'string', enum: ['True', 'False'] } },
        },
      }),
    ).toBe('({ type: string; status?: "True" | "False" })[]');
    expect(() => schemaType({ type: 'null' })).toThrow('No TypeScript type');
  });

  it('is what make generate last wrote', () => {
    expect(readFileSync(join(ROOT, RESOURCE_TYPES_PATH), 'utf8')).toBe(resourceTypesSource(api));
  });
});
