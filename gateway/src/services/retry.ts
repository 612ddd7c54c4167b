/**
 * Engine calls re-run when the engine changed between their read and their write. The operator
 * writes an engine's status often (state, durations), and every write moves its resourceVersion,
 * so a user's pause or update would otherwise fail now and then with ABORTED for no fault of
 * theirs. Each attempt reads afresh, checks the state again and applies only the call's own
 * change, so nothing anyone else wrote is lost; after a few attempts the conflict is reported.
 * Attempts are spaced out (50, 100, 200, 400 ms): the next attempt reads the gateway's watched
 * copy, which must first have caught up with the write that conflicted — a matter of
 * milliseconds when the cluster is quiet, but attempts back to back on a loaded machine all read
 * the same stale copy and all conflict.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Handler, Handlers } from '../call/handler.ts';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';

const ATTEMPTS = 5;
const FIRST_PAUSE_MS = 50;

function isConflict(error: unknown): boolean {
  return error instanceof ApiError && error.code === Code.ABORTED;
}

export function retryingOnConflict(handler: Handler): Handler {
  return async (request, context) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await handler(request, context);
      } catch (error: unknown) {
        if (!isConflict(error) || attempt >= ATTEMPTS) throw error;
      }
      await sleep(FIRST_PAUSE_MS * 2 ** (attempt - 1));
    }
  };
}

/** Every handler of `handlers`, retrying on conflict. */
export function retryingAllOnConflict(handlers: Handlers): Handlers {
  return Object.fromEntries(
    Object.entries(handlers).map(([rpc, handler]) => [rpc, retryingOnConflict(handler)]),
  );
}
