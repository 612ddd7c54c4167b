import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { safeNext, sameOrigin } from './browser-login.ts';
import { cookieOf, engineCookies, LOGIN_COOKIE, SESSION_COOKIE } from './session.ts';

const PLATFORM = 'https://cloud.example.com/ai';

describe('engineCookies()', () => {
  test("passes the engine's cookies on byte for byte and never the product's", () => {
    expect(engineCookies(`_xsrf=2|a"b|c; ${SESSION_COOKIE}=secret; username-x="2:abc=="`)).toBe(
      '_xsrf=2|a"b|c; username-x="2:abc=="',
    );
    expect(engineCookies(`${SESSION_COOKIE}=secret;${LOGIN_COOKIE}=pending`)).toBeUndefined();
    expect(engineCookies(` ${SESSION_COOKIE} = spaced ; a=1`)).toBe('a=1');
    expect(engineCookies(undefined)).toBeUndefined();
  });

  test('whatever the header, no session value is left in what the engine gets', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.stringMatching(/^[a-z_]{1,8}$/), fc.string())), (pairs) => {
        const header = [...pairs.map(([n, v]) => `${n}=${v}`), `${SESSION_COOKIE}=SECRET-VALUE`].join('; ');
        expect(cookieOf(engineCookies(header), SESSION_COOKIE)).toBeUndefined();
      }),
    );
  });
});

describe('safeNext()', () => {
  test('keeps paths on the platform, with their query', () => {
    expect(safeNext('/ai/workspaces/w/notebookEngines/n/lab?reset', PLATFORM)).toBe(
      '/ai/workspaces/w/notebookEngines/n/lab?reset',
    );
  });

  test.each([
    ['//evil.example/x'],
    ['/\\evil.example/x'],
    ['https://evil.example/x'],
    ['javascript:alert(1)'],
    ['/ok\r\nSet-Cookie: x=1'],
    ['/ok\\..\\x'],
    [''],
    [undefined],
    [['/a', '/b']],
  ])('sends %p to the platform root', (next) => {
    expect(safeNext(next, PLATFORM)).toBe('/ai/');
  });

  test('never names another origin, whatever it is given', () => {
    fc.assert(
      fc.property(fc.string(), (next) => {
        const target = safeNext(next, PLATFORM);
        expect(target.startsWith('/')).toBe(true);
        expect(new URL(target, 'https://cloud.example.com').origin).toBe('https://cloud.example.com');
      }),
    );
  });
});

describe('sameOrigin()', () => {
  const ORIGIN = 'https://cloud.example.com';
  test.each([
    [{ origin: ORIGIN }, true],
    [{ origin: 'https://evil.example' }, false],
    [{ origin: 'null' }, false],
    [{ origin: 'https://cloud.example.com:8443' }, false],
    [{ 'sec-fetch-site': 'same-origin' }, true],
    [{ 'sec-fetch-site': 'none' }, true],
    [{ 'sec-fetch-site': 'cross-site' }, false],
    [{ 'sec-fetch-site': 'same-site' }, false],
    [{}, true],
  ])('%p: %p', (headers, expected) => {
    expect(sameOrigin(headers, ORIGIN)).toBe(expected);
  });
});
