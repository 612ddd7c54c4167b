/**
 * Runs processes in sandboxes, one pods/exec call each, held by the replica of the API that
 * started it for as long as the process runs. That replica keeps the output in memory (the
 * live log every view reads) and records the outcome in the process's resource; other replicas
 * read the resource. A process runs under a small POSIX shell prelude that records its pid (for
 * signals) and then becomes the command itself (`exec`), so the exit code and the signals are
 * the command's own.
 */
import { OutputStream, Process_State, type Process } from '../gen/ai/h2o/engine/v1/process.pb.ts';
import { log } from '../log.ts';
import { latest, MAX_STORED_OUTPUT_BYTES, OutputLog } from './output-log.ts';
import { PodExecError, sandboxScript, type PodExec } from './pod-exec.ts';
import type { ProcessStore } from './process-store.ts';
import type { SandboxTarget } from './target.ts';
import { idOf } from '../../../shared/resource-name.ts';

/** Where processes' pids are kept in the sandbox (below the writable /tmp). */
export const PID_DIR = '/tmp/.aiem-processes';

/**
 * `$1` id, `$2` working directory, `$3` the number of `NAME=value` pairs that follow, then the
 * command and its arguments. Nothing passed is parsed by the shell.
 */
export const START_SCRIPT = `id=$1; wd=$2; n=$3; shift 3
while [ "$n" -gt 0 ]; do export "$1" || exit 125; shift; n=$((n - 1)); done
mkdir -p "$R${PID_DIR}" && echo $$ > "$R${PID_DIR}/$id.pid" || exit 125
cd "$R$wd" || exit 1
exec "$@"`;

/** `$1` id, `$2` signal number. Exits 3 when the process left no pid (it never started). */
export const SIGNAL_SCRIPT = `p=$(cat "$R${PID_DIR}/$1.pid" 2>/dev/null) || exit 3
kill -"$2" "$p"`;

/** The argv that starts `process` in a sandbox. */
export function startArgv(id: string, process: Process): string[] {
  const env = Object.entries(process.environmentVariables).map(([k, v]) => `${k}=${v}`);
  return sandboxScript(START_SCRIPT, [
    id,
    process.workingDirectory || '/',
    String(env.length),
    ...env,
    process.command,
    ...process.args,
  ]);
}

/** How many finished processes' output stays in memory for fast reads (the rest from the resource). */
const KEPT_ENDED = 200;

interface Run {
  log: OutputLog;
  ended: Promise<void>;
}

export class ProcessRunner {
  private readonly runs = new Map<string, Run>();
  /** Callers waiting for a process of theirs to start here (a stream opened while it was pending). */
  private readonly waiting = new Map<string, Set<() => void>>();
  private readonly exec: PodExec;
  private readonly store: ProcessStore;
  private readonly onChange: (processName: string) => Promise<void>;

  /** `onChange` is told when a process starts and ends (the engine's busy count follows it). */
  constructor(deps: {
    exec: PodExec;
    store: ProcessStore;
    onChange: (processName: string) => Promise<void>;
  }) {
    this.exec = deps.exec;
    this.store = deps.store;
    this.onChange = deps.onChange;
  }

  /** Whether this replica runs the process now. */
  follows(name: string): boolean {
    const run = this.runs.get(name);
    return run !== undefined && !run.log.done;
  }

  /** The live log of a process this replica runs or ran lately. */
  logOf(name: string): OutputLog | undefined {
    return this.runs.get(name)?.log;
  }

  /**
   * Resolves when this replica starts the process, or after `ms` (another replica may start it),
   * or when `signal` aborts: whichever comes first.
   */
  startedOrAfter(name: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const waiters = this.waiting.get(name) ?? new Set<() => void>();
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(done);
        // The last waiter of a process started elsewhere (or never) leaves no entry behind.
        if (waiters.size === 0 && this.waiting.get(name) === waiters) this.waiting.delete(name);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
      this.waiting.set(name, waiters);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Resolves once a process this replica runs has ended and its outcome is stored. */
  async ended(name: string): Promise<boolean> {
    const run = this.runs.get(name);
    if (run === undefined) return false;
    await run.ended;
    return true;
  }

  /**
   * Starts `process` (recorded RUNNING first, so that no one sees it pending once its output
   * flows) and follows it in the background until it ends.
   */
  async start(process: Process, target: SandboxTarget, now: Date): Promise<Process> {
    const id = idOf(process.name);
    await this.store.report(process.name, { state: 'STATE_RUNNING', startTime: now.toISOString() });
    const output = new OutputLog();
    const ended = this.follow(process, { id, target, output });
    this.runs.set(process.name, { log: output, ended });
    for (const wake of this.waiting.get(process.name) ?? []) wake();
    this.waiting.delete(process.name);
    this.forgetOldest();
    await this.onChange(process.name).catch((error: unknown) => {
      log.warn({ err: error, process: process.name }, 'could not mark the engine busy');
    });
    return { ...process, state: Process_State.STATE_RUNNING, startTime: now };
  }

  private async follow(
    process: Process,
    { id, target, output }: { id: string; target: SandboxTarget; output: OutputLog },
  ): Promise<void> {
    let exitCode: number | undefined;
    try {
      exitCode = await this.exec.run(target, startArgv(id, process), {
        onStdout: (chunk) => {
          output.append(OutputStream.OUTPUT_STREAM_STDOUT, chunk);
        },
        onStderr: (chunk) => {
          output.append(OutputStream.OUTPUT_STREAM_STDERR, chunk);
        },
      });
    } catch (error: unknown) {
      // The process could not be run or its end was not reported (the pod went away): it failed,
      // and its output says why.
      const why = error instanceof PodExecError ? error.message : 'the sandbox stopped answering';
      output.append(OutputStream.OUTPUT_STREAM_STDERR, Buffer.from(`${why}\n`));
    }
    const kept = latest(output.frames, MAX_STORED_OUTPUT_BYTES);
    try {
      await this.store.report(process.name, {
        state: exitCode === 0 ? 'STATE_SUCCEEDED' : 'STATE_FAILED',
        endTime: new Date().toISOString(),
        ...(exitCode === undefined ? {} : { exitCode }),
        output: kept,
      });
    } catch (error: unknown) {
      log.error({ err: error, process: process.name }, 'could not record the end of a process');
    }
    output.end();
    await this.onChange(process.name).catch((error: unknown) => {
      log.warn({ err: error, process: process.name }, 'could not mark the engine idle');
    });
  }

  /** Sends signal `signal` to a running process; false when it left no pid. */
  async signal(name: string, signal: number, target: SandboxTarget): Promise<boolean> {
    const id = idOf(name);
    const code = await this.exec.run(target, sandboxScript(SIGNAL_SCRIPT, [id, String(signal)]));
    return code === 0;
  }

  private forgetOldest(): void {
    const ended = [...this.runs.entries()].filter(([, run]) => run.log.done);
    for (const [name] of ended.slice(0, Math.max(0, ended.length - KEPT_ENDED))) this.runs.delete(name);
  }
}
