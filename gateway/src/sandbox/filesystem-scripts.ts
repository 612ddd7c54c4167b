/**
 * The POSIX shell scripts behind the FilesystemService, and what their failures mean. Each runs
 * as `sh -c <script> sh <args…>` (pod-exec.ts `sandboxScript`), so no argument is ever parsed by
 * a shell, and names every path as `"$R$1"`: `R` is empty in a real container and the pod's own
 * directory on the local test cluster. They use only tools that coreutils and busybox share.
 *
 * A script reports the failures the API distinguishes with its own exit codes
 * ({@link FS_EXIT}); anything else a tool reports is recognised from its message
 * ({@link failureOf}).
 */
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { STAT_FORMAT } from './file-info.ts';

/** Exit codes of the scripts, away from the 1, 2 and 126–128+ of shells and tools. */
export const FS_EXIT = {
  NOT_FOUND: 64,
  PARENT_MISSING: 65,
  EXISTS: 66,
  IS_DIRECTORY: 67,
  NOT_DIRECTORY: 68,
  NOT_EMPTY: 69,
  TOO_LARGE: 70,
  NOT_REGULAR: 71,
  SHORT_INPUT: 72,
  UNREADABLE: 73,
  /** Something above the path (or the source of a move) is a file, not a directory. */
  UNDER_FILE: 74,
  /** Something above the destination of a move is a file, not a directory. */
  DESTINATION_UNDER_FILE: 75,
} as const;

/**
 * Helpers every script starts with. `under_file` exits with `$2` (default
 * {@link FS_EXIT.UNDER_FILE}) when the nearest existing ancestor of `$1` is not a directory: a
 * path below a file is the caller's mistake, whatever else is missing (`mkdir -p` would call it
 * "File exists", and a lookup "No such file"). `ensure_parent` checks that first.
 */
const PRELUDE = `
exists() { [ -e "$1" ] || [ -L "$1" ]; }
info() { stat -L -c '${STAT_FORMAT}' -- "$1"; }
under_file() {
  u="\${1%/*}"
  while [ -n "$u" ]; do
    if exists "$u"; then [ -d "$u" ] && return 0; exit "\${2:-${FS_EXIT.UNDER_FILE}}"; fi
    u="\${u%/*}"
  done
}
ensure_parent() {
  d="\${1%/*}"; d="\${d:-/}"
  [ -d "$d" ] && return 0
  under_file "$1" "$3"
  if [ "$2" = 1 ]; then mkdir -p -- "$d" || exit 1; return 0; fi
  exit ${FS_EXIT.PARENT_MISSING}
}
`;

/** `$1` path, `$2` limit: prints the stat line, a newline, then at most limit + 1 bytes. */
export const READ_FILE = `${PRELUDE}
p="$R$1"
[ -e "$p" ] || { under_file "$p"; exit ${FS_EXIT.NOT_FOUND}; }
[ -d "$p" ] && exit ${FS_EXIT.IS_DIRECTORY}
[ -f "$p" ] || exit ${FS_EXIT.NOT_REGULAR}
[ -r "$p" ] || exit ${FS_EXIT.UNREADABLE}
i=$(info "$p") || exit 1
printf '%s\\n' "$i"
s=\${i#*|}; s=\${s%%|*}
[ "$s" -le "$2" ] || exit ${FS_EXIT.TOO_LARGE}
head -c "$(($2 + 1))" < "$p"
`;

/**
 * `$1` path, `$2` byte count (read from stdin), `$3` 1 to create only, `$4` 1 to create parents,
 * `$5` mode or empty. The bytes go to a temporary file beside the target, which then replaces it
 * (or is linked in its place, when creating only): a failed write leaves the target as it was.
 * A symbolic link is followed to the file it names. Whatever the outcome, the script reads all
 * the bytes sent before it ends, also when the temporary file cannot be made or filled (refused
 * in the folder, a full disk): head reads them into a pipe whose reader goes on into /dev/null
 * once the file fails. A command that ends with its input still arriving can lose its exit status
 * on the way back (the exec connection is torn down under the input still being sent).
 */
export const WRITE_FILE = `${PRELUDE}
p="$R$1"
t=""; drained=0
trap '[ -n "$t" ] && rm -f -- "$t"; [ "$drained" = 1 ] || head -c "$2" > /dev/null' EXIT
ensure_parent "$p" "$4"
if [ -L "$p" ]; then p=$(readlink -f -- "$p") || exit 1; fi
[ -d "$p" ] && exit ${FS_EXIT.IS_DIRECTORY}
m="$5"
if exists "$p"; then
  [ "$3" = 1 ] && exit ${FS_EXIT.EXISTS}
  [ -f "$p" ] || exit ${FS_EXIT.NOT_REGULAR}
  [ -n "$m" ] || m=$(stat -c '%a' -- "$p") || exit 1
fi
d="\${p%/*}"; d="\${d:-/}"
t="$d/.aiem-write-$$"
head -c "$2" | { cat > "$t"; r=$?; cat > /dev/null; exit "$r"; }; r=$?; drained=1
[ "$r" = 0 ] || exit 1
[ "$(wc -c < "$t")" -eq "$2" ] || exit ${FS_EXIT.SHORT_INPUT}
chmod "\${m:-0644}" -- "$t" || exit 1
if [ "$3" = 1 ]; then
  ln -- "$t" "$p" 2>/dev/null || { exists "$p" && exit ${FS_EXIT.EXISTS}; ln -- "$t" "$p" || exit 1; }
else
  mv -f -- "$t" "$p" || exit 1
fi
info "$p"
`;

