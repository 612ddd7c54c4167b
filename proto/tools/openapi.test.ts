import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROUTES } from '../../gateway/src/gen/routes.ts';
import {
  anyOf,
  INT64_TEXT,
  pathParameterRule,
  refineOpenApi,
  updateMaskPattern,
  type SwaggerDocument,
} from './openapi.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PUBLISHED = join(ROOT, 'docs-site/static/openapi/engine-manager.swagger.json');
const UPDATE_PATH = '/v1/workspaces/{workspace}/daiEngineVersions/{daiEngineVersion}';

/** A document as protoc-gen-openapiv2 writes one, with one operation of each shape. */
function generated(): SwaggerDocument {
  return {
    swagger: '2.0',
    info: { title: 'ai/h2o/engine/v1/thing.proto', version: 'version not set' },
    paths: {
      '/v1/workspaces/{workspace}/things': {
        get: {
          operationId: 'ThingService_ListThings',
          parameters: [
            { name: 'workspace', in: 'path', required: true, type: 'string' },
            { name: 'pageSize', in: 'query', required: false, type: 'integer', format: 'int32' },
          ],
        },
        post: {
          operationId: 'ThingService_CreateThing',
          parameters: [
            { name: 'workspace', in: 'path', required: true, type: 'string' },
            { name: 'thingId', in: 'query', required: false, type: 'string' },
            { name: 'thing', in: 'body', required: true, schema: { $ref: '#/definitions/v1Thing' } },
          ],
        },
      },
      [UPDATE_PATH]: {
        patch: {
          operationId: 'DAIEngineVersionService_UpdateDAIEngineVersion',
          parameters: [
            { name: 'workspace', in: 'path', required: true, type: 'string' },
            { name: 'daiEngineVersion', in: 'path', required: true, type: 'string' },
            {
              name: 'daiEngineVersion',
              in: 'body',
              required: true,
              schema: { type: 'object', properties: { image: { type: 'string' } }, required: ['image'] },
            },
            { name: 'updateMask', in: 'query', required: false, type: 'string' },
          ],
        },
      },
    },
    definitions: {
      v1Thing: {
        type: 'object',
        properties: {
          sizeBytes: { type: 'string', format: 'int64' },
          aliases: { type: 'array', items: { type: 'string' } },
          image: { type: 'string' },
        },
        required: ['aliases', 'image'],
      },
      v1Aliases: {
        type: 'object',
        properties: { aliases: { type: 'array', items: { type: 'string' } } },
        required: ['aliases'],
      },
    },
  };
}

const matches = (pattern: string | undefined, value: string): boolean =>
  new RegExp(pattern ?? '(?!)').test(value);

