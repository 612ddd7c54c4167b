/**
 * Authentication and authorization as configured by environment variables (the README's
 * Configuration table lists them).
 */
import type { Authenticate } from '../call/handler.ts';
import type { Authorizer } from './authorizer.ts';
import { DEFAULT_CLAIM_NAMES } from './claims.ts';
import { DEFAULT_ALGORITHMS, oidcAuthenticate } from './oidc.ts';
import { DEFAULT_POLICY_FILE, watchPolicyFile } from './policy-authorizer.ts';

/** Who is calling and what they may do; `close()` stops watching the policy file. */
export interface Auth {
  authenticate: Authenticate;
  authorizer: Authorizer;
  close(): void;
}

type Environment = Readonly<Record<string, string | undefined>>;

function required(env: Environment, name: string): string {
  const value = env[name]?.trim();
  if (value === undefined || value === '') throw new Error(`${name} must be set`);
  return value;
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

function seconds(env: Environment, name: string, fallback: number): number {
  const value = Number(env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number of seconds`);
  return value;
}

/**
 * Verifies OIDC tokens of `AIEM_OIDC_ISSUER_URL` for `AIEM_OIDC_AUDIENCE` and applies the policy
 * of `AIEM_POLICY_FILE` (the built-in default policy when unset).
 *
 * @throws Error naming the variable that is missing or wrong, or the policy's problems
 */
export function authFromEnvironment(env: Environment = process.env): Auth {
  const authenticate = oidcAuthenticate({
    issuer: required(env, 'AIEM_OIDC_ISSUER_URL'),
    audiences: list(required(env, 'AIEM_OIDC_AUDIENCE')),
    claims: {
      subject: env['AIEM_OIDC_SUBJECT_CLAIM'] ?? DEFAULT_CLAIM_NAMES.subject,
      displayName: env['AIEM_OIDC_DISPLAY_NAME_CLAIM'] ?? DEFAULT_CLAIM_NAMES.displayName,
      roles: env['AIEM_OIDC_ROLES_CLAIM'] ?? DEFAULT_CLAIM_NAMES.roles,
    },
    algorithms: env['AIEM_OIDC_ALGORITHMS'] ? list(env['AIEM_OIDC_ALGORITHMS']) : DEFAULT_ALGORITHMS,
    clockSkewSeconds: seconds(env, 'AIEM_OIDC_CLOCK_SKEW_SECONDS', 30),
  });
  const policy = watchPolicyFile(env['AIEM_POLICY_FILE'] ?? DEFAULT_POLICY_FILE);
  return {
    authenticate,
    authorizer: policy.authorizer,
    close: () => {
      policy.close();
    },
  };
}
