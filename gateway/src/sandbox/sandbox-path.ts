/**
 * Paths of a sandbox's filesystem as the API takes them: absolute, rooted at the sandbox root.
 * They are normalised here, before any command sees them, so that a path can never name
 * anything above the root, whatever the filesystem holds; the commands then prefix them with
 * the root (empty in a real container, the pod's own directory on the local test cluster).
 */
import { invalidArgument } from '../errors/api-error.ts';

/** Linux's PATH_MAX: the longest path the kernel takes, in bytes. */
export const MAX_PATH_BYTES = 4096;
/** Linux's NAME_MAX: the longest name of one entry, in bytes. */
export const MAX_NAME_BYTES = 255;

/**
 * `value` as an absolute path without `.`, `..`, empty segments or a trailing slash; `..` is
 * resolved lexically (`/a/../b` is `/b`).
 *
 * @throws ApiError INVALID_ARGUMENT naming `field` when the path is empty, relative, holds a NUL
 *   byte, is too long, or climbs above `/`
 */
export function sandboxPath(field: string, value: unknown): string {
  const problem = pathProblem(value);
  if (problem !== undefined) throw invalidArgument(field, problem);
  const segments: string[] = [];
  for (const segment of (value as string).split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment !== '..') segments.push(segment);
    else if (segments.pop() === undefined) {
      throw invalidArgument(field, `"${String(value)}" leads above the sandbox root "/"`);
    }
  }
  return `/${segments.join('/')}`;
}

/** What is wrong with a path before it is resolved, if anything. */
function pathProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return 'is required';
  if (!value.startsWith('/')) return `"${value}" is not an absolute path such as "/workspace/data.csv"`;
  if (value.includes('\0')) return 'must not contain a NUL character';
  if (Buffer.byteLength(value) > MAX_PATH_BYTES) return `must be at most ${MAX_PATH_BYTES} bytes long`;
  if (value.split('/').some((segment) => Buffer.byteLength(segment) > MAX_NAME_BYTES)) {
    return `has a name longer than ${MAX_NAME_BYTES} bytes`;
  }
  return undefined;
}

/** Whether `path` is `ancestor` or inside it; both normalised by {@link sandboxPath}. */
export function isWithin(path: string, ancestor: string): boolean {
  return ancestor === '/' || path === ancestor || path.startsWith(`${ancestor}/`);
}

/** The path of the entry `name` in the directory `dir` (normalised). */
export function childPath(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}