describe('refineOpenApi', () => {
  const refined = refineOpenApi(generated(), '9.9.9');
  const list = refined.paths['/v1/workspaces/{workspace}/things']?.['get']?.parameters ?? [];
  const create = refined.paths['/v1/workspaces/{workspace}/things']?.['post']?.parameters ?? [];
  const update = refined.paths[UPDATE_PATH]?.['patch']?.parameters ?? [];

  test('names the product and its version', () => {
    expect(refined.info).toMatchObject({ title: 'AI Engine Manager API', version: '9.9.9' });
  });

  test('gives path parameters the id rules of shared/rules.ts, and a description', () => {
    const [workspace, version] = update;
    expect(workspace).toMatchObject({ maxLength: 63, description: expect.any(String) as string });
    expect(matches(workspace?.pattern, 'default')).toBe(true);
    expect(matches(workspace?.pattern, '1st-team')).toBe(true);
    expect(matches(workspace?.pattern, 'a.b')).toBe(false);
    expect(matches(version?.pattern, '1.10.6-rc.1')).toBe(true);
    expect(matches(version?.pattern, 'latest')).toBe(true);
    expect(matches(version?.pattern, 'Latest')).toBe(false);
  });

  test('refuses negative page sizes', () => {
    expect(list[1]).toMatchObject({ name: 'pageSize', minimum: 0 });
  });

  test('checks the id of a create; an optional one may be left empty', () => {
    expect(create[1]?.maxLength).toBe(63);
    expect(matches(create[1]?.pattern, 'my-thing')).toBe(true);
    expect(matches(create[1]?.pattern, '')).toBe(true);
    expect(matches(create[1]?.pattern, '9lives')).toBe(false);
  });

  test('requires the update mask of every update, naming the paths the gateway allows', () => {
    expect(update[3]).toMatchObject({ name: 'updateMask', required: true });
    for (const mask of ['*', 'image', 'deprecated,image_pull_policy,image'])
      expect(matches(update[3]?.pattern, mask)).toBe(true);
    for (const mask of ['', '*,image', 'aliases', 'image,', 'Image'])
      expect(matches(update[3]?.pattern, mask)).toBe(false);
    expect(() => updateMaskPattern('thing')).toThrow(/No update paths/);
  });

  test('requires no field of an update body: fields outside the mask are ignored', () => {
    expect(update[2]?.schema).toEqual({ type: 'object', properties: { image: { type: 'string' } } });
  });

  test('gives int64 strings the decimal pattern the gateway reads, and requires no list', () => {
    expect(refined['definitions']).toEqual({
      v1Thing: {
        type: 'object',
        properties: {
          sizeBytes: { type: 'string', format: 'int64', pattern: INT64_TEXT },
          aliases: { type: 'array', items: { type: 'string' } },
          image: { type: 'string' },
        },
        required: ['image'],
      },
      v1Aliases: { type: 'object', properties: { aliases: { type: 'array', items: { type: 'string' } } } },
    });
  });

  test('leaves its input as it was', () => {
    expect(refineOpenApi(generated(), '9.9.9')).toEqual(refined);
    const input = generated();
    refineOpenApi(input, '9.9.9');
    expect(input).toEqual(generated());
  });

  test('fails on an update without a mask parameter or an unexpanded path parameter', () => {
    const noMask = generated();
    const patch = noMask.paths[UPDATE_PATH]?.['patch'];
    patch?.parameters?.pop();
    expect(() => refineOpenApi(noMask, '1')).toThrow(/updateMask/);
    expect(() => pathParameterRule('ThingService_GetThing', 'name')).toThrow(/expand_slashed_path_patterns/);
    expect(() => pathParameterRule('ThingService_GetThing', 'thing.name')).toThrow(/not one id/);
  });

  test('anyOf anchors the alternatives once', () => {
    expect(anyOf('^a$', '^b+$')).toBe('^(a|b+)$');
  });
});

describe('the published document', () => {
  const document = JSON.parse(readFileSync(PUBLISHED, 'utf8')) as SwaggerDocument;
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
  );

  test('has one operation per REST route of the gateway', () => {
    expect(operations).toHaveLength(ROUTES.length);
  });

  test('gives every path parameter a pattern that JavaScript and the gateway agree on', () => {
    const path = operations.flatMap(({ operation }) =>
      (operation.parameters ?? []).filter((p) => p.in === 'path'),
    );
    expect(path.length).toBeGreaterThan(operations.length);
    for (const parameter of path) {
      expect(parameter).toMatchObject({
        type: 'string',
        maxLength: 63,
        pattern: expect.any(String) as string,
      });
      expect(() => new RegExp(parameter.pattern ?? '')).not.toThrow();
    }
  });

  test('requires updateMask on every PATCH, one per update RPC', () => {
    const patches = operations.filter(({ method }) => method === 'patch');
    expect(patches).toHaveLength(ROUTES.filter((r) => r.rpc.startsWith('Update')).length);
    for (const { operation } of patches) {
      expect(operation.parameters).toContainEqual(
        expect.objectContaining({
          name: 'updateMask',
          in: 'query',
          required: true,
          pattern: expect.stringMatching(/^\^\(\\\*\|/) as string,
        }),
      );
    }
  });

  test('describes every int64 as a decimal string', () => {
    const int64: unknown[] = [];
    const collect = (node: unknown): void => {
      if (node === null || typeof node !== 'object') return;
      if ('format' in node && node.format === 'int64') int64.push(node);
      for (const value of Object.values(node)) collect(value);
    };
    collect(document);
    expect(int64.length).toBeGreaterThan(0);
    for (const schema of int64) expect(schema).toMatchObject({ type: 'string', pattern: INT64_TEXT });
  });
});
