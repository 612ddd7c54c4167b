/** Who is calling: the subject and display name from the identity token, and its roles. */
export interface Caller {
  /** e.g. `users/397b8c16-f4cb-4b2c-8d0f-0d8b9b2d7e33`. */
  subject: string;
  displayName: string;
  roles: readonly string[];
}

/**
 * Decides whether a caller may perform `permission` (`actions/enginemanager/{resource}/{ACTION}`)
 * on a workspace. Services check exactly one permission per call, before looking anything up.
 */
export interface Authorizer {
  /** @throws ApiError PERMISSION_DENIED when the caller may not */
  check(caller: Caller, permission: string, workspace: string): Promise<void>;
}

/** The identity of every call while authentication is not configured (local development). */
export const DEVELOPMENT_CALLER: Caller = {
  subject: 'users/developer',
  displayName: 'Developer',
  roles: ['admin'],
};

/** Allows everything: for local development only, until the policy-based authorizer exists. */
export const allowAll: Authorizer = {
  check: () => Promise.resolve(),
};
