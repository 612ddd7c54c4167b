/**
 * Which lifecycle calls make sense in which state. The API records the wanted lifecycle in the
 * engine's spec (paused, terminated) and the operator moves the reported state after it; a call
 * that cannot apply is FAILED_PRECONDITION naming the state. Pure functions.
 */
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';

/** State names as the API spells them, e.g. `STATE_RUNNING`. */
export type StateName = string;

/** States in which an engine runs or is on its way there. */
const ACTIVE: readonly StateName[] = [
  'STATE_STARTING',
  'STATE_RUNNING',
  'STATE_CONNECTING',
  'STATE_UNSPECIFIED',
];

function refuse(action: string, state: StateName, why: string): ApiError {
  return new ApiError(Code.FAILED_PRECONDITION, `Cannot ${action} an engine in ${state}: ${why}`, {
    reason: 'INVALID_STATE',
  });
}

/** Pause: only a running (or starting) engine that is not already wanted paused. */
export function checkPause(state: StateName, paused: boolean): void {
  if (paused || !ACTIVE.includes(state)) throw refuse('pause', state, 'it is not running');
}

/** Resume: a paused or failed engine, or one still pausing. */
export function checkResume(state: StateName, paused: boolean): void {
  if (state === 'STATE_DELETING') throw refuse('resume', state, 'it is being deleted');
  if (!paused && state !== 'STATE_FAILED') throw refuse('resume', state, 'it is not paused or failed');
}

/** Terminate (H2O): anything not already terminating, terminated or being deleted. */
export function checkTerminate(state: StateName, terminated: boolean): void {
  if (terminated || ['STATE_TERMINATING', 'STATE_TERMINATED', 'STATE_DELETING'].includes(state)) {
    throw refuse('terminate', state, 'it is already terminating or terminated');
  }
}

/** Changes other than deletion are refused while an engine is deleted, and for terminated H2O engines. */
export function checkChangeable(action: string, state: StateName): void {
  if (state === 'STATE_DELETING') throw refuse(action, state, 'it is being deleted');
  if (state === 'STATE_TERMINATED' || state === 'STATE_TERMINATING')
    throw refuse(action, state, 'terminated engines are final');
}

/** Storage may only grow, one resize at a time. */
export function checkResize(current: bigint, wanted: bigint, resizing: boolean, state: StateName): void {
  checkChangeable('resize the storage of', state);
  if (resizing) throw refuse('resize the storage of', state, 'a resize is still in progress');
  if (wanted <= current) {
    throw new ApiError(
      Code.INVALID_ARGUMENT,
      `Invalid new_storage_bytes: must be more than the current ${current}`,
      {
        reason: 'INVALID_FIELD',
        violations: [{ field: 'new_storage_bytes', description: `must be more than the current ${current}` }],
      },
    );
  }
}
