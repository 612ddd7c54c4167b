import type { Caller } from '../auth/authorizer.ts';
import { allowsUse, engineAccess } from './ownership.ts';

const alice: Caller = { subject: 'users/alice', displayName: 'Alice', roles: [] };

describe('engineAccess()', () => {
  test.each([
    ['its creator', { creator: 'users/alice' }, false, 'all'],
    ['an administrator', { creator: 'users/bob' }, true, 'all'],
    ['another user', { creator: 'users/bob' }, false, 'none'],
    ['another user, a shared notebook', { creator: 'users/bob', shared: true }, false, 'see'],
    ['another user, an unshared notebook', { creator: 'users/bob', shared: false }, false, 'none'],
    ['its creator, a shared notebook', { creator: 'users/alice', shared: true }, false, 'all'],
  ])('gives %s %s', (_who, engine, administrator, expected) => {
    expect(engineAccess(engine, alice, administrator)).toBe(expected);
  });
});

describe('allowsUse()', () => {
  test.each([
    ['all', 'see', true],
    ['all', 'act', true],
    ['see', 'see', true],
    ['see', 'act', false],
    ['none', 'see', false],
    ['none', 'act', false],
  ] as const)('%s access allows %s: %s', (access, use, expected) => {
    expect(allowsUse(access, use)).toBe(expected);
  });
});
