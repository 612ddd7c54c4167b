/**
 * Authentication over REST and gRPC with real tokens of the embedded OpenID provider: a corpus
 * of bad tokens is refused, always with the same UNAUTHENTICATED that tells nothing of why, on
 * every REST route (before the body is read: each request carries broken JSON) and every gRPC
 * method; good tokens map to callers through the configured claims; key rotation needs no restart.
 */
import { createHmac, createPrivateKey, createPublicKey, createSign } from 'node:crypto';
import { Metadata } from '@grpc/grpc-js';
import { decodeJwt, importJWK, SignJWT, type JWTPayload } from 'jose';
import { Code } from '../../gateway/src/errors/code.ts';
import { useApiServer } from '../helpers/api-server.ts';
import { useIdentity } from '../helpers/use-identity.ts';
import { generateSigningKey, type SigningKey } from '../identity/provider.ts';
import { ROUTES, type Route } from '../../gateway/src/gen/routes.ts';
import { overGrpc, RPCS, type Message } from './calls.ts';
import { defineCatalogue, engineBodies, ok } from './catalogue.ts';

const { identity, authenticate, authorizer } = useIdentity({
  accounts: [
    { id: 'admin', name: 'Ada Admin', roles: ['admin'] },
    { id: 'alice', name: 'Alice Smith', roles: ['data-scientist'] },
  ],
});
const api = useApiServer({ namespace: 'tokens-test', authenticate, authorizer });

const UNAUTHENTICATED = {
  code: Code.UNAUTHENTICATED,
  message: 'The request does not carry valid credentials',
  details: [
    {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'UNAUTHENTICATED',
      domain: 'engine.h2o.ai',
      metadata: {},
    },
  ],
};

