import type { SwaggerDocument } from './openapi.ts';
import { readable, serviceTitle, titleOf } from './openapi-reading.ts';

describe('titleOf()', () => {
  test.each([
    ['CreateDAIEngineProfile', 'Create a DAI engine profile'],
    ['GetH2OEngine', 'Get an H2O engine'],
    ['ListNotebookEngineImages', 'List notebook engine images'],
    ['ListAssignedH2OEngineProfiles', 'List the H2O engine profiles assigned to the caller'],
    ['UpdateDAIEngineVersion', 'Update a DAI engine version'],
    ['DeleteNotebookEngine', 'Delete a notebook engine'],
    ['PauseDAIEngine', 'Pause a DAI engine'],
    ['TerminateH2OEngine', 'Terminate an H2O engine'],
    ['AssignDAIEngineVersionAliases', 'Assign DAI engine version aliases'],
    ['CalculateH2OEngineSizeRawDataset', 'Recommend an H2O engine size for a raw dataset'],
    ['ResizeStorage', "Resize a DAI engine's storage"],
  ])('%s reads "%s"', (rpc, title) => {
    expect(titleOf(rpc)).toBe(title);
  });
});

test('services are named by their resources', () => {
  expect(serviceTitle('DAIEngineProfileService')).toBe('DAI engine profiles');
  expect(serviceTitle('NotebookEngineImageService')).toBe('Notebook engine images');
  expect(serviceTitle('H2OEngineService')).toBe('H2O engines');
  expect(serviceTitle('EngineService')).toBe('Engines of every kind');
});

describe('readable()', () => {
  const operation = (rpc: string, summary: string, description?: string) => ({
    operationId: `ThingService_${rpc}`,
    summary,
    ...(description === undefined ? {} : { description }),
  });
  const document: SwaggerDocument = {
    info: {},
    tags: [{ name: 'ThingService', description: 'Manages things.' }],
    paths: {
      '/v1/things/{thing}:pause': { post: operation('PauseThing', 'Pauses a thing. Requires x/PAUSE.') },
      '/v1/things/{thing}': {
        delete: operation('DeleteThing', 'Deletes a thing.'),
        get: operation('GetThing', 'Returns a thing.', 'Also its status.'),
      },
      '/v1/things': {
        get: operation('ListThings', 'Lists things.'),
        post: operation('CreateThing', 'Creates a thing.'),
      },
    },
  };
  const result = readable(document);
  const operations = Object.values(result.paths).flatMap((methods) => Object.values(methods));

  test('titles each operation, keeping the full sentence first in its description', () => {
    expect(result.paths['/v1/things/{thing}']?.['get']).toEqual({
      operationId: 'ThingService_GetThing',
      summary: 'Get a thing',
      description: 'Returns a thing.\n\nAlso its status.',
    });
    expect(result.paths['/v1/things/{thing}:pause']?.['post']?.['description']).toBe(
      'Pauses a thing. Requires x/PAUSE.',
    );
  });

  test('orders operations create, list, get, update, delete, then the others', () => {
    expect(operations.map((o) => o['summary'])).toEqual([
      'Create a thing',
      'List things',
      'Get a thing',
      'Delete a thing',
      'Pause a thing',
    ]);
  });

  test('names the service for readers and changes no path or operation id', () => {
    expect(result['tags']).toEqual([
      { name: 'ThingService', description: 'Manages things.', 'x-displayName': 'Things' },
    ]);
    expect(Object.keys(result.paths).sort()).toEqual(Object.keys(document.paths).sort());
    expect(operations.map((o) => o.operationId).sort()).toEqual(
      Object.values(document.paths)
        .flatMap((methods) => Object.values(methods))
        .map((o) => o.operationId)
        .sort(),
    );
  });
});
