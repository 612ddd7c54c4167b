import { callerFromClaims, claimAt, DEFAULT_CLAIM_NAMES } from './claims.ts';

describe('claimAt()', () => {
  const claims = {
    sub: 'u1',
    realm_access: { roles: ['a', 'b'] },
    'https://example.com/roles': ['x'],
    nested: { list: [1], deeper: { value: 'v' } },
  };

  test.each([
    ['a top-level claim', 'sub', 'u1'],
    ['a dotted path', 'realm_access.roles', ['a', 'b']],
    ['a name with dots, as written', 'https://example.com/roles', ['x']],
    ['a deeper path', 'nested.deeper.value', 'v'],
    ['a missing claim', 'missing', undefined],
    ['a path through a missing object', 'missing.roles', undefined],
    ['a path through a list', 'nested.list.0', undefined],
    ['a path through a string', 'sub.length', undefined],
    ['inherited properties', 'constructor', undefined],
  ])('%s', (_what, path, expected) => {
    expect(claimAt(claims, path)).toEqual(expected);
  });
});

describe('callerFromClaims()', () => {
  test('takes the subject, name and roles from the default claims', () => {
    expect(callerFromClaims({ sub: 'u1', name: 'Ursula', roles: ['admin', 'x'] })).toEqual({
      subject: 'users/u1',
      displayName: 'Ursula',
      roles: ['admin', 'x'],
    });
  });

  test('takes them from configured claims, dotted paths included', () => {
    const names = { subject: 'oid', displayName: 'profile.display', roles: 'realm_access.roles' };
    expect(
      callerFromClaims(
        {
          sub: 'ignored',
          oid: 'o-1',
          profile: { display: 'Olga' },
          realm_access: { roles: ['data-scientist'] },
        },
        names,
      ),
    ).toEqual({ subject: 'users/o-1', displayName: 'Olga', roles: ['data-scientist'] });
  });

  test.each([
    ['preferred_username', { sub: 'u', preferred_username: 'ursula' }, 'ursula'],
    ['email', { sub: 'u', email: 'u@example.com' }, 'u@example.com'],
    ['the subject', { sub: 'u' }, 'u'],
    ['preferred_username over a blank name', { sub: 'u', name: ' ', preferred_username: 'p' }, 'p'],
  ])('falls back to %s for the display name', (_what, claims, expected) => {
    expect(callerFromClaims(claims)?.displayName).toBe(expected);
  });

  test.each([
    ['a list', ['a', 'b'], ['a', 'b']],
    ['a space-separated string', 'a  b', ['a', 'b']],
    ['a list with other values', ['a', 1, null, '', 'b'], ['a', 'b']],
    ['nothing', undefined, []],
    ['an object', { a: true }, []],
  ])('reads roles from %s', (_what, roles, expected) => {
    expect(callerFromClaims({ sub: 'u', roles })?.roles).toEqual(expected);
  });

  test.each([
    ['no subject', {}],
    ['an empty subject', { sub: '' }],
    ['a subject that is an object', { sub: { id: 1 } }],
  ])('gives no caller for %s', (_what, claims) => {
    expect(callerFromClaims(claims, DEFAULT_CLAIM_NAMES)).toBeUndefined();
  });

  test('accepts a numeric subject', () => {
    expect(callerFromClaims({ sub: 42 })?.subject).toBe('users/42');
  });
});
