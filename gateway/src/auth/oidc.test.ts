import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { bearerToken, forbiddenAlgorithm, oidcAuthenticate, VerifiedTokens } from './oidc.ts';

describe('bearerToken()', () => {
  test.each([
    ['a bearer token', 'Bearer abc.def.ghi', 'abc.def.ghi'],
    ['any case of the scheme', 'bearer abc', 'abc'],
    ['extra spaces', 'Bearer   abc  ', 'abc'],
    ['no header', undefined, undefined],
    ['another scheme', 'Basic dXNlcjpwYXNz', undefined],
    ['no token', 'Bearer ', undefined],
    ['two tokens', 'Bearer a b', undefined],
  ])('reads %s', (_what, header, expected) => {
    expect(bearerToken(header === undefined ? {} : { authorization: header })).toBe(expected);
  });
});

describe('oidcAuthenticate()', () => {
  test.each(['none', 'NONE', 'HS256', 'hs512'])('refuses to accept the algorithm %s', (alg) => {
    expect(forbiddenAlgorithm(alg)).toBe(true);
    expect(() =>
      oidcAuthenticate({ issuer: 'https://id.example.com', audiences: ['a'], algorithms: [alg] }),
    ).toThrow(/not allowed/);
  });

  test('requires an audience', () => {
    expect(() => oidcAuthenticate({ issuer: 'https://id.example.com', audiences: [] })).toThrow(/audience/);
  });

  test('answers UNAUTHENTICATED without a token, before reaching the issuer', async () => {
    const authenticate = oidcAuthenticate({ issuer: 'http://127.0.0.1:9', audiences: ['a'] });
    const error: unknown = await authenticate({}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe(Code.UNAUTHENTICATED);
    expect((error as ApiError).message).toBe('The request does not carry valid credentials');
  });

  test('answers UNAVAILABLE when the issuer cannot be reached, and tries again on the next call', async () => {
    const authenticate = oidcAuthenticate({ issuer: 'http://127.0.0.1:9', audiences: ['a'] });
    for (let i = 0; i < 2; i++) {
      const error: unknown = await authenticate({ authorization: 'Bearer a.b.c' }).catch((e: unknown) => e);
      expect((error as ApiError).code).toBe(Code.UNAVAILABLE);
    }
  });
});

describe('VerifiedTokens', () => {
  const caller = { subject: 'users/alice', displayName: 'Alice', roles: ['data-scientist'] };
  const t0 = 1_700_000_000_000;

  test('answers a kept token until its exp, never after', () => {
    const tokens = new VerifiedTokens({ ttlMs: 60_000 });
    tokens.keep('a', caller, { expSeconds: t0 / 1000 + 10, now: t0 });
    expect(tokens.get('a', t0 + 9_999)).toBe(caller);
    expect(tokens.get('a', t0 + 10_000)).toBeUndefined();
    expect(tokens.get('b', t0)).toBeUndefined();
  });

  test('answers a kept token for the TTL at most, however late its exp', () => {
    const tokens = new VerifiedTokens({ ttlMs: 30_000 });
    tokens.keep('a', caller, { expSeconds: t0 / 1000 + 3600, now: t0 });
    expect(tokens.get('a', t0 + 29_999)).toBe(caller);
    expect(tokens.get('a', t0 + 30_000)).toBeUndefined();
  });

  test('keeps no token already past its exp (accepted within the clock skew)', () => {
    const tokens = new VerifiedTokens();
    tokens.keep('a', caller, { expSeconds: t0 / 1000 - 5, now: t0 });
    expect(tokens.get('a', t0)).toBeUndefined();
  });

  test('keeps at most its maximum, dropping the oldest first', () => {
    const tokens = new VerifiedTokens({ max: 2 });
    for (const token of ['a', 'b', 'c']) tokens.keep(token, caller, { expSeconds: t0 / 1000 + 60, now: t0 });
    expect(tokens.get('a', t0)).toBeUndefined();
    expect(tokens.get('b', t0)).toBe(caller);
    expect(tokens.get('c', t0)).toBe(caller);
  });
});
