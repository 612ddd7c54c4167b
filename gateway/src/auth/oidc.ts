/**
 * Authentication by OIDC access tokens (JWT bearer tokens). The issuer's signing keys come from
 * its discovery document's `jwks_uri`, cached and refetched when a token names a key the cache
 * does not hold (key rotation), at most once per cooldown. Every failure answers the same
 * UNAUTHENTICATED: why a token failed is logged, never told to the caller. A token that passed is
 * taken from memory for a short while (never past its `exp`): clients send the same token with
 * every request, and its signature check was the dearest step of a request through the engine
 * access proxy.
 */
import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { Authenticate, CallHeaders } from '../call/handler.ts';
import { ApiError, unauthenticated } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { log } from '../log.ts';
import type { Caller } from './authorizer.ts';
import { callerFromClaims, DEFAULT_CLAIM_NAMES, type ClaimNames } from './claims.ts';

/** Asymmetric signature algorithms: the only ones an issuer's published keys can verify. */
export const DEFAULT_ALGORITHMS: readonly string[] = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/** How tokens are verified. */
export interface OidcOptions {
  /** The issuer URL, exactly as the tokens' `iss` and the discovery document's `issuer` say. */
  issuer: string;
  /** Accepted audiences: a token must name at least one in `aud`. */
  audiences: readonly string[];
  claims?: ClaimNames;
  /** Accepted signature algorithms; never `none` or the symmetric HS*. */
  algorithms?: readonly string[];
  /** Tolerated clock difference for `exp` and `nbf`, in seconds (default 30). */
  clockSkewSeconds?: number;
  /** Shortest time between two key set fetches prompted by unknown key ids (default 30 s). */
  jwksCooldownMs?: number;
}

/** How long a verified token is accepted again without a signature check, at most. */
export const VERIFIED_TOKEN_TTL_MS = 30_000;
/** How many verified tokens are kept; the oldest goes first. */
const VERIFIED_TOKENS_KEPT = 10_000;

/**
 * Tokens that passed verification, with their caller, each until its `exp` or the TTL, whichever
 * comes first. Only successes are kept. Warning: a key the issuer withdraws still vouches for the
 * tokens kept here until they leave (at most the TTL).
 */
export class VerifiedTokens {
  private readonly kept = new Map<string, { caller: Caller; until: number }>();
  private readonly ttlMs: number;
  private readonly max: number;

  constructor(options: { ttlMs?: number; max?: number } = {}) {
    this.ttlMs = options.ttlMs ?? VERIFIED_TOKEN_TTL_MS;
    this.max = options.max ?? VERIFIED_TOKENS_KEPT;
  }

  /** The caller of a token verified before, if it is still to be taken from memory at `now`. */
  get(token: string, now: number): Caller | undefined {
    const entry = this.kept.get(token);
    if (entry === undefined) return undefined;
    if (entry.until > now) return entry.caller;
    this.kept.delete(token);
    return undefined;
  }

  /** Keeps a verified token whose `exp` is `expSeconds`, unless it is due to leave at once. */
  keep(token: string, caller: Caller, { expSeconds, now }: { expSeconds: number; now: number }): void {
    const until = Math.min(expSeconds * 1000, now + this.ttlMs);
    if (!(until > now)) return;
    if (this.kept.size >= this.max) {
      const oldest = this.kept.keys().next();
      if (oldest.done !== true) this.kept.delete(oldest.value);
    }
    this.kept.set(token, { caller, until });
  }
}

/** The algorithms that must never be accepted, whatever the configuration says. */
export function forbiddenAlgorithm(alg: string): boolean {
  return alg.toLowerCase() === 'none' || /^HS/i.test(alg);
}

/** The token of an `Authorization: Bearer <token>` header, or `undefined`. */
export function bearerToken(headers: CallHeaders): string | undefined {
  const match = /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(headers['authorization'] ?? '');
  return match?.[1];
}

/** Failures of the issuer or of this server, not of the token: the caller should retry later. */
function isServerSide(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  if (typeof code !== 'string' || !code.startsWith('ERR_')) return true;
  return ['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID', 'ERR_JOSE_GENERIC'].includes(code);
}

interface Discovery {
  issuer?: unknown;
  jwks_uri?: unknown;
}

async function discoverKeys(issuer: string, cooldownMs: number): Promise<JWTVerifyGetKey> {
  const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`Discovery at ${url} answered HTTP ${response.status}`);
  const document = (await response.json()) as Discovery;
  if (document.issuer !== issuer)
    throw new Error(`Discovery at ${url} names the issuer ${JSON.stringify(document.issuer)}`);
  if (typeof document.jwks_uri !== 'string') throw new Error(`Discovery at ${url} has no jwks_uri`);
  return createRemoteJWKSet(new URL(document.jwks_uri), { cooldownDuration: cooldownMs });
}

/**
 * An {@link Authenticate} that accepts OIDC access tokens of one issuer. Discovery runs on the
 * first call that carries a token, and again after a failure.
 *
 * @throws Error when the options allow a forbidden algorithm or name no audience
 */
export function oidcAuthenticate(options: OidcOptions): Authenticate {
  const algorithms = [...(options.algorithms ?? DEFAULT_ALGORITHMS)];
  const refused = algorithms.filter(forbiddenAlgorithm);
  if (refused.length > 0) throw new Error(`Token algorithms ${refused.join(', ')} are not allowed`);
  if (options.audiences.length === 0) throw new Error('At least one token audience is required');
  const names = options.claims ?? DEFAULT_CLAIM_NAMES;
  const verifiedTokens = new VerifiedTokens();
  let discovered: Promise<JWTVerifyGetKey> | undefined;
  const keySet = (): Promise<JWTVerifyGetKey> => {
    discovered ??= discoverKeys(options.issuer, options.jwksCooldownMs ?? 30_000).catch((error: unknown) => {
      discovered = undefined;
      throw error;
    });
    return discovered;
  };

  return async (headers): Promise<Caller> => {
    const token = bearerToken(headers);
    if (token === undefined) throw unauthenticated();
    const known = verifiedTokens.get(token, Date.now());
    if (known !== undefined) return known;
    const keys = await keySet().catch((error: unknown) => {
      throw unavailable(error);
    });
    const verified = await jwtVerify(token, keys, {
      issuer: options.issuer,
      audience: [...options.audiences],
      algorithms,
      clockTolerance: options.clockSkewSeconds ?? 30,
      requiredClaims: ['exp'],
    }).catch((error: unknown) => {
      if (isServerSide(error)) throw unavailable(error);
      throw rejected(error instanceof Error ? error.message : String(error));
    });
    const caller = callerFromClaims(verified.payload, names);
    if (caller === undefined) throw rejected(`the token has no "${names.subject}" claim`);
    verifiedTokens.keep(token, caller, { expSeconds: verified.payload.exp ?? 0, now: Date.now() });
    return caller;
  };
}

function unavailable(cause: unknown): ApiError {
  return new ApiError(Code.UNAVAILABLE, 'Cannot verify credentials now; try again later', {
    reason: 'IDENTITY_PROVIDER_UNAVAILABLE',
    cause,
  });
}

/** The one answer to every bad token; the reason goes to the debug log only. */
function rejected(reason: string): ApiError {
  log.debug({ reason }, 'Rejected token');
  return unauthenticated();
}