/** `$1` path: the stat line of what the path names, links followed. */
export const STAT_FILE = `${PRELUDE}
p="$R$1"
[ -e "$p" ] || { under_file "$p"; exit ${FS_EXIT.NOT_FOUND}; }
info "$p"
`;

/** `$1` path: a stat line (links not followed), a newline, the name and a NUL, per entry. */
export const LIST_DIRECTORY = `${PRELUDE}
p="$R$1"
[ -e "$p" ] || { under_file "$p"; exit ${FS_EXIT.NOT_FOUND}; }
[ -d "$p" ] || exit ${FS_EXIT.NOT_DIRECTORY}
{ [ -r "$p" ] && [ -x "$p" ]; } || exit ${FS_EXIT.UNREADABLE}
for f in "$p"/* "$p"/.[!.]* "$p"/..?*; do
  exists "$f" || continue
  stat -c '${STAT_FORMAT}' -- "$f" 2>/dev/null || continue
  printf '%s\\000' "\${f##*/}"
done
`;

/** `$1` path, `$2` 1 to create parents: a new directory with mode 0755, and its stat line. */
export const MAKE_DIRECTORY = `${PRELUDE}
p="$R$1"
exists "$p" && exit ${FS_EXIT.EXISTS}
ensure_parent "$p" "$2"
mkdir -m 0755 -- "$p" || exit 1
info "$p"
`;

/** `$1` path, `$2` 1 to remove a directory with its content. A link is removed, not its target. */
export const REMOVE = `${PRELUDE}
p="$R$1"
exists "$p" || { under_file "$p"; exit ${FS_EXIT.NOT_FOUND}; }
if [ -d "$p" ] && [ ! -L "$p" ]; then
  if [ "$2" = 1 ]; then rm -rf -- "$p" || exit 1; exit 0; fi
  [ -z "$(ls -A -- "$p")" ] || exit ${FS_EXIT.NOT_EMPTY}
  rmdir -- "$p" || exit 1
else
  rm -f -- "$p" || exit 1
fi
`;

/**
 * `$1` source, `$2` destination, `$3` 1 to replace an existing destination, `$4` 1 to create its
 * parents. Links are moved and replaced, never followed; an existing directory is replaced only by
 * a directory and only when empty (never moved into, as plain \`mv\` would).
 */
export const MOVE = `${PRELUDE}
s="$R$1"; t="$R$2"
exists "$s" || { under_file "$s"; exit ${FS_EXIT.NOT_FOUND}; }
if exists "$t"; then
  [ "$3" = 1 ] || exit ${FS_EXIT.EXISTS}
  if [ -L "$t" ]; then rm -f -- "$t" || exit 1
  elif [ -d "$t" ]; then
    { [ -d "$s" ] && [ ! -L "$s" ]; } || exit ${FS_EXIT.IS_DIRECTORY}
    rmdir -- "$t" 2>/dev/null || exit ${FS_EXIT.NOT_EMPTY}
  elif [ -d "$s" ] && [ ! -L "$s" ]; then exit ${FS_EXIT.NOT_DIRECTORY}
  fi
fi
ensure_parent "$t" "$4" ${FS_EXIT.DESTINATION_UNDER_FILE}
# Checked again just before the move: plain mv would move into a directory found there.
if [ "$3" = 1 ]; then [ -d "$t" ] && [ ! -L "$t" ] && exit ${FS_EXIT.EXISTS}; else exists "$t" && exit ${FS_EXIT.EXISTS}; fi
mv -f -- "$s" "$t" || exit 1
info "$t" 2>/dev/null || stat -c '${STAT_FORMAT}' -- "$t"
`;

/** What failed, for the message: the action and the path it was taken on. */
export interface FailedAction {
  /** e.g. "read", "write", "list", "move". */
  verb: string;
  /** The path as the API names it (normalised, without the sandbox root). */
  path: string;
  /** The request field that holds `path`: `path` unless told (a move's is `source_path`). */
  field?: string;
  /** For a move, the destination (its field is `destination_path`). */
  destination?: string;
}

type Failure = readonly [Code, string, string];

