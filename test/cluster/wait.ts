/** Options for {@link waitFor}. */
export interface WaitOptions {
  /** What is awaited, for the timeout message, e.g. "kube-apiserver /readyz". */
  what: string;
  timeoutMs?: number;
  intervalMs?: number;
  /** Called when the wait gives up, to add context (such as a log tail) to the error. */
  explain?: () => string;
}

/** Thrown by a probe to stop waiting at once: the condition can no longer come true. */
export class GiveUp extends Error {
  override name = 'GiveUp';
}

/**
 * Polls `probe` until it returns a value other than `undefined`, and returns that value.
 *
 * Used where no event announces the condition (a process starting to serve, a controller
 * catching up). Errors thrown by the probe count as "not yet" and the last one is reported,
 * except {@link GiveUp}, which ends the wait.
 */
export async function waitFor<T>(probe: () => Promise<T | undefined>, options: WaitOptions): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const interval = options.intervalMs ?? 100;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error: unknown) {
      if (error instanceof GiveUp) throw withContext(error.message, options);
      last = error;
    }
    if (Date.now() > deadline) {
      const reason = last === undefined ? '' : `; last error: ${describe(last)}`;
      throw withContext(`Timed out waiting for ${options.what}${reason}`, options);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

function withContext(message: string, options: WaitOptions): Error {
  return new Error(options.explain ? `${message}\n${options.explain()}` : message);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : JSON.stringify(error);
}
