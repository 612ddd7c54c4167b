import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { childPath, isWithin, sandboxPath } from './sandbox-path.ts';

describe('sandboxPath()', () => {
  test.each([
    ['/', '/'],
    ['/workspace/data.csv', '/workspace/data.csv'],
    ['/a//b/./c/', '/a/b/c'],
    ['/a/b/../c', '/a/c'],
    ['/a/..', '/'],
    ['/a b/c.txt', '/a b/c.txt'],
    ['/..x/...', '/..x/...'],
  ])('normalises %j to %j', (input, expected) => {
    expect(sandboxPath('path', input)).toBe(expected);
  });

  test.each([
    ['a path that climbs above the root', '/../../etc/passwd', /leads above the sandbox root/],
    ['a path that climbs above the root later', '/a/../../etc/passwd', /leads above the sandbox root/],
    ['a relative path', '../../etc/passwd', /not an absolute path/],
    ['a bare name', 'etc', /not an absolute path/],
    ['an empty path', '', /is required/],
    ['a NUL byte', '/a\0b', /NUL/],
    ['a path over 4096 bytes', `/${'a/'.repeat(2100)}`, /at most 4096 bytes/],
    ['a name over 255 bytes', `/${'é'.repeat(128)}`, /longer than 255 bytes/],
  ])('refuses %s with INVALID_ARGUMENT naming the field', (_what, input, message) => {
    let error: unknown;
    try {
      sandboxPath('source_path', input);
    } catch (e: unknown) {
      error = e;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: Code.INVALID_ARGUMENT, violations: [{ field: 'source_path' }] });
    expect((error as ApiError).message).toMatch(message);
  });

  test('refuses a value that is not a string', () => {
    expect(() => sandboxPath('path', undefined)).toThrow(/Invalid path: is required/);
  });
});

describe('isWithin() and childPath()', () => {
  test('a path is within itself, its ancestors and the root, not within a sibling with a common prefix', () => {
    expect(isWithin('/a/b', '/a')).toBe(true);
    expect(isWithin('/a', '/a')).toBe(true);
    expect(isWithin('/x', '/')).toBe(true);
    expect(isWithin('/ab', '/a')).toBe(false);
  });

  test('childPath() joins without doubling the root slash', () => {
    expect(childPath('/', 'a')).toBe('/a');
    expect(childPath('/d', 'a')).toBe('/d/a');
  });
});
