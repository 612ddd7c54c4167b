/**
 * How the foreground supervisors (`make run`, `make cluster-up`'s server) stop. The first SIGINT
 * or SIGTERM runs the stop steps, newest first (the product before the cluster it runs on), and
 * exits; if they take longer than the deadline, or a second signal comes, every step's kill runs
 * at once (SIGKILL of the children, files removed) and the process exits.
 */

/** One thing to stop: an orderly stop, and what to do when there is no time for it. */
export interface StopStep {
  name: string;
  stop: () => Promise<void>;
  /** Synchronous: runs from a signal handler or a timer, right before the process exits. */
  kill?: () => void;
}

/** Options of {@link superviseShutdown}. */
export interface ShutdownOptions {
  /** How long the orderly stop may take before everything is killed (default 12 s). */
  deadlineMs?: number;
  log?: (message: string) => void;
}

/** The steps to stop on a signal; add each as soon as it has started. */
export interface Shutdown {
  add(step: StopStep): void;
  /** Resolves when the first signal has come (the stop then runs by itself). */
  readonly requested: Promise<NodeJS.Signals>;
}

/** Installs the SIGINT and SIGTERM handlers and returns the step list they stop. */
export function superviseShutdown(options: ShutdownOptions = {}): Shutdown {
  const log =
    options.log ??
    ((message: string) => {
      console.error(message);
    });
  const deadlineMs = options.deadlineMs ?? 12_000;
  const steps: StopStep[] = [];
  let stopping = false;
  let signalled: (signal: NodeJS.Signals) => void = () => undefined;
  const requested = new Promise<NodeJS.Signals>((resolve) => {
    signalled = resolve;
  });

  const killAll = (): void => {
    for (const step of [...steps].reverse()) {
      try {
        step.kill?.();
      } catch {
        // Killing is best effort: the next step must still run.
      }
    }
  };
  const exitNow = (code: number): void => {
    killAll();
    process.exit(code);
  };
  const stopInOrder = async (): Promise<void> => {
    for (const step of [...steps].reverse()) {
      try {
        await step.stop();
      } catch (error: unknown) {
        log(`Stopping ${step.name} failed: ${String(error)}`);
      }
    }
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      log('Stopping now');
      exitNow(130);
      return;
    }
    stopping = true;
    signalled(signal);
    log(`Stopping (${signal} again to stop at once)`);
    const late = setTimeout(() => {
      log(`Not stopped after ${deadlineMs} ms; killing what is left`);
      exitNow(1);
    }, deadlineMs);
    stopInOrder().then(
      () => {
        clearTimeout(late);
        process.exit(0);
      },
      () => {
        exitNow(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    add: (step) => {
      steps.push(step);
    },
    requested,
  };
}
