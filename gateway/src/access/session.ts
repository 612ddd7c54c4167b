/**
 * Browser sessions of the engine access proxy: who signed in, kept in an HttpOnly cookie as a
 * short token signed with the installation's session key (HS256). The token holds the caller as
 * the identity provider's access token described it at sign-in, and expires; every replica that
 * holds the key reads it, so no session is stored anywhere. A session authenticates engine
 * addresses only (the API takes bearer tokens alone), and its cookie never reaches an engine.
 */
import { parseCookie, stringifySetCookie, type SetCookie } from 'cookie';
import { jwtVerify, SignJWT } from 'jose';
import type { Caller } from '../auth/authorizer.ts';
import { unauthenticated } from '../errors/api-error.ts';
import { log } from '../log.ts';

/** The session cookie's name. */
export const SESSION_COOKIE = 'aiem_session';
/** The cookie that carries a sign-in in progress from `/auth/login` to `/auth/callback`. */
export const LOGIN_COOKIE = 'aiem_login';

/** The audience of session tokens, so that no other token signed with the key passes for one. */
const SESSION_AUDIENCE = 'ai-engine-manager/session';
const LOGIN_AUDIENCE = 'ai-engine-manager/login';
const ALGORITHM = 'HS256';

/** How sessions are signed and scoped. */
export interface SessionOptions {
  /** The signing key: 32 bytes or more, the same on every replica. */
  key: Uint8Array;
  /** The platform's public address: the tokens' issuer, and whether cookies are `Secure`. */
  publicUrl: string;
  /** How long a sign-in lasts. */
  ttlSeconds: number;
}

/** A sign-in in progress: what the callback checks the identity provider's answer against. */
export interface PendingLogin {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** Where the browser goes once signed in: a path on this platform. */
  next: string;
}

/** The value of the cookie `name` in a `Cookie` header. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  if (header === undefined || header === '') return undefined;
  return parseCookie(header)[name];
}

/**
 * The `Cookie` header without the product's own cookies, or `undefined` when none is left: the
 * engine gets its own cookies (Jupyter's `_xsrf`) and never the caller's session.
 */
export function engineCookies(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  // Taken apart by `;` and passed on byte for byte: the engine's cookies are not ours to re-encode.
  const kept = header
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => {
      const name = (pair.includes('=') ? pair.slice(0, pair.indexOf('=')) : pair).trim();
      return pair !== '' && name !== SESSION_COOKIE && name !== LOGIN_COOKIE;
    });
  return kept.length === 0 ? undefined : kept.join('; ');
}

/** Signs and reads session and sign-in cookies. */
export class Sessions {
  readonly ttlSeconds: number;
  private readonly key: Uint8Array;
  private readonly issuer: string;
  private readonly secure: boolean;

  /** @throws Error when the key is shorter than 32 bytes */
  constructor(options: SessionOptions) {
    if (options.key.byteLength < 32) throw new Error('The session key must have 32 bytes or more');
    this.key = options.key;
    this.issuer = new URL(options.publicUrl).origin;
    this.secure = options.publicUrl.startsWith('https:');
    this.ttlSeconds = options.ttlSeconds;
  }

  /** The `Set-Cookie` value of a new session of `caller`. */
  async signIn(caller: Caller): Promise<string> {
    const token = await new SignJWT({ name: caller.displayName, roles: [...caller.roles] })
      .setProtectedHeader({ alg: ALGORITHM })
      .setSubject(caller.subject)
      .setIssuer(this.issuer)
      .setAudience(SESSION_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.key);
    return this.setCookie({ name: SESSION_COOKIE, value: token, path: '/', maxAge: this.ttlSeconds });
  }

  /** The `Set-Cookie` value that ends the session. */
  signOut(): string {
    return this.setCookie({ name: SESSION_COOKIE, value: '', path: '/', maxAge: 0 });
  }

  /**
   * The caller of a session cookie's value.
   *
   * @throws ApiError UNAUTHENTICATED when it is not a session of this installation, or has expired
   */
  async caller(token: string): Promise<Caller> {
    const verified = await jwtVerify(token, this.key, {
      issuer: this.issuer,
      audience: SESSION_AUDIENCE,
      algorithms: [ALGORITHM],
      requiredClaims: ['exp', 'sub'],
    }).catch((error: unknown) => {
      log.debug({ reason: error instanceof Error ? error.message : String(error) }, 'Rejected session');
      throw unauthenticated();
    });
    const { sub, name, roles } = verified.payload;
    if (typeof sub !== 'string' || typeof name !== 'string' || !isStrings(roles)) throw unauthenticated();
    return { subject: sub, displayName: name, roles };
  }

  /** The `Set-Cookie` value of a sign-in in progress, readable by the callback alone for 10 minutes. */
  async startLogin(login: PendingLogin): Promise<string> {
    const token = await new SignJWT({ ...login })
      .setProtectedHeader({ alg: ALGORITHM })
      .setIssuer(this.issuer)
      .setAudience(LOGIN_AUDIENCE)
      .setExpirationTime('10m')
      .sign(this.key);
    return this.setCookie({ name: LOGIN_COOKIE, value: token, path: CALLBACK_PATH, maxAge: 600 });
  }

  /** The sign-in in progress of a login cookie's value, or `undefined` when it is not one of ours. */
  async pendingLogin(token: string | undefined): Promise<PendingLogin | undefined> {
    if (token === undefined) return undefined;
    const verified = await jwtVerify(token, this.key, {
      issuer: this.issuer,
      audience: LOGIN_AUDIENCE,
      algorithms: [ALGORITHM],
    }).catch(() => undefined);
    const payload = verified?.payload;
    if (payload === undefined) return undefined;
    const { state, nonce, codeVerifier, next } = payload;
    if (
      typeof state !== 'string' ||
      typeof nonce !== 'string' ||
      typeof codeVerifier !== 'string' ||
      typeof next !== 'string'
    )
      return undefined;
    return { state, nonce, codeVerifier, next };
  }

  /** The `Set-Cookie` value that drops the sign-in in progress. */
  endLogin(): string {
    return this.setCookie({ name: LOGIN_COOKIE, value: '', path: CALLBACK_PATH, maxAge: 0 });
  }

  private setCookie(cookie: SetCookie): string {
    return stringifySetCookie({ ...cookie, httpOnly: true, secure: this.secure, sameSite: 'lax' });
  }
}

/** Where the identity provider sends the browser back to. */
export const CALLBACK_PATH = '/auth/callback';

const isStrings = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((v) => typeof v === 'string');
