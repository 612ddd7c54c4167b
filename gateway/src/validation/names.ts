import { invalidArgument, type ApiError } from '../errors/api-error.ts';

import {
  ANNOTATION_KEY as ANNOTATION_KEY_TEXT,
  MAX_LENGTH,
  RESOURCE_ID as RESOURCE_ID_TEXT,
  VERSION_ID as VERSION_ID_TEXT,
  WORKSPACE_ID as WORKSPACE_ID_TEXT,
} from '../../../shared/rules.ts';
import { parseResourceName } from '../../../shared/resource-name.ts';

export { MAX_LENGTH };
export const RESOURCE_ID = new RegExp(RESOURCE_ID_TEXT);
export const ANNOTATION_KEY = new RegExp(ANNOTATION_KEY_TEXT);
export const VERSION_ID = new RegExp(VERSION_ID_TEXT);
export const WORKSPACE_ID = new RegExp(WORKSPACE_ID_TEXT);

/** The first problem with `value` as a workspace id, or `undefined` when it is valid. */
export function workspaceIdProblem(value: string): string | undefined {
  if (value.length > MAX_LENGTH)
    return `workspace id must be at most ${MAX_LENGTH} characters, got ${value.length}`;
  if (!WORKSPACE_ID.test(value)) {
    return `workspace id "${value}" must consist of lowercase letters, digits and hyphens, and start and end with a letter or digit`;
  }
  return undefined;
}

/** The first problem with `value` as a resource id, or `undefined` when it is valid. */
export function resourceIdProblem(value: string): string | undefined {
  if (value === '') return 'is required';
  if (value.length > MAX_LENGTH) return `must be at most ${MAX_LENGTH} characters, got ${value.length}`;
  if (!RESOURCE_ID.test(value)) {
    return `"${value}" must consist of lowercase letters, digits and hyphens, start with a letter and end with a letter or digit`;
  }
  return undefined;
}

/** The first problem with `value` as a version id, or `undefined` when it is valid. */
export function versionIdProblem(value: string): string | undefined {
  if (value === '') return 'is required';
  if (value.length > MAX_LENGTH) return `must be at most ${MAX_LENGTH} characters, got ${value.length}`;
  if (!VERSION_ID.test(value)) return `"${value}" is not a version such as 1.10.6, 1.10.6.1 or 1.10.6-alpha`;
  return undefined;
}

/** Every problem with a list of aliases: each must be a valid id, and none may repeat. */
export function aliasProblems(aliases: readonly string[]): { index: number; problem: string }[] {
  const problems = aliases.flatMap((alias, index) => {
    const problem = resourceIdProblem(alias);
    return problem === undefined ? [] : [{ index, problem }];
  });
  aliases.forEach((alias, index) => {
    if (aliases.indexOf(alias) !== index) problems.push({ index, problem: `"${alias}" is listed twice` });
  });
  return problems;
}

/** The first problem with an annotations map's keys, or `undefined`. */
export function annotationProblem(
  annotations: Readonly<Record<string, string>>,
): { key: string; problem: string } | undefined {
  for (const key of Object.keys(annotations)) {
    if (key.length > MAX_LENGTH) return { key, problem: `key must be at most ${MAX_LENGTH} characters` };
    if (!ANNOTATION_KEY.test(key)) {
      return {
        key,
        problem: `key "${key}" must consist of letters, digits, "-", "_" and ".", starting and ending with a letter or digit`,
      };
    }
  }
  return undefined;
}

/** INVALID_ARGUMENT for a display name over the limit; display names need not be unique. */
export function checkDisplayName(field: string, value: string): ApiError | undefined {
  return value.length > MAX_LENGTH
    ? invalidArgument(field, `must be at most ${MAX_LENGTH} characters, got ${value.length}`)
    : undefined;
}

/** Splits `workspaces/{workspace}/{collection}/{id}`, checking the collection. */
export function parseName(name: string, collection: string): { workspace: string; id: string } | undefined {
  const parsed = parseResourceName(name, collection);
  return parsed === undefined ? undefined : { workspace: parsed.workspace, id: parsed.id };
}
