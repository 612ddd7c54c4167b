/**
 * The authorization policy: grants that bind roles or subjects to permission patterns in
 * workspace patterns. Parsing is strict — a typo in a policy must not silently grant or deny —
 * and matching is a pure function of the policy and the call.
 */
import yaml from 'js-yaml';
import type { Caller } from './authorizer.ts';
import { PERMISSIONS } from './permissions.ts';

/** One grant as written in the policy file. */
export interface GrantSpec {
  description?: string;
  /** Role patterns; the grant applies to a caller holding a role any of them matches. */
  roles?: string[];
  /** Subject patterns (`users/<sub>`); the grant applies to a caller whose subject one matches. */
  subjects?: string[];
  /** Workspace id patterns (`*` for every workspace, `-` for all workspaces at once). */
  workspaces: string[];
  /** Permission patterns, e.g. `actions/enginemanager/daiEngines/*`. */
  permissions: string[];
}

/** Whether a value fits a pattern of the policy. */
type Matcher = (value: string) => boolean;

interface Grant {
  roles: Matcher[];
  subjects: Matcher[];
  workspaces: Matcher[];
  permissions: Matcher[];
}

/** A parsed policy, ready for {@link allows}. */
export interface Policy {
  readonly grants: readonly Grant[];
}

/** A policy file that cannot be used, with every problem found in it. */
export class PolicyError extends Error {
  override name = 'PolicyError';
  readonly problems: readonly string[];

  constructor(source: string, problems: readonly string[]) {
    super(`The policy ${source} is not valid: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

/**
 * A pattern as a matcher: `*` stands for any run of characters (slashes and line breaks
 * included), everything else for itself; the whole value must match.
 *
 * The values come from callers (workspace ids, token claims), so matching must not backtrack:
 * a regular expression of `.*` runs takes exponential time on `a*a*a*…b`. Fixed parts are found
 * left to right instead, the earliest fit of each leaving the most room for the rest, which
 * takes at most one scan of the value per part.
 */
export function patternMatcher(pattern: string): Matcher {
  const parts = pattern.split('*');
  const first = parts[0] ?? '';
  const last = parts.at(-1) ?? '';
  const middle = parts.slice(1, -1).filter((part) => part !== '');
  if (parts.length === 1) return (value) => value === pattern;
  return (value) => {
    const end = value.length - last.length;
    if (end < first.length || !value.startsWith(first) || !value.endsWith(last)) return false;
    let at = first.length;
    for (const part of middle) {
      const found = value.indexOf(part, at);
      if (found < 0 || found + part.length > end) return false;
      at = found + part.length;
    }
    return true;
  };
}

const GRANT_KEYS = new Set(['description', 'roles', 'subjects', 'workspaces', 'permissions']);

/** The strings of a list field of a grant, and the problems with it. */
function patterns(value: unknown, path: string, problems: string[]): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.push(`${path} must be a list of strings`);
    return [];
  }
  const strings: string[] = [];
  value.forEach((item: unknown, index) => {
    if (typeof item === 'string' && item.trim() !== '') strings.push(item);
    else problems.push(`${path}[${index}] must be a non-empty string`);
  });
  return strings;
}

function permissionProblems(permissions: readonly string[], path: string): string[] {
  return permissions.flatMap((pattern, index) => {
    const matches = patternMatcher(pattern);
    return PERMISSIONS.some(matches)
      ? []
      : [`${path}[${index}] "${pattern}" matches no permission of the API`];
  });
}

function keyProblems(spec: Record<string, unknown>, path: string): string[] {
  const problems = Object.keys(spec)
    .filter((k) => !GRANT_KEYS.has(k))
    .map((key) => `${path} has an unknown key "${key}"`);
  if (spec['description'] !== undefined && typeof spec['description'] !== 'string')
    problems.push(`${path}.description must be a string`);
  return problems;
}

function parseGrant(value: unknown, path: string, problems: string[]): Grant | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`${path} must be a mapping`);
    return undefined;
  }
  const spec = value as Record<string, unknown>;
  problems.push(...keyProblems(spec, path));
  const roles = patterns(spec['roles'], `${path}.roles`, problems);
  const subjects = patterns(spec['subjects'], `${path}.subjects`, problems);
  const workspaces = patterns(spec['workspaces'], `${path}.workspaces`, problems);
  const permissions = patterns(spec['permissions'], `${path}.permissions`, problems);
  if (roles.length === 0 && subjects.length === 0)
    problems.push(`${path} must name roles or subjects it applies to`);
  if (workspaces.length === 0) problems.push(`${path}.workspaces must name at least one workspace pattern`);
  if (permissions.length === 0)
    problems.push(`${path}.permissions must name at least one permission pattern`);
  problems.push(...permissionProblems(permissions, `${path}.permissions`));
  return {
    roles: roles.map(patternMatcher),
    subjects: subjects.map(patternMatcher),
    workspaces: workspaces.map(patternMatcher),
    permissions: permissions.map(patternMatcher),
  };
}

/**
 * Parses a policy document (YAML, or JSON, which is YAML too).
 *
 * @param source where the text came from, for messages
 * @throws PolicyError naming every problem found
 */
export function parsePolicy(text: string, source: string): Policy {
  let document: unknown;
  try {
    document = yaml.load(text, { schema: yaml.CORE_SCHEMA, filename: source });
  } catch (error: unknown) {
    throw new PolicyError(source, [error instanceof Error ? error.message : String(error)]);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    throw new PolicyError(source, ['the document must be a mapping with a "grants" list']);
  const problems: string[] = [];
  for (const key of Object.keys(document).filter((k) => k !== 'grants'))
    problems.push(`unknown top-level key "${key}"`);
  const list = (document as Record<string, unknown>)['grants'];
  if (!Array.isArray(list)) problems.push('"grants" must be a list');
  const grants = (Array.isArray(list) ? list : []).map((grant: unknown, index) =>
    parseGrant(grant, `grants[${index}]`, problems),
  );
  if (problems.length > 0) throw new PolicyError(source, problems);
  return { grants: grants.filter((g): g is Grant => g !== undefined) };
}

function appliesTo(grant: Grant, caller: Caller): boolean {
  return (
    grant.subjects.some((matches) => matches(caller.subject)) ||
    grant.roles.some((matches) => caller.roles.some(matches))
  );
}

/** Whether some grant of the policy gives `caller` `permission` on `workspace`. */
export function allows(policy: Policy, caller: Caller, permission: string, workspace: string): boolean {
  return policy.grants.some(
    (grant) =>
      appliesTo(grant, caller) &&
      grant.workspaces.some((matches) => matches(workspace)) &&
      grant.permissions.some((matches) => matches(permission)),
  );
}
