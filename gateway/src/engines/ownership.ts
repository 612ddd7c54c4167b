/**
 * Who may reach an engine. Users reach the engines they created; administrators of the
 * workspace reach every engine there; a notebook engine marked `shared` can be seen and opened
 * by every user of its workspace, but changed only by its creator or an administrator.
 */
import type { Caller } from '../auth/authorizer.ts';

/** What a caller may do with one engine: everything, look at it and open it, or nothing. */
export type EngineAccess = 'all' | 'see' | 'none';

/** What a call does with an engine: look at it (GET, ACCESS) or act on it (everything else). */
export type EngineUse = 'see' | 'act';

/** The caller's access to `engine`, given whether it administers the engine's workspace. */
export function engineAccess(
  engine: { creator: string; shared?: unknown },
  caller: Caller,
  administrator: boolean,
): EngineAccess {
  if (administrator || engine.creator === caller.subject) return 'all';
  return engine.shared === true ? 'see' : 'none';
}

/** Whether `access` allows `use`. */
export function allowsUse(access: EngineAccess, use: EngineUse): boolean {
  return access === 'all' || (access === 'see' && use === 'see');
}
