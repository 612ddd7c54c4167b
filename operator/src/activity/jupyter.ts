/**
 * Notebook engines' activity, as Jupyter Server reports it: `GET {base_url}/api/status` (the
 * server's `last_activity`: the latest API request, kernel message, kernel shutdown or terminal
 * use) and `GET {base_url}/api/kernels` (each kernel's `execution_state` and `last_activity`).
 * A kernel busy now is activity now — its `last_activity` stays at the start of a long cell until
 * the cell ends — and otherwise the latest of those times is when the notebook was last used.
 *
 * Warning: every API request Jupyter serves counts as its activity, its own listing of kernels
 * included, unless the request says `no_track_activity`; without it the probe would keep the
 * notebook alive by asking. The status call does not count (Jupyter exempts it).
 *
 * The image starts Jupyter without a token or password (the access proxy authenticates users,
 * image/engines/notebook/entrypoint.sh), so these GETs need no credentials; GETs need no XSRF
 * token either.
 */
import { field, isoTime, latest, list, text, type ActivityProbe } from './activity-probe.ts';

/**
 * When the notebook was last active, from Jupyter's status and kernel list: `now` while a kernel
 * is busy, else the latest `last_activity` of the server and its kernels. Pure; throws
 * `MalformedAnswer` when an answer is not Jupyter's.
 */
export function jupyterActivity(status: unknown, kernels: unknown, now: Date): Date {
  const server = isoTime(field(status, 'last_activity', 'the status'), 'the status last_activity');
  const times = [server];
  for (const [i, kernel] of list(kernels, 'the kernel list').entries()) {
    const what = `kernel ${i}`;
    if (text(field(kernel, 'execution_state', what), `${what} execution_state`) === 'busy') return now;
    times.push(isoTime(field(kernel, 'last_activity', what), `${what} last_activity`));
  }
  return latest(times) ?? server;
}

/** The notebook kind's probe: Jupyter's status and its kernels, the listing not counted as use. */
export const jupyterActivityProbe: ActivityProbe = {
  paths: ['/api/status', '/api/kernels?no_track_activity=1'],
  latestActivity: ([status, kernels], now) => jupyterActivity(status, kernels, now),
};
