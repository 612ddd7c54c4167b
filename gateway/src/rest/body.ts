import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import type { Json } from '../json/canonical.ts';

/**
 * Deepest nesting a request body may have. API messages nest a few levels; the limit leaves
 * room for any of them while keeping every later step (decoding, validation, error messages)
 * far from the stack's end.
 */
export const MAX_BODY_DEPTH = 64;

/**
 * What makes a parsed JSON body unacceptable before any field is read: nesting deeper than
 * {@link MAX_BODY_DEPTH}, or a string (value or key) holding a lone UTF-16 surrogate, which JSON's
 * `\uD800` escapes can express but no stored text can keep (it would silently become U+FFFD).
 * Walks without recursion, so no input can exhaust the stack here.
 */
export function bodyProblem(body: Json | undefined, root = ''): ApiError | undefined {
  const pending: Pending[] = body === undefined ? [] : [{ value: body, path: root, depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const members = membersOf(next);
    if (members instanceof ApiError) return members;
    pending.push(...members);
  }
  return undefined;
}

/** The members of a value to check next, or what is wrong with the value or its keys. */
function membersOf({ value, path, depth }: Pending): Pending[] | ApiError {
  if (typeof value === 'string') return value.isWellFormed() ? [] : surrogate(path);
  if (value === null || typeof value !== 'object') return [];
  if (depth > MAX_BODY_DEPTH) {
    return new ApiError(
      Code.INVALID_ARGUMENT,
      `The request body nests deeper than ${MAX_BODY_DEPTH} levels`,
      {
        reason: 'BODY_TOO_DEEP',
      },
    );
  }
  const entries = Array.isArray(value) ? [...value.entries()] : Object.entries(value);
  if (entries.some(([key]) => typeof key === 'string' && !key.isWellFormed())) return surrogate(path);
  return entries.map(([key, item]) => ({ value: item, path: memberPath(path, key), depth: depth + 1 }));
}

interface Pending {
  value: Json;
  path: string;
  depth: number;
}

/** `a.b[2]`-style paths, as field violations name fields. */
function memberPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

function surrogate(path: string): ApiError {
  const field = path === '' ? 'body' : path;
  return new ApiError(
    Code.INVALID_ARGUMENT,
    `${field}: text holds a lone UTF-16 surrogate, which is not valid Unicode`,
    {
      reason: 'INVALID_UNICODE',
      violations: [{ field, description: 'holds a lone UTF-16 surrogate, which is not valid Unicode' }],
    },
  );
}
