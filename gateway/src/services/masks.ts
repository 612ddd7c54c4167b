import { jsonName } from '../rest/request.ts';

/**
 * Copies the fields named by snake_case `paths` from `source` onto a copy of `target`. The paths
 * are the client's, checked against the message's fields (`validation/update-mask.ts`): this is
 * where a field is chosen by its name at run time.
 */
export function applyMask<T extends object>(target: T, source: T, paths: readonly string[]): T {
  const result = { ...target };
  for (const path of paths) {
    const key = jsonName(path);
    Reflect.set(result, key, Reflect.get(source, key));
  }
  return result;
}
