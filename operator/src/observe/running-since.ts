/**
 * When the engine's current run became RUNNING: the moment its running and idle time count from.
 * A run begins at the engine's creation or its latest resume; the time its pods spend starting
 * (an image pull, a wait for a node, a queue) is not the user's and does not count, or an engine
 * that is slow to start would be stopped before anyone could use it. The operator records the
 * moment in the engine's status (`runningSince`), the first time it sees the run RUNNING, so it
 * survives restarts of the operator and is the same for every reader. Pure.
 */
import { currentRunningSince, runStartOf } from '../../../shared/durations.ts';

export interface RunningSinceInput {
  /** The state observed now. */
  state: string;
  /** The state the engine's status holds, as last reported. */
  reportedState: unknown;
  /** `status.runningSince` as recorded. */
  recorded: unknown;
  created: unknown;
  resumed: unknown;
  now: Date;
}

/**
 * The running-since time to record for the engine: the recorded one while it belongs to the
 * current run; `now` when the run is seen RUNNING for the first time; none before that.
 *
 * A run that stops being RUNNING (a pod restarted) keeps its time: the running limit measures
 * the run, and a crash loop must not reset it.
 */
export function runningSince(input: RunningSinceInput): Date | undefined {
  const { created, resumed } = input;
  const recorded = currentRunningSince({ created, resumed, runningSince: input.recorded });
  if (recorded !== undefined) return recorded;
  if (input.state !== 'STATE_RUNNING') return undefined;
  const runStart = runStartOf({ created, resumed });
  // An engine reported RUNNING before running-since was recorded at all (an earlier release):
  // its clock goes on from the run's start as before, rather than starting over at the upgrade.
  if ((input.recorded ?? undefined) === undefined && input.reportedState === 'STATE_RUNNING') return runStart;
  // Never before the run's start, even when this clock is behind the API's that wrote the
  // resume time: the record would not belong to the run and would be written again and again.
  return runStart !== undefined && runStart > input.now ? runStart : input.now;
}
