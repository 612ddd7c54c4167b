import { Code } from '../errors/code.ts';
import { failureOf, FS_EXIT } from './filesystem-scripts.ts';

const read = { verb: 'read', path: '/a.txt' };

describe('failureOf()', () => {
  test.each([
    [FS_EXIT.NOT_FOUND, Code.NOT_FOUND, 'Cannot read "/a.txt": no such file or directory'],
    [FS_EXIT.PARENT_MISSING, Code.NOT_FOUND, /parent directory does not exist/],
    [FS_EXIT.EXISTS, Code.ALREADY_EXISTS, /already exists/],
    [FS_EXIT.IS_DIRECTORY, Code.FAILED_PRECONDITION, /is a directory/],
    [FS_EXIT.NOT_EMPTY, Code.FAILED_PRECONDITION, /not empty \(set recursive/],
    [127, Code.FAILED_PRECONDITION, /lacks the POSIX shell tools/],
  ])('maps the scripts’ exit code %d to code %d', (exit, code, message) => {
    const error = failureOf(read, exit, '');
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });

  test.each([
    ["mv: cannot move 'a' to 'b': Read-only file system", Code.FAILED_PRECONDITION, 'READ_ONLY_FILESYSTEM'],
    ["head: cannot open '/x' for reading: Permission denied", Code.FAILED_PRECONDITION, 'PERMISSION_DENIED'],
    ['head: write error: No space left on device', Code.RESOURCE_EXHAUSTED, 'NO_SPACE'],
    ["mkdir: cannot create directory '/a/b': Not a directory", Code.FAILED_PRECONDITION, 'NOT_A_DIRECTORY'],
    ["rmdir: failed to remove 'd': Directory not empty", Code.FAILED_PRECONDITION, 'DIRECTORY_NOT_EMPTY'],
    ["mkdir: cannot create directory 'x': File exists", Code.ALREADY_EXISTS, 'FILE_EXISTS'],
  ])('recognises %j', (stderr, code, reason) => {
    expect(failureOf({ verb: 'write', path: '/a' }, 1, stderr)).toMatchObject({ code, reason });
  });

  test('a path below a file is FAILED_PRECONDITION naming the field that holds it', () => {
    const write = failureOf({ verb: 'write', path: '/f/x' }, FS_EXIT.UNDER_FILE, '');
    expect(write).toMatchObject({ code: Code.FAILED_PRECONDITION, reason: 'NOT_A_DIRECTORY' });
    expect(write.message).toBe(
      'Cannot write "/f/x": "/f/x" is below a file: a parent in path is not a directory',
    );
    expect(write.violations.map((v) => v.field)).toEqual(['path']);
    const move = { verb: 'move', path: '/f/x', field: 'source_path', destination: '/g/y' };
    expect(failureOf(move, FS_EXIT.UNDER_FILE, '').violations[0]?.field).toBe('source_path');
    const destination = failureOf(move, FS_EXIT.DESTINATION_UNDER_FILE, '');
    expect(destination.violations[0]).toMatchObject({ field: 'destination_path' });
    expect(destination.message).toMatch(/^Cannot move "\/f\/x" to "\/g\/y": "\/g\/y" is below a file/);
  });

  test('an unrecognised failure is INTERNAL and shows nothing of the tool’s message', () => {
    const error = failureOf({ verb: 'move', path: '/a', destination: '/b' }, 1, 'secret host detail');
    expect(error.code).toBe(Code.INTERNAL);
    expect(error.message).toBe('Cannot move "/a" to "/b": the sandbox command failed');
    expect((error.cause as Error).message).toContain('secret host detail');
  });
});
