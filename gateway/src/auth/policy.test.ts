import { readFileSync } from 'node:fs';
import type { Caller } from './authorizer.ts';
import { PERMISSIONS } from './permissions.ts';
import fc from 'fast-check';
import { allows, parsePolicy, patternMatcher, PolicyError } from './policy.ts';
import { DEFAULT_POLICY_FILE } from './policy-authorizer.ts';

const caller = (subject: string, roles: string[] = []): Caller => ({ subject, displayName: subject, roles });

function problems(text: string): readonly string[] {
  try {
    parsePolicy(text, 'test.yaml');
  } catch (error: unknown) {
    if (error instanceof PolicyError) return error.problems;
    throw error;
  }
  return [];
}

describe('patternMatcher()', () => {
  test.each([
    ['*', 'anything/at all', true],
    ['actions/enginemanager/*', 'actions/enginemanager/daiEngines/GET', true],
    ['actions/enginemanager/*/LIST', 'actions/enginemanager/daiEngines/LIST', true],
    ['actions/enginemanager/*/LIST', 'actions/enginemanager/daiEngines/LIST_ALL', false],
    ['actions/enginemanager/*Engines/GET', 'actions/enginemanager/notebookEngines/GET', true],
    ['team-*', 'team-a', true],
    ['team-*', 'other-team-a', false],
    ['a.b', 'axb', false],
    ['a+b', 'a+b', true],
    ['(x)', '(x)', true],
    ['users/alice', 'users/alice2', false],
  ])('%s matches %s: %s', (pattern, value, expected) => {
    expect(patternMatcher(pattern)(value)).toBe(expected);
  });

  test('matches exactly what the equivalent regular expression matches', () => {
    const text = (chars: string[]): fc.Arbitrary<string> =>
      fc.array(fc.constantFrom(...chars), { maxLength: 12 }).map((c) => c.join(''));
    const reference = (pattern: string): RegExp =>
      new RegExp(
        `^${pattern
          .split('*')
          .map((p) => p.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'))
          .join('.*')}$`,
        's',
      );
    fc.assert(
      fc.property(
        text(['a', 'b', '*', '/', '.', '\n']),
        text(['a', 'b', '/', '.', '\n', '*']),
        (pattern, value) => {
          expect(patternMatcher(pattern)(value)).toBe(reference(pattern).test(value));
        },
      ),
      { numRuns: 20_000 },
    );
  });

  test('answers patterns a regular expression would backtrack on for ages', () => {
    // `^(a.*){30}b$` against 63 a's runs for far longer than the test's time limit.
    expect(patternMatcher(`${'a*'.repeat(30)}b`)('a'.repeat(63))).toBe(false);
    expect(patternMatcher(`${'a*'.repeat(30)}b`)(`${'a'.repeat(63)}b`)).toBe(true);
  });
});

describe('parsePolicy()', () => {
  test('reads grants by role and by subject', () => {
    const policy = parsePolicy(
      `grants:
  - roles: [admin]
    workspaces: ['*']
    permissions: ['actions/enginemanager/*']
  - subjects: [users/alice]
    workspaces: [team-a]
    permissions: [actions/enginemanager/daiEngines/GET]
`,
      'test.yaml',
    );
    expect(policy.grants).toHaveLength(2);
  });

  test.each([
    ['not YAML', 'grants: [', /test.yaml/],
    ['not a mapping', '- a', /must be a mapping with a "grants" list/],
    ['no grants list', 'grants: 3', /"grants" must be a list/],
    ['an unknown top-level key', 'grants: []\nrules: []', /unknown top-level key "rules"/],
    ['a grant that is not a mapping', 'grants: [x]', /grants\[0\] must be a mapping/],
    [
      'an unknown grant key',
      "grants: [{roles: [a], workspaces: ['*'], permissions: ['*'], role: b}]",
      /grants\[0\] has an unknown key "role"/,
    ],
    [
      'a grant for nobody',
      "grants: [{workspaces: ['*'], permissions: ['*']}]",
      /grants\[0\] must name roles or subjects/,
    ],
    ['no workspaces', "grants: [{roles: [a], permissions: ['*']}]", /grants\[0\].workspaces must name/],
    ['no permissions', "grants: [{roles: [a], workspaces: ['*']}]", /grants\[0\].permissions must name/],
    [
      'a list that is a string',
      "grants: [{roles: admin, workspaces: ['*'], permissions: ['*']}]",
      /grants\[0\].roles must be a list of strings/,
    ],
    [
      'an empty pattern',
      "grants: [{roles: [''], workspaces: ['*'], permissions: ['*']}]",
      /grants\[0\].roles\[0\] must be a non-empty string/,
    ],
    [
      'a misspelt permission',
      "grants: [{roles: [a], workspaces: ['*'], permissions: [actions/enginemanager/daiEngine/GET]}]",
      /grants\[0\].permissions\[0\] "actions\/enginemanager\/daiEngine\/GET" matches no permission/,
    ],
    [
      'an unknown action',
      "grants: [{roles: [a], workspaces: ['*'], permissions: [actions/enginemanager/daiEngines/START]}]",
      /matches no permission/,
    ],
    [
      'a description that is not text',
      "grants: [{description: [x], roles: [a], workspaces: ['*'], permissions: ['*']}]",
      /description must be a string/,
    ],
  ])('refuses %s', (_what, text, message) => {
    expect(() => parsePolicy(text, 'test.yaml')).toThrow(PolicyError);
    expect(problems(text).join('\n')).toMatch(message);
  });

  test('names every problem of a file at once', () => {
    expect(
      problems(`grants:
  - roles: [a]
    workspaces: []
    permissions: [actions/enginemanager/nothing]
  - bogus: 1
`),
    ).toEqual([
      'grants[0].workspaces must name at least one workspace pattern',
      'grants[0].permissions[0] "actions/enginemanager/nothing" matches no permission of the API',
      'grants[1] has an unknown key "bogus"',
      'grants[1] must name roles or subjects it applies to',
      'grants[1].workspaces must name at least one workspace pattern',
      'grants[1].permissions must name at least one permission pattern',
    ]);
  });
});

