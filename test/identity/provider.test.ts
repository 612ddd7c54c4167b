import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { generateSigningKey, startIdentityProvider, type IdentityProvider } from './provider.ts';

let provider: IdentityProvider;

beforeAll(async () => {
  provider = await startIdentityProvider({
    accounts: [{ id: 'alice', name: 'Alice Smith', roles: ['data-scientist', 'gpu'] }],
    accessTokenTtlSeconds: 600,
  });
});

afterAll(async () => {
  await provider.stop();
});

interface TokenResponse {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number;
  token_type?: string;
  error?: string;
}

async function refresh(refreshToken: string, clientId = provider.clientId): Promise<TokenResponse> {
  const discovery = (await (await fetch(`${provider.issuer}/.well-known/openid-configuration`)).json()) as {
    token_endpoint: string;
  };
  const response = await fetch(discovery.token_endpoint, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: refreshToken,
    }),
  });
  return (await response.json()) as TokenResponse;
}

describe('startIdentityProvider()', () => {
  test('publishes discovery with its issuer, key set and token endpoint', async () => {
    const response = await fetch(`${provider.issuer}/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      issuer: provider.issuer,
      jwks_uri: `${provider.issuer}/jwks`,
      token_endpoint: `${provider.issuer}/token`,
      grant_types_supported: expect.arrayContaining(['refresh_token']) as unknown,
    });
  });

  test('exchanges a refresh token for a signed access token for the audience, with name and roles', async () => {
    const body = await refresh(await provider.refreshToken('alice'));
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 600 });
    const token = body.access_token ?? '';
    const keys = createRemoteJWKSet(new URL(`${provider.issuer}/jwks`));
    const { payload, protectedHeader } = await jwtVerify(token, keys, {
      issuer: provider.issuer,
      audience: provider.audience,
    });
    expect(protectedHeader).toMatchObject({ alg: 'RS256', kid: provider.keys[0]?.kid });
    expect(payload).toMatchObject({
      sub: 'alice',
      name: 'Alice Smith',
      realm_access: { roles: ['data-scientist', 'gpu'] },
      client_id: provider.clientId,
    });
  });

  test('keeps a refresh token usable for every later login', async () => {
    const refreshToken = await provider.refreshToken('alice');
    for (let i = 0; i < 3; i++) {
      const body = await refresh(refreshToken);
      expect(body.access_token).toBeDefined();
      expect(body.refresh_token).toBe(refreshToken);
    }
  });

  test('refuses unknown refresh tokens and other clients', async () => {
    expect(await refresh('not-a-token')).toMatchObject({ error: 'invalid_grant' });
    expect(await refresh(await provider.refreshToken('alice'), 'someone-else')).toMatchObject({
      error: 'invalid_client',
    });
    await expect(provider.refreshToken('nobody')).rejects.toThrow(/No account/);
  });

  test('signs with the first of the keys it is given, and publishes them all', async () => {
    const newer = await generateSigningKey();
    const rotated = await startIdentityProvider({
      accounts: [{ id: 'bob', name: 'Bob', roles: [] }],
      keys: [newer, ...provider.keys],
    });
    try {
      expect(decodeProtectedHeader(await rotated.accessToken('bob')).kid).toBe(newer.kid);
      const jwks = (await (await fetch(`${rotated.issuer}/jwks`)).json()) as {
        keys: { kid: string; d?: string }[];
      };
      expect(jwks.keys.map((k) => k.kid)).toEqual([newer.kid, provider.keys[0]?.kid]);
      expect(jwks.keys.every((k) => k.d === undefined)).toBe(true);
    } finally {
      await rotated.stop();
    }
  });
});
