/**
 * The caller from a verified token's claims. Identity providers put roles in different places
 * (`roles`, `groups`, Keycloak's `realm_access.roles`, Auth0's `https://example.com/roles`), so
 * the claim of each part of the identity is configured by name or dotted path.
 */
import type { Caller } from './authorizer.ts';

/** Which claims carry the subject, the display name and the roles. */
export interface ClaimNames {
  /** Default `sub`. */
  subject: string;
  /** Default `name`; when absent, `preferred_username`, then `email`, then the subject. */
  displayName: string;
  /** Default `roles`; a list of strings, or one string of space-separated roles. */
  roles: string;
}

export const DEFAULT_CLAIM_NAMES: ClaimNames = { subject: 'sub', displayName: 'name', roles: 'roles' };

/**
 * The value of a claim by name or dotted path: a top-level claim named exactly `path` first
 * (claim names may contain dots, as URL-like names do), else the walk down `a.b.c`.
 */
export function claimAt(claims: Readonly<Record<string, unknown>>, path: string): unknown {
  if (Object.hasOwn(claims, path)) return claims[path];
  let value: unknown = claims;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = Object.hasOwn(value, part) ? (value as Record<string, unknown>)[part] : undefined;
  }
  return value;
}

function nonEmptyString(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** Roles as a list: strings of a list (others skipped), or a space-separated string. */
function rolesOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((r): r is string => typeof r === 'string' && r !== '');
  if (typeof value === 'string') return value.split(/\s+/).filter((r) => r !== '');
  return [];
}

/**
 * The caller a token's claims describe, or `undefined` when they name no subject (a token that
 * cannot be attributed to anyone authenticates no one).
 */
export function callerFromClaims(
  claims: Readonly<Record<string, unknown>>,
  names: ClaimNames = DEFAULT_CLAIM_NAMES,
): Caller | undefined {
  const subject = nonEmptyString(claimAt(claims, names.subject));
  if (subject === undefined) return undefined;
  const displayName =
    nonEmptyString(claimAt(claims, names.displayName)) ??
    nonEmptyString(claims['preferred_username']) ??
    nonEmptyString(claims['email']) ??
    subject;
  return { subject: `users/${subject}`, displayName, roles: rolesOf(claimAt(claims, names.roles)) };
}
