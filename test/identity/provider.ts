/**
 * An OpenID provider on loopback for `make run` and the tests: the certified `oidc-provider`
 * library with discovery, a JWKS, and a token endpoint whose refresh_token grant issues signed
 * JWT access tokens for the gateway's audience. Clients log in exactly as against a real
 * platform (the Python client's `login_custom(endpoint, refresh_token, issuer_url, client_id)`);
 * refresh tokens are minted here for the configured accounts, in place of an interactive login.
 * Development and test tool only: the product verifies tokens of whatever issuer it is given.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { Provider, type AdapterFactory, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { memoryAdapter } from './memory-adapter.ts';

/** A user of the provider. */
export interface Account {
  /** The subject (`sub`); the gateway sees the caller `users/<id>`. */
  id: string;
  name: string;
  roles: readonly string[];
}

/** A private signing key (JWK with `kid` and `alg`). */
export type SigningKey = JWK & { kid: string; alg: string };

/** Options of {@link startIdentityProvider}. */
export interface IdentityProviderOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  accounts?: readonly Account[];
  /** The access tokens' `aud` (default `ai-engine-manager`). */
  audience?: string;
  /** The public client the tokens are issued to (default `ai-engine-manager-client`). */
  clientId?: string;
  /** Default 3600. */
  accessTokenTtlSeconds?: number;
  /** Signing keys, the first signs; new ones are generated when unset. */
  keys?: readonly SigningKey[];
}

/** A running provider. */
export interface IdentityProvider {
  /** The issuer URL (`iss`); discovery is at `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  audience: string;
  /** Where the roles are in the access tokens, for the gateway's configuration. */
  rolesClaim: string;
  /** The keys it signs with, the first one in use. */
  keys: readonly SigningKey[];
  /**
   * Starts signing with a new key, still publishing the earlier ones (as issuers rotate keys);
   * resolves to the new key.
   */
  rotateKeys(): Promise<SigningKey>;
  /** Adds or replaces an account. */
  addAccount(account: Account): void;
  /** A new refresh token of the account, usable any number of times (not rotated). */
  refreshToken(accountId: string): Promise<string>;
  /** An access token from the token endpoint's refresh_token grant, as clients get one. */
  exchange(refreshToken: string): Promise<string>;
  /** A fresh access token of the account (a new refresh token, exchanged). */
  accessToken(accountId: string): Promise<string>;
  stop(): Promise<void>;
}

/** Where the embedded provider puts roles: Keycloak's realm roles, a nested claim. */
export const ROLES_CLAIM = 'realm_access.roles';
/** The resource indicator of the gateway's API, whose audience the access tokens name. */
const RESOURCE = 'urn:ai-engine-manager:api';
const DAY = 24 * 60 * 60;

/** A new RS256 signing key. */
export async function generateSigningKey(): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' };
}

interface Settings {
  clientId: string;
  audience: string;
  accessTokenTtl: number;
  keys: readonly SigningKey[];
  adapter: AdapterFactory;
  cookieKey: string;
}

function configuration(accounts: Map<string, Account>, options: Settings): Configuration {
  return {
    clients: [
      {
        client_id: options.clientId,
        token_endpoint_auth_method: 'none',
        grant_types: ['refresh_token'],
        response_types: [],
        redirect_uris: [],
      },
    ],
    jwks: { keys: options.keys.map((k) => ({ ...k })) },
    adapter: options.adapter,
    findAccount: (_ctx: KoaContextWithOIDC, id: string) => {
      const account = accounts.get(id);
      if (account === undefined) return undefined;
      return {
        accountId: id,
        claims: () => ({ sub: id, name: account.name, preferred_username: id }),
      };
    },
    scopes: ['openid', 'offline_access', 'api'],
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'api',
          audience: options.audience,
          accessTokenFormat: 'jwt',
          accessTokenTTL: options.accessTokenTtl,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: (_ctx, token) => {
      const account = 'accountId' in token ? accounts.get(token.accountId) : undefined;
      if (account === undefined) return undefined;
      return {
        name: account.name,
        preferred_username: account.id,
        realm_access: { roles: [...account.roles] },
      };
    },
    // The same refresh token works for every login, as a platform's long-lived token does.
    rotateRefreshToken: false,
    ttl: {
      AccessToken: options.accessTokenTtl,
      RefreshToken: 30 * DAY,
      Grant: 30 * DAY,
      IdToken: 3600,
      Session: DAY,
      Interaction: 3600,
    },
    cookies: { keys: [options.cookieKey] },
  };
}

/** Starts a provider on loopback. */
export async function startIdentityProvider(
  options: IdentityProviderOptions = {},
): Promise<IdentityProvider> {
  const host = options.host ?? '127.0.0.1';
  const clientId = options.clientId ?? 'ai-engine-manager-client';
  const audience = options.audience ?? 'ai-engine-manager';
  let keys = options.keys ?? [await generateSigningKey()];
  const accounts = new Map((options.accounts ?? []).map((a) => [a.id, a]));
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const issuer = `http://${host}:${(server.address() as AddressInfo).port}`;
  const settings = {
    clientId,
    audience,
    accessTokenTtl: options.accessTokenTtlSeconds ?? 3600,
    // Shared by every key generation, so that tokens outlive a key rotation.
    adapter: memoryAdapter(),
    cookieKey: randomBytes(32).toString('base64url'),
  };
  let provider = new Provider(issuer, configuration(accounts, { ...settings, keys }));
  let callback = provider.callback();
  server.on('request', (request, response) => {
    void callback(request, response);
  });

  async function refreshToken(accountId: string): Promise<string> {
    if (!accounts.has(accountId)) throw new Error(`No account "${accountId}"`);
    const client = await provider.Client.find(clientId);
    if (client === undefined) throw new Error(`No client "${clientId}"`);
    const grant = new provider.Grant({ accountId, clientId });
    grant.addOIDCScope('openid offline_access');
    grant.addResourceScope(RESOURCE, 'api');
    const grantId = await grant.save();
    const token = new provider.RefreshToken({
      accountId,
      client,
      grantId,
      gty: 'refresh_token',
      scope: 'openid offline_access api',
      resource: RESOURCE,
      expiresWithSession: false,
    });
    return token.save();
  }

  async function exchange(refreshToken: string): Promise<string> {
    const response = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: clientId,
        refresh_token: refreshToken,
      }),
    });
    const body = (await response.json()) as { access_token?: string; error_description?: string };
    if (!response.ok || body.access_token === undefined)
      throw new Error(`The token endpoint answered ${response.status}: ${body.error_description ?? ''}`);
    return body.access_token;
  }

  return {
    issuer,
    clientId,
    audience,
    rolesClaim: ROLES_CLAIM,
    get keys() {
      return keys;
    },
    rotateKeys: async () => {
      keys = [await generateSigningKey(), ...keys];
      provider = new Provider(issuer, configuration(accounts, { ...settings, keys }));
      callback = provider.callback();
      return keys[0] as SigningKey;
    },
    addAccount: (account) => {
      accounts.set(account.id, account);
    },
    refreshToken,
    exchange,
    accessToken: async (accountId) => exchange(await refreshToken(accountId)),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
