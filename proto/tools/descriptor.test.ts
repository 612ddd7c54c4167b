import { httpBindings, readApi, type FileDescriptorSetJson } from './descriptor.ts';
import { routeRows, routesSource } from './routes.ts';
import { unwrap } from './crds.ts';

const SET: FileDescriptorSetJson = {
  file: [
    { name: 'google/api/http.proto', package: 'google.api', messageType: [{ name: 'HttpRule' }] },
    {
      name: 'acme/v1/thing.proto',
      package: 'acme.v1',
      messageType: [
        {
          name: 'Thing',
          options: {
            '[google.api.resource]': {
              type: 'acme/Thing',
              pattern: ['workspaces/{workspace}/things/{thing}'],
            },
          },
          field: [
            {
              name: 'name',
              number: 1,
              type: 'TYPE_STRING',
              jsonName: 'name',
              options: { '[google.api.field_behavior]': ['OUTPUT_ONLY'] },
            },
            {
              name: 'size_bytes',
              number: 2,
              type: 'TYPE_INT64',
              jsonName: 'sizeBytes',
              proto3Optional: true,
            },
            {
              name: 'labels',
              number: 3,
              label: 'LABEL_REPEATED',
              type: 'TYPE_MESSAGE',
              typeName: '.acme.v1.Thing.LabelsEntry',
              jsonName: 'labels',
            },
          ],
          nestedType: [{ name: 'LabelsEntry', options: { mapEntry: true } }],
          enumType: [
            {
              name: 'State',
              value: [
                { name: 'STATE_UNSPECIFIED', number: 0 },
                { name: 'STATE_ON', number: 1 },
              ],
            },
          ],
        },
      ],
      service: [
        {
          name: 'ThingService',
          method: [
            {
              name: 'GetThing',
              inputType: '.acme.v1.GetThingRequest',
              outputType: '.acme.v1.GetThingResponse',
              options: { '[google.api.http]': { get: '/v1/{name=workspaces/*/things/*}' } },
            },
            {
              name: 'CopyThing',
              inputType: '.acme.v1.CopyThingRequest',
              outputType: '.acme.v1.CopyThingResponse',
              options: { '[google.api.http]': { post: '/v1/{name=workspaces/*/things/*}:copy', body: '*' } },
            },
          ],
        },
      ],
      sourceCodeInfo: {
        location: [
          { path: [4, 0], leadingComments: ' A thing.\n Second line.\n' },
          { path: [4, 0, 2, 1], leadingComments: ' Size in bytes.\n' },
          { path: [4, 0, 4, 0, 2, 1], leadingComments: ' Switched on.\n' },
          { path: [6, 0, 2, 1], leadingComments: ' Copies a thing.\n' },
        ],
      },
    },
  ],
};

describe('readApi()', () => {
  const api = readApi(SET, 'acme.');

  test('reads messages with their fields, behaviours, presence and comments, skipping other packages', () => {
    expect([...api.messages.keys()]).toEqual(['acme.v1.Thing', 'acme.v1.Thing.LabelsEntry']);
    const thing = api.messages.get('acme.v1.Thing');
    expect(thing?.comment).toBe('A thing.\nSecond line.');
    expect(thing?.resource?.pattern).toEqual(['workspaces/{workspace}/things/{thing}']);
    expect(thing?.fields.map((f) => [f.name, f.jsonName, f.optional, f.repeated, f.behaviors])).toEqual([
      ['name', 'name', false, false, ['OUTPUT_ONLY']],
      ['size_bytes', 'sizeBytes', true, false, []],
      ['labels', 'labels', false, true, []],
    ]);
    expect(thing?.fields[1]?.comment).toBe('Size in bytes.');
    expect(thing?.fields[2]?.typeName).toBe('acme.v1.Thing.LabelsEntry');
    expect(api.messages.get('acme.v1.Thing.LabelsEntry')?.mapEntry).toBe(true);
  });

  test('reads nested enums with value comments', () => {
    expect(api.enums.get('acme.v1.Thing.State')?.values).toEqual([
      { name: 'STATE_UNSPECIFIED', number: 0, comment: '' },
      { name: 'STATE_ON', number: 1, comment: 'Switched on.' },
    ]);
  });

  test('reads services, methods and their HTTP bindings', () => {
    expect(api.services).toHaveLength(1);
    const [get, copy] = api.services[0]?.methods ?? [];
    expect(get).toMatchObject({
      name: 'GetThing',
      inputType: 'acme.v1.GetThingRequest',
      bindings: [{ method: 'GET', path: '/v1/{name=workspaces/*/things/*}', body: '' }],
    });
    expect(copy).toMatchObject({ comment: 'Copies a thing.', bindings: [{ method: 'POST', body: '*' }] });
  });
});

describe('httpBindings()', () => {
  test('lists the primary binding, then additional bindings', () => {
    expect(httpBindings({ post: '/v1/a', body: '*', additionalBindings: [{ get: '/v1/b' }] })).toEqual([
      { method: 'POST', path: '/v1/a', body: '*' },
      { method: 'GET', path: '/v1/b', body: '' },
    ]);
  });

  test('gives none for an RPC without a binding', () => {
    expect(httpBindings(undefined)).toEqual([]);
  });
});

describe('routeRows() and routesSource()', () => {
  test('make one sorted row per binding and a marked, importable table', () => {
    const rows = routeRows(readApi(SET, 'acme.'));
    expect(rows.map((r) => `${r.method} ${r.path} ${r.rpc}`)).toEqual([
      'GET /v1/{name=workspaces/*/things/*} GetThing',
      'POST /v1/{name=workspaces/*/things/*}:copy CopyThing',
    ]);
    const source = routesSource(rows);
    expect(source.split('\n')[0]).toMatch(/^\/\/ Code generated by .* DO NOT EDIT\.$/);
    expect(source).toContain('"rpc":"CopyThing"');
    // A path template inside a block comment would end it early ("*/").
    expect(
      source
        .split('\n')
        .filter((line) => line.includes('/**') || line.trim().startsWith('*'))
        .join('\n'),
    ).not.toMatch(/\*\/./);
  });
});

describe('unwrap()', () => {
  test('joins wrapped lines and keeps paragraph breaks', () => {
    expect(unwrap('One line\nwrapped.\n\nNext paragraph\nhere.')).toBe(
      'One line wrapped.\n\nNext paragraph here.',
    );
  });
});
