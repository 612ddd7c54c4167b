/**
 * H2O engines' activity, as H2O-3 reports its jobs: `GET {context_path}/3/Jobs` on the cloud's
 * leader (the only node that serves clients) lists every job of the cloud with its `status`
 * (RUNNING, CANCEL_PENDING while a cancelled job stops, then DONE, CANCELLED or FAILED), its
 * `start_time` (epoch milliseconds) and `msec` (how long it ran, or has run so far). A job not
 * yet ended is activity now; otherwise the latest end of a job (start plus run time) is when the
 * engine last worked, so a model that finished training a moment before the deadline leaves its
 * user a full idle limit to look at it.
 */
import { field, latest, list, MalformedAnswer, text, type ActivityProbe } from './activity-probe.ts';

/** Job states of work still going on. */
const UNFINISHED = new Set(['RUNNING', 'CANCEL_PENDING']);

function millis(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new MalformedAnswer(`${what} is not a number of milliseconds`);
  return value;
}

/**
 * When the H2O cloud last worked, from its job list: `now` while a job runs, else the latest end
 * of a job; undefined when it has run none. Pure; throws `MalformedAnswer` when the answer is not
 * H2O's.
 */
export function h2oActivity(answer: unknown, now: Date): Date | undefined {
  const ends: Date[] = [];
  for (const [i, job] of list(field(answer, 'jobs', 'the job list'), 'the jobs').entries()) {
    const what = `job ${i}`;
    if (UNFINISHED.has(text(field(job, 'status', what), `${what} status`))) return now;
    const start = millis(field(job, 'start_time', what), `${what} start_time`);
    // A job created but never started has no start time (0): it did no work.
    if (start > 0) ends.push(new Date(start + millis(field(job, 'msec', what), `${what} msec`)));
  }
  return latest(ends);
}

/** The H2O kind's probe: the cloud's job list, asked of its leader. */
export const h2oActivityProbe: ActivityProbe = {
  paths: ['/3/Jobs'],
  latestActivity: ([jobs], now) => h2oActivity(jobs, now),
};