const b64 = (value: object | string): string =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A token signed with `key` (the provider's own unless given) carrying `claims` over good defaults. */
async function signed(
  claims: JWTPayload,
  options: { key?: SigningKey; alg?: string; omit?: string[] } = {},
): Promise<string> {
  const { provider } = identity();
  const key = options.key ?? provider.keys[0];
  if (key === undefined) throw new Error('The provider has no key');
  const now = Math.floor(Date.now() / 1000);
  const payload: JWTPayload = {
    iss: provider.issuer,
    aud: provider.audience,
    sub: 'admin',
    iat: now,
    exp: now + 300,
    name: 'Ada Admin',
    realm_access: { roles: ['admin'] },
    ...claims,
  };
  const kept = Object.fromEntries(
    Object.entries(payload).filter(([claim]) => !options.omit?.includes(claim)),
  );
  const alg = options.alg ?? 'RS256';
  return new SignJWT(kept)
    .setProtectedHeader({ alg, kid: key.kid, typ: 'at+jwt' })
    .sign(await importJWK(key, alg));
}

/** The provider's public key as PEM: the secret of the classic RS256 → HS256 confusion attack. */
function publicPem(): string {
  const key = identity().provider.keys[0];
  if (key === undefined) throw new Error('The provider has no key');
  const { kty, n, e } = key;
  return createPublicKey({ key: { kty, n, e }, format: 'jwk' })
    .export({ type: 'spki', format: 'pem' })
    .toString();
}

/** Any JSON as a token signed with the provider's own key: claims jose would not let us write. */
function rs256(payload: Record<string, unknown>): string {
  const key = identity().provider.keys[0];
  if (key === undefined) throw new Error('The provider has no key');
  const input = `${b64({ alg: 'RS256', typ: 'at+jwt', kid: key.kid })}.${b64(payload)}`;
  const signature = createSign('RSA-SHA256')
    .update(input)
    .sign(createPrivateKey({ key, format: 'jwk' }));
  return `${input}.${signature.toString('base64url')}`;
}

function hs256(payload: JWTPayload, secret: string): string {
  const kid = identity().provider.keys[0]?.kid;
  const input = `${b64({ alg: 'HS256', typ: 'JWT', kid })}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

const LIST: { rpc: string; message: Message } = {
  rpc: 'DAIEngineVersionService.ListDAIEngineVersions',
  message: { parent: 'workspaces/tokens' },
};

/** The call as `authorization` (a header value, or none) over REST and gRPC: both outcomes. */
async function callAs(authorization: string | undefined): Promise<{ rest: unknown; grpc: number }> {
  const headers: Record<string, string> = authorization === undefined ? {} : { Authorization: authorization };
  const metadata = new Metadata();
  if (authorization !== undefined) metadata.set('authorization', authorization);
  const rest = await api().rest('GET', '/v1/workspaces/tokens/daiEngineVersions', undefined, headers);
  const grpc = await overGrpc(api(), { ...LIST, metadata });
  return { rest: { status: rest.status, body: rest.status === 200 ? 'ok' : rest.json }, grpc: grpc.code };
}

const REFUSED = { rest: { status: 401, body: UNAUTHENTICATED }, grpc: Code.UNAUTHENTICATED };
const ACCEPTED = { rest: { status: 200, body: 'ok' }, grpc: Code.OK };
const now = (): number => Math.floor(Date.now() / 1000);

/** Bad credentials, each as the Authorization header it makes (none for the first). */
const CORPUS: readonly [string, () => Promise<string | undefined>][] = [
  ['no Authorization header', () => Promise.resolve(undefined)],
  ['an empty bearer token', () => Promise.resolve('Bearer ')],
  ['another scheme', () => Promise.resolve('Basic YWRtaW46YWRtaW4=')],
  ['a malformed token', () => Promise.resolve('Bearer not-a-token')],
  ['three parts that are not JSON', () => Promise.resolve('Bearer a.b.c')],
  ['an expired token', async () => `Bearer ${await signed({ exp: now() - 120, iat: now() - 600 })}`],
  ['a token not yet valid', async () => `Bearer ${await signed({ nbf: now() + 120 })}`],
  ['a token without an expiry', async () => `Bearer ${await signed({}, { omit: ['exp'] })}`],
  ['a token of another issuer', async () => `Bearer ${await signed({ iss: 'https://id.example.com' })}`],
  ['a token for another audience', async () => `Bearer ${await signed({ aud: 'another-api' })}`],
  [
    'an ID token (its audience is the client)',
    async () => {
      const { provider } = identity();
      const response = await fetch(`${provider.issuer}/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          client_id: provider.clientId,
          refresh_token: await provider.refreshToken('admin'),
        }),
      });
      return `Bearer ${((await response.json()) as { id_token: string }).id_token}`;
    },
  ],
  ['a token without a subject', async () => `Bearer ${await signed({}, { omit: ['sub'] })}`],
  [
    'a token signed by a key of an unknown id',
    async () => `Bearer ${await signed({}, { key: await generateSigningKey() })}`,
  ],
  [
    'a token signed by an unknown key under a known key id',
    async () => {
      const kid = identity().provider.keys[0]?.kid ?? '';
      return `Bearer ${await signed({}, { key: { ...(await generateSigningKey()), kid } })}`;
    },
  ],
  [
    'a tampered payload (roles raised, signature kept)',
    async () => {
      const token = await identity().provider.accessToken('alice');
      const [header, , signature] = token.split('.');
      const payload = { ...decodeJwt(token), realm_access: { roles: ['admin'] } };
      return `Bearer ${header}.${b64(payload)}.${signature}`;
    },
  ],
  [
    'a token whose header names another algorithm than it was signed with',
    async () => {
      const [, payload, signature] = (await identity().provider.accessToken('alice')).split('.');
      const kid = identity().provider.keys[0]?.kid;
      return `Bearer ${b64({ alg: 'RS512', typ: 'at+jwt', kid })}.${payload}.${signature}`;
    },
  ],
  [
    'an unsigned token (alg none)',
    async () => {
      const claims = decodeJwt(await signed({}));
      return `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
    },
  ],
  [
    'an HS256 token keyed with the public key (PEM)',
    async () => `Bearer ${hs256(decodeJwt(await signed({})), publicPem())}`,
  ],
  [
    'an HS256 token keyed with the public key (JWK modulus)',
    async () => `Bearer ${hs256(decodeJwt(await signed({})), identity().provider.keys[0]?.n ?? '')}`,
  ],
  [
    'a token that carries its own key (embedded jwk header)',
    async () => {
      const key = await generateSigningKey();
      const { d: _private, ...jwk } = key;
      const claims = decodeJwt(await signed({}));
      return `Bearer ${await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: key.kid, jwk })
        .sign(await importJWK(key, 'RS256'))}`;
    },
  ],
  [
    'a token that points at its own key set (jku header)',
    async () => {
      const key = await generateSigningKey();
      const claims = decodeJwt(await signed({}));
      return `Bearer ${await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: key.kid, jku: 'http://127.0.0.1:1/keys.json' })
        .sign(await importJWK(key, 'RS256'))}`;
    },
  ],
  [
    'a token whose key id walks paths',
    async () =>
      `Bearer ${await signed({}, { key: { ...(await generateSigningKey()), kid: '../../etc/passwd' } })}`,
  ],
  [
    'an expiry written as text (signed by the provider’s own key)',
    async () => `Bearer ${rs256({ ...decodeJwt(await signed({})), exp: String(now() + 300) })}`,
  ],
  ['an empty subject', async () => `Bearer ${await signed({ sub: '' })}`],
  [
    'an encrypted token (JWE, five parts)',
    () => Promise.resolve(`Bearer ${b64({ alg: 'RSA-OAEP', enc: 'A256GCM' })}.a.b.c.d`),
  ],
  ['a token of 8,000 characters of noise', () => Promise.resolve(`Bearer ${'A'.repeat(8_000)}`)],
  ['characters outside base64url', () => Promise.resolve('Bearer a$b.c%d.e!f')],
  [
    'the token twice',
    async () => {
      const t = await identity().token('alice');
      return `Bearer ${t} ${t}`;
    },
  ],
  ['the scheme without a space', async () => `Bearer:${await identity().token('alice')}`],
];

describe('a request is refused with 401 UNAUTHENTICATED, saying nothing more, when it carries', () => {
  test.each(CORPUS)('%s', async (_what, token) => {
    expect(await callAs(await token())).toEqual(REFUSED);
  });
});

describe('every REST route and every gRPC method refuses the whole corpus the same way', () => {
  const headers: (string | undefined)[] = [];
  beforeAll(async () => {
    for (const [, token] of CORPUS) headers.push(await token());
  });

  /** The route's path with a plausible value in every variable, so that routing would succeed. */
  const pathOf = (route: Route): string =>
    route.path.replace(/\{[^}=]+(?:=([^}]*))?\}/g, (_all, pattern?: string) =>
      (pattern ?? 'x').replaceAll('*', 'tokens').replaceAll('/', '%2F'),
    );

  test.each(ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))(
    'REST %s',
    async (_name, route) => {
      const answers = await Promise.all(
        headers.map(async (authorization) => {
          const response = await fetch(`${api().gateway.restUrl}${pathOf(route)}`, {
            method: route.method,
            headers: {
              'Content-Type': 'application/json',
              ...(authorization === undefined ? {} : { Authorization: authorization }),
            },
            ...(route.body === '' ? {} : { body: '{"not": "read"' }),
          });
          return {
            status: response.status,
            challenge: response.headers.get('www-authenticate'),
            body: await response.json(),
          };
        }),
      );
      const refused = { status: 401, challenge: 'Bearer realm="ai-engine-manager"', body: UNAUTHENTICATED };
      expect(answers).toEqual(headers.map(() => refused));
    },
  );

  test.each(RPCS)('gRPC %s', async (rpc) => {
    const codes = await Promise.all(
      headers.map(async (authorization) => {
        const metadata = new Metadata();
        if (authorization !== undefined) metadata.set('authorization', authorization);
        return (await overGrpc(api(), { rpc, message: {}, metadata })).code;
      }),
    );
    expect(codes).toEqual(headers.map(() => Code.UNAUTHENTICATED));
  });
});

describe('authentication', () => {
  test('accepts the provider tokens, and tolerates small clock differences', async () => {
    expect(await callAs(`Bearer ${await identity().token('alice')}`)).toEqual(ACCEPTED);
    expect(await callAs(`bearer ${await identity().token('alice')}`)).toEqual(ACCEPTED);
    expect(await callAs(`Bearer ${await signed({ exp: now() - 10, iat: now() - 600 })}`)).toEqual(ACCEPTED);
    expect(await callAs(`Bearer ${await signed({ nbf: now() + 10 })}`)).toEqual(ACCEPTED);
  });

  test('runs before routing: unknown paths are 401 without a token', async () => {
    expect((await api().rest('GET', '/v1/no/such/thing')).status).toBe(401);
    expect(
      (await api().rest('GET', '/v1/no/such/thing', undefined, await identity().headers('alice'))).status,
    ).toBe(404);
  });

  test('leaves GET /version and the health checks open, with or without a token', async () => {
    for (const path of ['/version', '/healthz', '/readyz']) {
      expect((await fetch(`${api().gateway.restUrl}${path}`)).status).toBe(200);
      const withBadToken = await fetch(`${api().gateway.restUrl}${path}`, {
        headers: { Authorization: 'Bearer bad' },
      });
      expect(withBadToken.status).toBe(200);
    }
  });

  test('takes the caller from the claims: users/<sub>, the name, roles from realm_access.roles', async () => {
    await defineCatalogue(api(), { workspace: 'tokens', headers: await identity().headers('admin') });
    const created = await ok(api(), {
      method: 'POST',
      path: '/v1/workspaces/tokens/daiEngines?daiEngineId=mine',
      body: engineBodies('tokens').dai,
      headers: await identity().headers('alice'),
    });
    expect(created['daiEngine']).toMatchObject({ creator: 'users/alice', creatorDisplayName: 'Alice Smith' });
    // Defining versions takes the admin role, which only the administrator's token carries.
    const define = async (who: string): Promise<number> =>
      (
        await api().rest(
          'POST',
          `/v1/workspaces/tokens/daiEngineVersions?daiEngineVersionId=9.9.${who.length}`,
          { image: 'dai:9' },
          await identity().headers(who),
        )
      ).status;
    expect(await define('alice')).toBe(403);
    expect(await define('admin')).toBe(200);
  });

  test('follows key rotation: tokens of a new key are accepted without a restart, and older ones still are', async () => {
    const before = await identity().provider.accessToken('alice');
    expect(await callAs(`Bearer ${before}`)).toEqual(ACCEPTED);
    const key = await identity().provider.rotateKeys();
    const after = await identity().provider.accessToken('alice');
    expect(JSON.parse(Buffer.from(after.split('.')[0] ?? '', 'base64url').toString())).toMatchObject({
      kid: key.kid,
    });
    expect(await callAs(`Bearer ${after}`)).toEqual(ACCEPTED);
    expect(await callAs(`Bearer ${before}`)).toEqual(ACCEPTED);
  });
});
