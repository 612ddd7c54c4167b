import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Code } from '../errors/code.ts';
import { failureOf, FS_EXIT, WRITE_FILE } from './filesystem-scripts.ts';
import { sandboxScript } from './pod-exec.ts';

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

describe('WRITE_FILE', () => {
  test('reads all the bytes it was sent when its temporary file cannot be created, and fails', () => {
    const root = mkdtempSync(join(tmpdir(), 'write-file-'));
    try {
      mkdirSync(join(root, 'd'));
      const argv = sandboxScript(WRITE_FILE, ['/d/a.txt', '1000', '0', '0', '']);
      // The script's temporary file is "<folder>/.aiem-write-<its pid>": a folder of that name,
      // made by the shell that then becomes the script (exec keeps the pid), refuses it even to
      // root. What the script leaves of its input is counted after it.
      const outer = `sh -c 'mkdir "$AIEM_SANDBOX_ROOT/d/.aiem-write-$$" && exec sh -c "$0" "$@"' "$@"; echo "exit $?"; wc -c`;
      const result = spawnSync('sh', ['-c', outer, 'sh', ...argv.slice(2)], {
        env: { PATH: process.env['PATH'] ?? '', AIEM_SANDBOX_ROOT: root },
        input: Buffer.concat([Buffer.alloc(1000, 7), Buffer.from('rest')]),
        encoding: 'utf8',
      });
      expect(result.stdout.split(/\s+/).filter(Boolean)).toEqual(['exit', '1', '4']);
      expect(result.stderr).toMatch(/Is a directory/);
    } finally {
      rmSync(root, { recursive: true });
    }
  });
});
