import { jsonName } from '../rest/request.ts';

/** Copies the fields named by snake_case `paths` from `source` onto a copy of `target`. */
export function applyMask<T extends object>(target: T, source: object, paths: readonly string[]): T {
  const result = { ...target } as Record<string, unknown>;
  const from = source as Record<string, unknown>;
  for (const path of paths) {
    const key = jsonName(path);
    result[key] = from[key];
  }
  return result as unknown as T;
}
