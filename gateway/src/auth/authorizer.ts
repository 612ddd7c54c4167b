/** Who is calling: the subject and display name from the identity token, and its roles. */
export interface Caller {
  /** `users/<subject claim>`, e.g. `users/397b8c16-f4cb-4b2c-8d0f-0d8b9b2d7e33`. */
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
  /**
   * Whether the caller administers the workspace: acts on every user's engines there, not only
   * its own (the permission {@link ADMINISTER}).
   */
  isAdministrator(caller: Caller, workspace: string): Promise<boolean>;
}

/** The prefix of every permission name. */
export const PERMISSION_PREFIX = 'actions/enginemanager/';

/**
 * Held on a workspace, it makes the caller an administrator there: it sees and acts on every
 * user's engines, not only its own, and may hand engines to other users (MIGRATE_CREATOR).
 */
export const ADMINISTER = `${PERMISSION_PREFIX}engines/ADMINISTER`;

/** Listing engines of every workspace (parent `workspaces/-`), checked on the workspace `-`. */
export const LIST_ALL = `${PERMISSION_PREFIX}engines/LIST_ALL`;

/** The workspace that stands for all workspaces in `workspaces/-`. */
export const ALL_WORKSPACES = '-';
