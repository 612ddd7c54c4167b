/**
 * The identity of `make run`: the embedded provider with an administrator and two users of
 * different roles, the gateway's configuration for it, and tokens to try the API with.
 */
import { startIdentityProvider, type Account, type IdentityProvider } from './provider.ts';

/** The accounts of the local stack. */
export const LOCAL_ACCOUNTS: readonly Account[] = [
  { id: 'admin', name: 'Ada Admin', roles: ['admin'] },
  { id: 'alice', name: 'Alice Smith', roles: ['data-scientist'] },
  { id: 'bob', name: 'Bob Jones', roles: ['analyst'] },
];

/** One account's identity and credentials. */
export interface LocalUser {
  /** The caller the gateway sees, e.g. `users/alice`. */
  subject: string;
  name: string;
  roles: readonly string[];
  /** For `login_custom(endpoint, refresh_token, issuer_url, client_id)`; reusable. */
  refreshToken: string;
  /** For `Authorization: Bearer …`; valid for `accessTokenTtlSeconds`. */
  accessToken: string;
}

/** The running local identity. */
export interface LocalIdentity {
  provider: IdentityProvider;
  /** The gateway's environment variables for this issuer (see `authFromEnvironment`). */
  environment: Record<string, string>;
  users: Record<string, LocalUser>;
}

/** Starts the provider on `host:port` and issues tokens for every local account. */
export async function startLocalIdentity(options: {
  host: string;
  port: number;
  accessTokenTtlSeconds: number;
}): Promise<LocalIdentity> {
  const provider = await startIdentityProvider({ ...options, accounts: LOCAL_ACCOUNTS });
  const users: Record<string, LocalUser> = {};
  for (const account of LOCAL_ACCOUNTS) {
    const refreshToken = await provider.refreshToken(account.id);
    users[account.id] = {
      subject: `users/${account.id}`,
      name: account.name,
      roles: account.roles,
      refreshToken,
      accessToken: await provider.exchange(refreshToken),
    };
  }
  return {
    provider,
    environment: {
      AIEM_OIDC_ISSUER_URL: provider.issuer,
      AIEM_OIDC_AUDIENCE: provider.audience,
      AIEM_OIDC_ROLES_CLAIM: provider.rolesClaim,
      // Browsers sign in on the provider's page of the three accounts.
      AIEM_BROWSER_CLIENT_ID: provider.browserClientId,
      AIEM_BROWSER_SCOPES: provider.browserScopes,
    },
    users,
  };
}
