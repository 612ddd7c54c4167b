import { ROUTES } from '../gen/routes.ts';
import { matchPattern, parsePattern, splitPath } from './pattern.ts';

function match(template: string, path: string): Record<string, string> | undefined {
  const split = splitPath(path);
  return split && matchPattern(parsePattern(template), split);
}

describe('matchPattern()', () => {
  test.each<[string, string, Record<string, string> | undefined]>([
    [
      '/v1/{name=workspaces/*/daiEngines/*}',
      '/v1/workspaces/default/daiEngines/e1',
      { name: 'workspaces/default/daiEngines/e1' },
    ],
    [
      '/v1/{name=workspaces/*/daiEngines/*}',
      '/v1/workspaces%2Fdefault%2FdaiEngines%2Fe1',
      { name: 'workspaces/default/daiEngines/e1' },
    ],
    [
      '/v1/{name=workspaces/*/daiEngines/*}:pause',
      '/v1/workspaces%2Fdefault%2FdaiEngines%2Fe1:pause',
      { name: 'workspaces/default/daiEngines/e1' },
    ],
    ['/v1/{name=workspaces/*/daiEngines/*}', '/v1/workspaces/default/daiEngines/e1:pause', undefined],
    ['/v1/{name=workspaces/*/daiEngines/*}:pause', '/v1/workspaces/default/daiEngines/e1', undefined],
    ['/v1/{name=workspaces/*/daiEngines/*}', '/v1/workspaces/default/h2oEngines/e1', undefined],
    ['/v1/{name=workspaces/*/daiEngines/*}', '/v1/workspaces//daiEngines/e1', undefined],
    [
      '/v1/{name=workspaces/*/daiEngineVersions/*}',
      '/v1/workspaces/global/daiEngineVersions/1.10.6.1-alpha',
      { name: 'workspaces/global/daiEngineVersions/1.10.6.1-alpha' },
    ],
    ['/v1/{parent=workspaces/*}/daiEngines', '/v1/workspaces%2F-/daiEngines', { parent: 'workspaces/-' }],
    [
      '/v1/{parent=workspaces/*}/daiEngineProfiles:listAssigned',
      '/v1/workspaces/w/daiEngineProfiles:listAssigned',
      { parent: 'workspaces/w' },
    ],
    [
      '/v1/{dai_engine.name=workspaces/*/daiEngines/*}',
      '/v1/workspaces/w/daiEngines/e',
      { 'dai_engine.name': 'workspaces/w/daiEngines/e' },
    ],
    [
      '/v1/h2oEngines:calculateH2OEngineSizeRawDataset',
      '/v1/h2oEngines:calculateH2OEngineSizeRawDataset',
      {},
    ],
    ['/v1/{path=files/**}', '/v1/files/a/b/c', { path: 'files/a/b/c' }],
    ['/v1/{id}', '/v1/abc', { id: 'abc' }],
  ])('%s matches %s as %j', (template, path, expected) => {
    expect(match(template, path)).toEqual(expected);
  });

  test('a path that is not valid percent-encoding matches nothing', () => {
    expect(splitPath('/v1/workspaces%ZZ')).toBeUndefined();
  });

  test.each(['v1/x', '/v1/{name=**/x}', '/v1/a{b}', '/v1//x'])(
    'rejects the malformed template %p',
    (template) => {
      expect(() => parsePattern(template)).toThrow(SyntaxError);
    },
  );
});

describe('the generated routes', () => {
  /** A concrete path for a template: every `*` becomes a sample id. */
  function examplePath(template: string): string {
    return template.replace(/\{[^}=]+=([^}]+)\}/g, '$1').replaceAll('*', 'sample-1');
  }

  test('every route matches its own example path, and no other route of its method does', () => {
    const patterns = ROUTES.map((route) => ({ route, pattern: parsePattern(route.path) }));
    for (const { route } of patterns) {
      const split = splitPath(encodeURI(examplePath(route.path)));
      const matching = patterns
        .filter(
          ({ route: other, pattern }) =>
            other.method === route.method && split && matchPattern(pattern, split),
        )
        .map(({ route: other }) => `${other.service}.${other.rpc}`);
      expect({ path: route.path, matching }).toEqual({
        path: route.path,
        matching: [`${route.service}.${route.rpc}`],
      });
    }
  });
});
