/**
 * Real identity for a test file: the embedded OpenID provider, the gateway's OIDC verification
 * of its tokens, and a policy file. Pass `authenticate` and `authorizer` to useApiServer; they
 * work once the file's beforeAll hooks have run.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata } from '@grpc/grpc-js';
import type { Authorizer } from '../../gateway/src/auth/authorizer.ts';
import { oidcAuthenticate } from '../../gateway/src/auth/oidc.ts';
import {
  DEFAULT_POLICY_FILE,
  watchPolicyFile,
  type PolicyFile,
} from '../../gateway/src/auth/policy-authorizer.ts';
import type { Authenticate } from '../../gateway/src/call/handler.ts';
import { startIdentityProvider, type Account, type IdentityProvider } from '../identity/provider.ts';

/** Options of {@link useIdentity}. */
export interface IdentityOptions {
  accounts: readonly Account[];
  /** The policy as YAML; the built-in default policy when unset. */
  policy?: string;
  /** How often the policy file is checked for changes (default 100 ms). */
  policyPollMs?: number;
  /** Shortest time between key set fetches for unknown key ids (default 0). */
  jwksCooldownMs?: number;
}

/** The identity of a test file. */
export interface TestIdentity {
  provider: IdentityProvider;
  /** The policy file the gateway applies; rewrite it to change the policy. */
  policyPath: string;
  /** One entry per reload of the policy file: undefined, or why the changed file was refused. */
  policyReloads: unknown[];
  /** A valid access token of the account (cached per account). */
  token(accountId: string): Promise<string>;
  /** REST headers carrying the account's token. */
  headers(accountId: string): Promise<Record<string, string>>;
  /** gRPC metadata carrying the account's token. */
  metadata(accountId: string): Promise<Metadata>;
}

/** Bearer headers and metadata for a raw token. */
export function bearer(token: string): { headers: Record<string, string>; metadata: Metadata } {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return { headers: { Authorization: `Bearer ${token}` }, metadata };
}

/** Starts the provider before the file's tests and stops it after them. */
export function useIdentity(options: IdentityOptions): {
  identity: () => TestIdentity;
  authenticate: Authenticate;
  authorizer: Authorizer;
} {
  let identity: TestIdentity | undefined;
  let verify: Authenticate | undefined;
  let policy: PolicyFile | undefined;
  let folder: string | undefined;

  beforeAll(async () => {
    const provider = await startIdentityProvider({ accounts: options.accounts });
    folder = mkdtempSync(join(tmpdir(), 'aiem-policy-'));
    const policyPath = options.policy === undefined ? DEFAULT_POLICY_FILE : join(folder, 'policy.yaml');
    if (options.policy !== undefined) writeFileSync(policyPath, options.policy);
    const policyReloads: unknown[] = [];
    policy = watchPolicyFile(policyPath, {
      intervalMs: options.policyPollMs ?? 100,
      onReload: (error) => {
        policyReloads.push(error);
      },
    });
    verify = oidcAuthenticate({
      issuer: provider.issuer,
      audiences: [provider.audience],
      claims: { subject: 'sub', displayName: 'name', roles: provider.rolesClaim },
      jwksCooldownMs: options.jwksCooldownMs ?? 0,
    });
    const tokens = new Map<string, Promise<string>>();
    const token = (accountId: string): Promise<string> => {
      let cached = tokens.get(accountId);
      if (cached === undefined) {
        cached = provider.accessToken(accountId);
        tokens.set(accountId, cached);
      }
      return cached;
    };
    identity = {
      provider,
      policyPath,
      policyReloads,
      token,
      headers: async (accountId) => bearer(await token(accountId)).headers,
      metadata: async (accountId) => bearer(await token(accountId)).metadata,
    };
  });

  afterAll(async () => {
    policy?.close();
    await identity?.provider.stop();
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  const current = (): TestIdentity => {
    if (identity === undefined) throw new Error('The identity provider is not running (did beforeAll fail?)');
    return identity;
  };
  const authorizer = (): Authorizer => {
    if (policy === undefined) throw new Error('The policy is not loaded (did beforeAll fail?)');
    return policy.authorizer;
  };
  return {
    identity: current,
    authenticate: (headers) => {
      if (verify === undefined) throw new Error('The identity provider is not running (did beforeAll fail?)');
      return verify(headers);
    },
    authorizer: {
      check: (caller, permission, workspace) => authorizer().check(caller, permission, workspace),
      isAdministrator: (caller, workspace) => authorizer().isAdministrator(caller, workspace),
    },
  };
}
