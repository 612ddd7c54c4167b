import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A component of the local control plane: one child process whose output goes to a log file. */
export interface ManagedProcess {
  readonly name: string;
  readonly logPath: string;
  readonly pid: number | undefined;
  /** Resolves when the process has exited, whether it was asked to or not. */
  readonly exited: Promise<number | null>;
  /** Whether the process is still running. */
  running(): boolean;
  /** Sends SIGTERM, and SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /** Sends SIGKILL now, without waiting. */
  kill(): void;
  /** The last `lines` lines of the process's log. */
  tail(lines?: number): string;
}

const live = new Set<ChildProcess>();

// Warning: a test worker that exits without calling stop() (an uncaught error, process.exit)
// would leave etcd and the apiserver running; this synchronous hook kills whatever is left.
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Starts `command` with `args`, appending stdout and stderr to `<logDir>/<name>.log`. */
export function startProcess(options: {
  name: string;
  command: string;
  args: readonly string[];
  logDir: string;
  env?: NodeJS.ProcessEnv;
}): ManagedProcess {
  const logPath = join(options.logDir, `${options.name}.log`);
  const log = createWriteStream(logPath, { flags: 'a' });
  // Each component leads a process group of its own: a terminal's Ctrl+C goes to the foreground
  // group, which then holds only the supervisor, so components stop when and in the order it
  // decides (etcd must outlive kube-apiserver) instead of all at once.
  const child = spawn(options.command, options.args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: options.env ?? process.env,
    detached: true,
  });
  live.add(child);
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const exited = new Promise<number | null>((resolve) => {
    child.on('error', (error) => {
      log.write(`\n[harness] failed to start ${options.command}: ${error.message}\n`);
    });
    child.on('close', (code, signal) => {
      live.delete(child);
      log.end(`\n[harness] ${options.name} exited (code ${code ?? '-'}, signal ${signal ?? '-'})\n`);
      resolve(code);
    });
  });

  return {
    name: options.name,
    logPath,
    pid: child.pid,
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
    async stop(graceMs = 10_000): Promise<void> {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    tail: (lines = 40) => tailFile(logPath, lines),
  };
}

/** The last `lines` lines of a text file, or a note when it cannot be read. */
export function tailFile(path: string, lines: number): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch (error: unknown) {
    return `(no log: ${String(error)})`;
  }
}

/**
 * Like {@link startProcess}, but started again (at most `maxRestarts` times) when it exits
 * without being asked to. For kwok: it holds no state of its own (everything is in the API), and
 * it can crash at start-up on a data race of its own (concurrent initialisation of its stages'
 * CEL environments, "fatal error: concurrent map writes"); a kubelet would restart it too.
 */
export function startSupervised(
  options: Parameters<typeof startProcess>[0],
  maxRestarts = 5,
): ManagedProcess {
  let current = startProcess(options);
  let stopping = false;
  let restarts = 0;
  const { promise: exited, resolve } = Promise.withResolvers<number | null>();
  const watch = (process: ManagedProcess): void => {
    void process.exited.then((code) => {
      if (stopping || restarts >= maxRestarts) {
        resolve(code);
        return;
      }
      restarts++;
      appendNote(
        process.logPath,
        `[harness] ${options.name} exited unexpectedly; restart ${restarts} of ${maxRestarts}`,
      );
      current = startProcess(options);
      watch(current);
    });
  };
  watch(current);
  return {
    name: options.name,
    logPath: current.logPath,
    get pid() {
      return current.pid;
    },
    exited,
    running: () => !stopping && (current.running() || restarts < maxRestarts),
    async stop(graceMs?: number): Promise<void> {
      stopping = true;
      await current.stop(graceMs);
      await exited;
    },
    kill: () => {
      stopping = true;
      current.kill();
    },
    tail: (lines?: number) => current.tail(lines),
  };
}

function appendNote(path: string, note: string): void {
  appendFileSync(path, `${note}\n`);
}

/** Whether a process of this id exists (signal 0 checks without signalling). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
