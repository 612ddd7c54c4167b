/**
 * FileInfo from what the sandbox scripts print: `stat -c '%F|%s|%Y|%a'` lines (GNU coreutils and
 * busybox print the same), and the API's octal mode text.
 */
import { FileType, type FileInfo } from '../gen/ai/h2o/engine/v1/file_info.pb.ts';
import { invalidArgument } from '../errors/api-error.ts';
import { childPath } from './sandbox-path.ts';

/** The stat format the scripts print: type, size, mtime in seconds, octal permission bits. */
export const STAT_FORMAT = '%F|%s|%Y|%a';

const TYPES: Readonly<Record<string, FileType>> = {
  'regular file': FileType.FILE_TYPE_REGULAR,
  'regular empty file': FileType.FILE_TYPE_REGULAR,
  directory: FileType.FILE_TYPE_DIRECTORY,
  'symbolic link': FileType.FILE_TYPE_SYMLINK,
};

/**
 * The FileInfo of `path` from one {@link STAT_FORMAT} line. Entries that are neither files,
 * directories nor links (fifos, sockets, devices) have type UNSPECIFIED.
 *
 * @throws Error when the line is not in that format (a script or tool that misbehaved)
 */
export function parseStat(path: string, line: string): FileInfo {
  const match = /^([a-z ]+)\|(\d+)\|(-?\d+)\|([0-7]{1,4})$/.exec(line.trim());
  if (match === null) throw new Error(`Unexpected stat output for "${path}": ${JSON.stringify(line)}`);
  const [, type = '', size = '0', mtime = '0', mode = ''] = match;
  return {
    path,
    size,
    type: TYPES[type] ?? FileType.FILE_TYPE_UNSPECIFIED,
    modifyTime: new Date(Number(mtime) * 1000),
    mode: mode.padStart(4, '0'),
  };
}

/**
 * The entries of a listing: records of a {@link STAT_FORMAT} line, a newline, the entry's name
 * and a NUL byte (names may hold newlines; they cannot hold NUL). Sorted by name, in byte order.
 */
export function parseListing(dir: string, output: Buffer): FileInfo[] {
  const entries: FileInfo[] = [];
  let at = 0;
  while (at < output.length) {
    const newline = output.indexOf(0x0a, at);
    const nul = output.indexOf(0x00, newline + 1);
    if (newline < 0 || nul < 0) throw new Error(`Truncated listing of "${dir}"`);
    const name = output.subarray(newline + 1, nul).toString('utf8');
    entries.push(parseStat(childPath(dir, name), output.subarray(at, newline).toString()));
    at = nul + 1;
  }
  return entries.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
}

/**
 * The permission bits of a write as `chmod` takes them, or `undefined` when `mode` is empty.
 *
 * @throws ApiError INVALID_ARGUMENT naming `mode` unless it is 3 or 4 octal digits, e.g. "0644"
 */
export function fileMode(mode: string): string | undefined {
  if (mode === '') return undefined;
  if (!/^(0?[0-7]{3}|[0-7]{4})$/.test(mode)) {
    throw invalidArgument('mode', `"${mode}" is not octal permission bits such as "0644" or "0600"`);
  }
  return mode.padStart(4, '0');
}
