/**
 * An OpenID provider on loopback for `make run` and the tests: the certified `oidc-provider`
 * library with discovery, a JWKS, and a token endpoint whose refresh_token grant issues signed
 * JWT access tokens for the gateway's audience. Clients log in exactly as against a real
 * platform (the Python client's `login_custom(endpoint, refresh_token, issuer_url, client_id)`);
 * refresh tokens are minted here for the configured accounts, in place of an interactive login.
 * Browsers sign in by the authorization-code flow with PKCE through a second, public client
 * whose redirect addresses are registered as the gateways that use it start, on a login page
 * that lists the accounts (no passwords: a development tool).
 * Development and test tool only: the product verifies tokens of whatever issuer it is given.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
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
  /** The public client browsers sign in through (default `ai-engine-manager-browser`). */
  browserClientId?: string;
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
  /** The client browsers sign in through (authorization code with PKCE). */
  browserClientId: string;
  /** The scopes a browser sign-in asks for, for an access token of the gateway's audience. */
  browserScopes: string;
  /** Lets browsers sign in for a gateway whose sign-in returns to `redirectUri`. */
  allowRedirect(redirectUri: string): void;
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
/** Where the provider's own login page is, for each sign-in in progress. */
const INTERACTION_PATH = '/interaction/';
/** The scopes of a browser sign-in: the user's name, and an access token for the API. */
const BROWSER_SCOPES = 'openid profile api';
/** The resource indicator of the gateway's API, whose audience the access tokens name. */
const RESOURCE = 'urn:ai-engine-manager:api';
const DAY = 24 * 60 * 60;

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const escapeHtml = (text: string): string => text.replace(/[&<>"]/g, (c) => ESCAPES[c] ?? c);

/** The provider's login page: one button per account. */
function loginPage(accounts: ReadonlyMap<string, Account>, problem = ''): string {
  const buttons = [...accounts.values()]
    .map(
      (a) =>
        `<li><button type="submit" name="account" value="${escapeHtml(a.id)}">${escapeHtml(a.name)} (${escapeHtml(a.id)})</button></li>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head>
<body><h1>Sign in</h1>${problem === '' ? '' : `<p role="alert">${escapeHtml(problem)}</p>`}
<p>The development identity provider of AI Engine Manager: pick who you are.</p>
<form method="post"><ul>
${buttons}
</ul></form></body></html>
`;
}

async function formOf(request: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).byteLength;
    if (size > 16_384) throw new Error('the form is too large');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const isStrings = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((v) => typeof v === 'string');

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

/** The sign-in's grant so far, or a new one for its account and client. */
async function grantOf(provider: Provider, details: Interaction): Promise<InstanceType<Provider['Grant']>> {
  const found = details.grantId === undefined ? undefined : await provider.Grant.find(details.grantId);
  if (found !== undefined) return found;
  const accountId = details.session?.accountId;
  if (accountId === undefined) throw new Error('nobody is signed in');
  return new provider.Grant({ accountId, clientId: String(details.params['client_id']) });
}

/** The grant of what a first-party client asked for, given at once; its id. */
async function consent(provider: Provider, details: Interaction): Promise<string> {
  const grant = await grantOf(provider, details);
  const missing = details.prompt.details;
  if (isStrings(missing['missingOIDCScope'])) grant.addOIDCScope(missing['missingOIDCScope'].join(' '));
  if (isStrings(missing['missingOIDCClaims'])) grant.addOIDCClaims(missing['missingOIDCClaims']);
  const resources = missing['missingResourceScopes'];
  const scopes = typeof resources === 'object' && resources !== null ? Object.entries(resources) : [];
  for (const [indicator, names] of scopes)
    if (isStrings(names)) grant.addResourceScope(indicator, names.join(' '));
  return grant.save();
}

/**
 * One step of a browser's sign-in: the login page (GET), the account picked on it (POST), and
 * the consent a first-party client needs, given at once for what it asked.
 */
async function signIn(
  provider: Provider,
  accounts: ReadonlyMap<string, Account>,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const details = await provider.interactionDetails(request, response);
  if (details.prompt.name === 'consent') {
    const grantId = await consent(provider, details);
    await provider.interactionFinished(
      request,
      response,
      { consent: { grantId } },
      { mergeWithLastSubmission: true },
    );
    return;
  }
  if (request.method === 'POST') {
    const accountId = (await formOf(request)).get('account') ?? '';
    if (accounts.has(accountId)) {
      await provider.interactionFinished(
        request,
        response,
        { login: { accountId } },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    response.writeHead(400, { 'content-type': 'text/html; charset=utf-8' });
    response.end(loginPage(accounts, `There is no account "${accountId}".`));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  response.end(loginPage(accounts));
}

/** A new RS256 signing key. */
export async function generateSigningKey(): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' };
}

interface Settings {
  clientId: string;
  browserClientId: string;
  redirectUris: readonly string[];
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
      {
        client_id: options.browserClientId,
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [...options.redirectUris],
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
    scopes: ['openid', 'offline_access', 'api', 'profile'],
    claims: { openid: ['sub'], profile: ['name', 'preferred_username'] },
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PATH}${interaction.uid}` },
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
    browserClientId: options.browserClientId ?? 'ai-engine-manager-browser',
    audience,
    accessTokenTtl: options.accessTokenTtlSeconds ?? 3600,
    // Shared by every key generation, so that tokens outlive a key rotation.
    adapter: memoryAdapter(),
    cookieKey: randomBytes(32).toString('base64url'),
  };
  const redirectUris: string[] = [];
  const build = (): Provider =>
    new Provider(issuer, configuration(accounts, { ...settings, keys, redirectUris }));
  let provider = build();
  let callback = provider.callback();
  server.on('request', (request, response) => {
    if (request.url?.startsWith(INTERACTION_PATH) === true)
      signIn(provider, accounts, request, response).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(400, { 'content-type': 'text/plain' });
        response.end(`This sign-in cannot go on: ${error instanceof Error ? error.message : String(error)}`);
      });
    else void callback(request, response);
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
      provider = build();
      callback = provider.callback();
      return keys[0] as SigningKey;
    },
    browserClientId: settings.browserClientId,
    browserScopes: BROWSER_SCOPES,
    allowRedirect: (redirectUri) => {
      if (redirectUris.includes(redirectUri)) return;
      redirectUris.push(redirectUri);
      provider = build();
      callback = provider.callback();
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
