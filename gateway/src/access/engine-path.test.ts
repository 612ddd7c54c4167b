import { parseEnginePath, type PathVerdict } from './engine-path.ts';

const engine = (collection: string, workspace = 'w', engineId = 'n1'): PathVerdict => ({
  kind: 'engine',
  engine: {
    workspace,
    collection: collection as 'notebookEngines',
    engineId,
    name: `workspaces/${workspace}/${collection}/${engineId}`,
  },
});

describe('parseEnginePath()', () => {
  test.each([
    ['/workspaces/w/notebookEngines/n1/', engine('notebookEngines')],
    ['/workspaces/w/notebookEngines/n1', engine('notebookEngines')],
    ['/workspaces/w/notebookEngines/n1/api/kernels/abc/channels?session_id=x', engine('notebookEngines')],
    ['/workspaces/w/daiEngines/e1/openid/login', engine('daiEngines', 'w', 'e1')],
    ['/workspaces/lab/h2oEngines/cluster/3/Cloud', engine('h2oEngines', 'lab', 'cluster')],
    // A file name with a percent sign or a space, encoded once, is a file name.
    ['/workspaces/w/notebookEngines/n1/api/contents/100%25%20done.txt', engine('notebookEngines')],
    // Dots that are not whole segments, and a query with anything in it, are fine.
    ['/workspaces/w/notebookEngines/n1/files/a..b/.hidden?x=../%2F', engine('notebookEngines')],
  ])('takes %s as the engine it names', (target, verdict) => {
    expect(parseEnginePath(target)).toEqual(verdict);
  });

  test.each([
    '/v1/workspaces/w/notebookEngines/n1',
    '/workspaces/w/notebookEngines',
    '/workspaces/w/notebookEngines/',
    '/workspaces/w/sandboxEngines/s1/',
    '/workspaces/w/daiEngineProfiles/p1',
    '/healthz',
    'http://evil.example/workspaces/w/notebookEngines/n1/',
  ])('leaves %s to the API', (target) => {
    expect(parseEnginePath(target)).toEqual({ kind: 'other' });
  });

  test.each([
    ['/workspaces/w/notebookEngines/n1/..', 'a dot segment'],
    ['/workspaces/w/notebookEngines/n1/../n2/', 'a dot segment'],
    ['/workspaces/w/notebookEngines/n1/./x', 'a dot segment'],
    ['/workspaces/w/notebookEngines/n1/%2e%2e/n2/', 'an encoded slash, backslash or dot'],
    ['/workspaces/w/notebookEngines/n1/.%2E/n2/', 'an encoded slash, backslash or dot'],
    ['/workspaces/w/notebookEngines/n1/a%2Fb', 'an encoded slash, backslash or dot'],
    ['/workspaces/w/notebookEngines/n1/api%2f', 'an encoded slash, backslash or dot'],
    ['/workspaces/w/notebookEngines/n1/a%5C..%5Cb', 'an encoded slash, backslash or dot'],
    ['/workspaces/w/notebookEngines/n1/%252F..%252Fn2', 'a doubly encoded slash, backslash or dot'],
    ['/workspaces/w/notebookEngines/n1/%252e%252e', 'a doubly encoded slash, backslash or dot'],
    ['/workspaces/w/notebookEngines/n1/a\\..\\b', 'a backslash'],
    ['/workspaces/w/notebookEngines/n1/%zz', 'a malformed percent-encoding'],
    ['/workspaces/w/notebookEngines/n1/a%', 'a malformed percent-encoding'],
    ['/workspaces/w/notebookEngines/n1/a%00b', 'a control character'],
  ])('refuses %s: %s', (target, problem) => {
    expect(parseEnginePath(target)).toEqual({ kind: 'refused', problem: `the path holds ${problem}` });
  });

  test.each([
    ['/workspaces/w/notebookEngines/n1%2F', 'the engine id "n1%2F" is not valid'],
    ['/workspaces/w/notebookEngines/n1%2F..%2Fn2/', 'the engine id "n1%2F..%2Fn2" is not valid'],
    ['/workspaces/w/notebookEngines/%6e1/', 'the engine id "%6e1" is not valid'],
    ['/workspaces/w/notebookEngines/N1/', 'the engine id "N1" is not valid'],
    ['/workspaces/w/notebookEngines/../', 'the engine id ".." is not valid'],
    ['/workspaces/w%2Fx/notebookEngines/n1/', 'the workspace id "w%2Fx" is not valid'],
    ['/workspaces/../notebookEngines/n1/', 'the workspace id ".." is not valid'],
    ['/workspaces//notebookEngines/n1/', 'the workspace id "" is not valid'],
  ])('refuses %s: the names are compared literally', (target, problem) => {
    expect(parseEnginePath(target)).toEqual({ kind: 'refused', problem });
  });
});
