/**
 * Settles processes whose runner is gone. A process is followed by the gateway replica that
 * started it; if that replica stops (a rollout, a crash) while the process runs, nobody will
 * record its end, it would read RUNNING forever and keep its engine from ever idling. Every
 * replica therefore looks, now and then, at the running processes it does not follow: one whose
 * pid no longer answers in its sandbox (or whose sandbox is gone) on two looks in a row — so that
 * a runner about to record a normal end is not overtaken — is recorded FAILED with an explanation.
 */
import { SANDBOX_CONTAINER, sandboxPodName } from '../../../shared/workloads.ts';
import { OutputStream, Process_State } from '../gen/ai/h2o/engine/v1/process.pb.ts';
import { log } from '../log.ts';
import { objectName } from '../store/names.ts';
import type { ClusterPlacement, Store } from '../store/store-interface.ts';
import { sandboxScript, type PodExec } from './pod-exec.ts';
import { PID_DIR } from './process-runner.ts';
import { parseProcessName, type ProcessStore } from './process-store.ts';
import { recountRunning } from './running-count.ts';

/** `$1` id: exits 0 while the process of that id runs. */
const ALIVE_SCRIPT = `p=$(cat "$R${PID_DIR}/$1.pid" 2>/dev/null) || exit 1
kill -0 "$p" 2>/dev/null`;

const ORPHANED =
  'The process was ended: the gateway replica that ran it stopped, and the process no longer runs; its exit code is unknown.\n';

export interface SweeperDeps {
  processes: ProcessStore;
  store: Store & ClusterPlacement;
  exec: PodExec;
  /** Whether this replica follows the process itself (then it is not an orphan). */
  follows: (name: string) => boolean;
}

export class ProcessSweeper {
  private readonly deps: SweeperDeps;
  private suspects = new Set<string>();

  constructor(deps: SweeperDeps) {
    this.deps = deps;
  }

  /** One look at every running process; settles those found gone twice in a row. */
  async sweep(now = new Date()): Promise<string[]> {
    const running = (await this.deps.processes.listAll()).filter(
      (p) => p.state === Process_State.STATE_RUNNING && !this.deps.follows(p.name),
    );
    const gone: string[] = [];
    for (const process of running) if (!(await this.alive(process.name))) gone.push(process.name);
    const settled = gone.filter((name) => this.suspects.has(name));
    this.suspects = new Set(gone.filter((name) => !settled.includes(name)));
    for (const name of settled) await this.settle(name, now);
    return settled;
  }

  private async alive(name: string): Promise<boolean> {
    const parts = parseProcessName(name);
    const engine = parts && objectName(parts.workspace, parts.engine);
    if (parts === undefined || engine === undefined) return false;
    const target = {
      namespace: this.deps.store.namespace,
      pod: sandboxPodName(engine),
      container: SANDBOX_CONTAINER,
    };
    try {
      return (await this.deps.exec.run(target, sandboxScript(ALIVE_SCRIPT, [parts.id]))) === 0;
    } catch {
      // No pod (the engine stopped) or no exec: nothing of the process can still run.
      return false;
    }
  }

  private async settle(name: string, now: Date): Promise<void> {
    await this.deps.processes.report(name, {
      state: 'STATE_FAILED',
      endTime: now.toISOString(),
      output: {
        frames: [{ stream: OutputStream.OUTPUT_STREAM_STDERR, data: Buffer.from(ORPHANED) }],
        truncated: true,
      },
    });
    await recountRunning(this.deps, name, now).catch((error: unknown) => {
      log.warn({ err: error, process: name }, 'could not recount the running processes of an engine');
    });
  }

  /** Sweeps every `everyMs` until stopped. */
  start(everyMs: number): () => void {
    const timer = setInterval(() => {
      this.sweep().catch((error: unknown) => {
        log.warn({ err: error }, 'the sweep of orphaned processes failed');
      });
    }, everyMs);
    timer.unref();
    return () => {
      clearInterval(timer);
    };
  }
}