describe('allows()', () => {
  const policy = parsePolicy(
    `grants:
  - roles: [admin]
    workspaces: ['*']
    permissions: ['actions/enginemanager/*']
  - roles: [data-scientist, analyst]
    workspaces: [team-*]
    permissions: ['actions/enginemanager/daiEngines/*']
  - subjects: [users/carol]
    workspaces: [sandbox]
    permissions: [actions/enginemanager/notebookEngines/CREATE]
`,
    'test.yaml',
  );

  test.each([
    [
      'an administrator, anywhere',
      caller('users/a', ['admin']),
      'actions/enginemanager/daiEngineProfiles/CREATE',
      'w',
      true,
    ],
    [
      'an administrator, all workspaces',
      caller('users/a', ['admin']),
      'actions/enginemanager/engines/LIST_ALL',
      '-',
      true,
    ],
    [
      'a role, in a matching workspace',
      caller('users/b', ['analyst']),
      'actions/enginemanager/daiEngines/PAUSE',
      'team-x',
      true,
    ],
    [
      'a role, elsewhere',
      caller('users/b', ['analyst']),
      'actions/enginemanager/daiEngines/PAUSE',
      'other',
      false,
    ],
    [
      'a role, another permission',
      caller('users/b', ['analyst']),
      'actions/enginemanager/h2oEngines/CREATE',
      'team-x',
      false,
    ],
    [
      'a role, all workspaces',
      caller('users/b', ['analyst']),
      'actions/enginemanager/daiEngines/LIST',
      '-',
      false,
    ],
    ['a subject', caller('users/carol'), 'actions/enginemanager/notebookEngines/CREATE', 'sandbox', true],
    [
      'another subject',
      caller('users/caroline'),
      'actions/enginemanager/notebookEngines/CREATE',
      'sandbox',
      false,
    ],
    ['no roles', caller('users/d'), 'actions/enginemanager/daiEngines/GET', 'team-x', false],
  ])('%s', (_what, who, permission, workspace, expected) => {
    expect(allows(policy, who, permission, workspace)).toBe(expected);
  });

  test('an empty policy allows nothing', () => {
    expect(
      allows(parsePolicy('grants: []', 'empty'), caller('users/a', ['admin']), PERMISSIONS[0]!, 'w'),
    ).toBe(false);
  });
});

describe('the default policy', () => {
  const policy = parsePolicy(readFileSync(DEFAULT_POLICY_FILE, 'utf8'), DEFAULT_POLICY_FILE);
  const admin = caller('users/root', ['admin']);
  const user = caller('users/u', ['anything']);
  const nobody = caller('users/n');

  test('gives administrators every permission in every workspace', () => {
    for (const permission of PERMISSIONS) {
      expect(allows(policy, admin, permission, 'w')).toBe(true);
      expect(allows(policy, admin, permission, '-')).toBe(true);
    }
  });

  test.each([
    ['actions/enginemanager/daiEngineProfiles/LIST_ASSIGNED', true],
    ['actions/enginemanager/daiEngineVersions/LIST', true],
    ['actions/enginemanager/notebookEngineImages/GET', true],
    ['actions/enginemanager/daiEngines/CREATE', true],
    ['actions/enginemanager/h2oEngines/TERMINATE', true],
    ['actions/enginemanager/notebookEngines/ACCESS', true],
    ['actions/enginemanager/engines/LIST', true],
    ['actions/enginemanager/daiEngineProfiles/CREATE', false],
    ['actions/enginemanager/daiEngineProfiles/LIST', false],
    ['actions/enginemanager/daiEngineVersions/CREATE', false],
    ['actions/enginemanager/notebookEngineImages/DELETE', false],
    ['actions/enginemanager/daiEngines/MIGRATE_CREATOR', false],
    ['actions/enginemanager/engines/LIST_ALL', false],
    ['actions/enginemanager/engines/ADMINISTER', false],
  ])('gives every user, with or without roles, %s: %s', (permission, expected) => {
    expect(allows(policy, user, permission, 'w')).toBe(expected);
    expect(allows(policy, nobody, permission, 'w')).toBe(expected);
  });
});
