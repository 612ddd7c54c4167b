/**
 * A stand-in identity for tests of service behaviour that is not about identity: every call is
 * the same administrator, and every permission is granted. Tests of authentication and
 * authorization use the embedded identity provider (test/identity/) and a policy instead.
 */
import type { Authorizer, Caller } from '../../gateway/src/auth/authorizer.ts';
import type { Authenticate } from '../../gateway/src/call/handler.ts';

/** The caller of every call under {@link developmentIdentity}. */
export const DEVELOPMENT_CALLER: Caller = {
  subject: 'users/developer',
  displayName: 'Developer',
  roles: ['admin'],
};

/** Every call acts as {@link DEVELOPMENT_CALLER}. */
export const developmentIdentity: Authenticate = () => Promise.resolve(DEVELOPMENT_CALLER);

/** Allows everything, and makes every caller an administrator of every workspace. */
export const allowAll: Authorizer = {
  check: () => Promise.resolve(),
  isAdministrator: () => Promise.resolve(true),
};
