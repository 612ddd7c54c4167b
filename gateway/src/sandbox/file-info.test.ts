import { FileType } from '../gen/ai/h2o/engine/v1/file_info.pb.ts';
import { fileMode, parseListing, parseStat } from './file-info.ts';

describe('parseStat()', () => {
  test('reads type, size, mtime and mode, with the mode as four octal digits', () => {
    expect(parseStat('/a.txt', 'regular file|12|1700000000|644\n')).toEqual({
      path: '/a.txt',
      size: '12',
      type: FileType.FILE_TYPE_REGULAR,
      modifyTime: new Date(1_700_000_000_000),
      mode: '0644',
    });
  });

  test.each([
    ['regular empty file', FileType.FILE_TYPE_REGULAR],
    ['directory', FileType.FILE_TYPE_DIRECTORY],
    ['symbolic link', FileType.FILE_TYPE_SYMLINK],
    ['fifo', FileType.FILE_TYPE_UNSPECIFIED],
    ['character special file', FileType.FILE_TYPE_UNSPECIFIED],
  ])('maps %j to its FileType', (type, expected) => {
    expect(parseStat('/x', `${type}|0|0|755`).type).toBe(expected);
  });

  test('keeps special bits: setuid and sticky', () => {
    expect(parseStat('/x', 'regular file|0|0|4755').mode).toBe('4755');
    expect(parseStat('/x', 'directory|0|0|1777').mode).toBe('1777');
    expect(parseStat('/x', 'directory|0|0|0').mode).toBe('0000');
  });

  test('throws on output in another format', () => {
    expect(() => parseStat('/x', 'stat: cannot stat')).toThrow(/Unexpected stat output/);
  });
});

describe('parseListing()', () => {
  test('reads NUL-terminated records, names with newlines included, sorted by name', () => {
    const output = Buffer.concat([
      Buffer.from('regular file|3|1|644\nb\nc\0'),
      Buffer.from('directory|4096|2|755\na\0'),
      Buffer.from('symbolic link|1|3|777\nl\0'),
    ]);
    expect(parseListing('/d', output).map((f) => [f.path, f.type])).toEqual([
      ['/d/a', FileType.FILE_TYPE_DIRECTORY],
      ['/d/b\nc', FileType.FILE_TYPE_REGULAR],
      ['/d/l', FileType.FILE_TYPE_SYMLINK],
    ]);
    expect(parseListing('/', Buffer.from('directory|0|0|755\ntmp\0'))[0]?.path).toBe('/tmp');
    expect(parseListing('/', Buffer.alloc(0))).toEqual([]);
  });

  test('throws on a truncated listing', () => {
    expect(() => parseListing('/d', Buffer.from('regular file|3|1|644\nb'))).toThrow(/Truncated/);
  });
});

describe('fileMode()', () => {
  test.each([
    ['', undefined],
    ['0644', '0644'],
    ['600', '0600'],
    ['1777', '1777'],
  ])('takes %j as %j', (mode, expected) => {
    expect(fileMode(mode)).toBe(expected);
  });

  test.each(['rw-r--r--', '0o644', '0888', '12345', '64'])('refuses %j naming mode', (mode) => {
    expect(() => fileMode(mode)).toThrow(/Invalid mode: .* is not octal permission bits/);
  });
});
