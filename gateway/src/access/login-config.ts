/**
 * The browser sign-in as configured by environment variables (the README's Configuration table
 * lists them): on when `AIEM_BROWSER_CLIENT_ID` names the identity provider's client for it.
 */
import { randomBytes } from 'node:crypto';
import { log } from '../log.ts';
import type { AccessOptions } from './access-proxy.ts';
import { Sessions } from './session.ts';

type Environment = Readonly<Record<string, string | undefined>>;

/** Eight hours: a working day signed in. */
const DEFAULT_SESSION_SECONDS = 8 * 60 * 60;

/**
 * The sign-in settings of the environment, or `undefined` when browser sign-in is off.
 *
 * @throws Error naming the variable that is wrong
 */
export function loginFromEnvironment(env: Environment, publicUrl: string): AccessOptions['login'] {
  const clientId = text(env, 'AIEM_BROWSER_CLIENT_ID');
  if (clientId === '') return undefined;
  const issuer = text(env, 'AIEM_OIDC_ISSUER_URL');
  if (issuer === '') throw new Error('AIEM_OIDC_ISSUER_URL must be set for browser sign-in');
  const secret = text(env, 'AIEM_BROWSER_CLIENT_SECRET');
  return {
    issuer,
    clientId,
    ...(secret === '' ? {} : { clientSecret: secret }),
    scopes: text(env, 'AIEM_BROWSER_SCOPES') || 'openid profile',
    sessions: new Sessions({ key: sessionKey(env), publicUrl, ttlSeconds: sessionSeconds(env) }),
  };
}

/** A variable's value without surrounding blanks; '' when unset. */
function text(env: Environment, name: string): string {
  return env[name]?.trim() ?? '';
}

function sessionSeconds(env: Environment): number {
  const value = text(env, 'AIEM_SESSION_TTL_SECONDS');
  const seconds = value === '' ? DEFAULT_SESSION_SECONDS : Number(value);
  if (!Number.isInteger(seconds) || seconds <= 0)
    throw new Error('AIEM_SESSION_TTL_SECONDS must be a whole number of seconds');
  return seconds;
}

/** The session key: base64 of 32 bytes or more, the same on every replica. */
function sessionKey(env: Environment): Uint8Array {
  const key64 = text(env, 'AIEM_SESSION_KEY');
  if (key64 === '') {
    // Sessions then last as long as this process, and other replicas do not know them.
    log.warn('AIEM_SESSION_KEY is not set: browser sessions end when this gateway stops');
    return randomBytes(32);
  }
  const key = Buffer.from(key64, 'base64');
  if (key.byteLength < 32) throw new Error('AIEM_SESSION_KEY must be base64 of 32 bytes or more');
  return key;
}