/** The failures the scripts report themselves: code, reason, and what to say. */
const BY_EXIT: Readonly<Record<number, Failure>> = {
  [FS_EXIT.NOT_FOUND]: [Code.NOT_FOUND, 'FILE_NOT_FOUND', 'no such file or directory'],
  [FS_EXIT.PARENT_MISSING]: [
    Code.NOT_FOUND,
    'PARENT_NOT_FOUND',
    'the parent directory does not exist (set createParentDirectories to create it)',
  ],
  [FS_EXIT.EXISTS]: [Code.ALREADY_EXISTS, 'FILE_EXISTS', 'something already exists there'],
  [FS_EXIT.IS_DIRECTORY]: [Code.FAILED_PRECONDITION, 'IS_A_DIRECTORY', 'it is a directory'],
  [FS_EXIT.NOT_DIRECTORY]: [Code.FAILED_PRECONDITION, 'NOT_A_DIRECTORY', 'not a directory'],
  [FS_EXIT.NOT_EMPTY]: [
    Code.FAILED_PRECONDITION,
    'DIRECTORY_NOT_EMPTY',
    'the directory is not empty (set recursive to remove it with its content)',
  ],
  [FS_EXIT.NOT_REGULAR]: [Code.FAILED_PRECONDITION, 'NOT_A_REGULAR_FILE', 'it is not a regular file'],
  [FS_EXIT.UNREADABLE]: [Code.FAILED_PRECONDITION, 'PERMISSION_DENIED', 'permission denied in the sandbox'],
  [FS_EXIT.SHORT_INPUT]: [Code.UNAVAILABLE, 'TRANSFER_INTERRUPTED', 'the content did not arrive whole'],
  127: [
    Code.FAILED_PRECONDITION,
    'SANDBOX_TOOLS_MISSING',
    'the sandbox image lacks the POSIX shell tools (sh, stat, head, mv…) that file access needs',
  ],
};

/** The failures tools report, recognised from their (English, C locale) messages. */
const BY_MESSAGE: readonly (readonly [RegExp, Failure])[] = [
  [
    /Read-only file system/i,
    [Code.FAILED_PRECONDITION, 'READ_ONLY_FILESYSTEM', 'the file system is read-only'],
  ],
  [
    /Permission denied|Operation not permitted/i,
    [Code.FAILED_PRECONDITION, 'PERMISSION_DENIED', 'permission denied in the sandbox'],
  ],
  [/No space left|quota exceeded/i, [Code.RESOURCE_EXHAUSTED, 'NO_SPACE', 'the sandbox has no space left']],
  [/File exists/i, BY_EXIT[FS_EXIT.EXISTS] as Failure],
  [/Not a directory/i, [Code.FAILED_PRECONDITION, 'NOT_A_DIRECTORY', 'a parent is not a directory']],
  [/Is a directory/i, BY_EXIT[FS_EXIT.IS_DIRECTORY] as Failure],
  [/Directory not empty/i, BY_EXIT[FS_EXIT.NOT_EMPTY] as Failure],
  [/No such file or directory/i, BY_EXIT[FS_EXIT.NOT_FOUND] as Failure],
  [/name too long/i, [Code.INVALID_ARGUMENT, 'NAME_TOO_LONG', 'a name is too long for the file system']],
  [
    /Too many levels of symbolic links/i,
    [Code.FAILED_PRECONDITION, 'SYMLINK_LOOP', 'symbolic links form a loop'],
  ],
];

/**
 * The ApiError for a script that exited with `exitCode` (not 0) and printed `stderr`. Failures
 * that are the caller's (a missing file, a full disk) get their own code; anything unrecognised is
 * INTERNAL, with the tool's message kept as the cause for the log, not shown.
 */
export function failureOf(action: FailedAction, exitCode: number, stderr: string): ApiError {
  const underFile = underFileFailure(action, exitCode);
  if (underFile !== undefined) return underFile;
  const known = BY_EXIT[exitCode] ?? BY_MESSAGE.find(([pattern]) => pattern.test(stderr))?.[1];
  const target =
    action.destination === undefined ? `"${action.path}"` : `"${action.path}" to "${action.destination}"`;
  if (known === undefined) {
    return new ApiError(Code.INTERNAL, `Cannot ${action.verb} ${target}: the sandbox command failed`, {
      cause: new Error(`exit code ${exitCode}: ${stderr.trim()}`),
    });
  }
  const [code, reason, description] = known;
  return new ApiError(code, `Cannot ${action.verb} ${target}: ${description}`, { reason });
}

/**
 * A path below a file: FAILED_PRECONDITION (a file where a folder is needed, as the flag-less
 * write always answered), naming the request field, or undefined for any other exit code.
 */
function underFileFailure(action: FailedAction, exitCode: number): ApiError | undefined {
  const destination = exitCode === FS_EXIT.DESTINATION_UNDER_FILE ? action.destination : undefined;
  if (exitCode !== FS_EXIT.UNDER_FILE && destination === undefined) return undefined;
  const field = destination === undefined ? (action.field ?? 'path') : 'destination_path';
  const path = destination ?? action.path;
  const description = `"${path}" is below a file: a parent in ${field} is not a directory`;
  const target =
    action.destination === undefined ? `"${action.path}"` : `"${action.path}" to "${action.destination}"`;
  return new ApiError(Code.FAILED_PRECONDITION, `Cannot ${action.verb} ${target}: ${description}`, {
    reason: 'NOT_A_DIRECTORY',
    violations: [{ field, description }],
  });
}
