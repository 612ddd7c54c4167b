/**
 * A process of the product (gateway/src/main.ts, operator/src/main.ts) started as a deployment
 * would start it, its JSON log lines kept for waits and failure reports: on this machine's Node
 * (ProductProcess), or in the product's image under podman (ContainerProcess, test/helpers/image.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A child process whose output lines are kept, and awaited by their JSON `msg`. */
export class LoggedProcess {
  readonly lines: string[] = [];
  protected readonly child: ChildProcess;
  private readonly waiters = new Set<() => void>();
  private exitCode: number | null | undefined;
  readonly name: string;
  /** Settles when the process has exited, with its exit code. */
  readonly exit: Promise<number | null>;

  protected constructor(name: string, child: ChildProcess) {
    this.name = name;
    this.child = child;
    for (const stream of [this.child.stdout, this.child.stderr]) {
      if (stream === null) continue;
      createInterface({ input: stream }).on('line', (line) => {
        this.lines.push(line);
        for (const waiter of this.waiters) waiter();
      });
    }
    this.exit = new Promise((resolve) => {
      this.child.once('exit', (code) => {
        this.exitCode = code;
        for (const waiter of this.waiters) waiter();
        resolve(code);
      });
    });
  }

  protected get exited(): boolean {
    return this.exitCode !== undefined;
  }

  /** The process id, while it runs. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The last lines of the log (each cut to 1,000 characters), for failure messages. */
  log(lines = 40): string {
    const tail = this.lines
      .slice(-lines)
      .map((line) => (line.length > 1000 ? `${line.slice(0, 1000)}…` : line));
    return `----- ${this.name} (last ${tail.length} lines) -----\n${tail.join('\n')}`;
  }

  /** Resolves with the first log record whose `msg` is `message`, past or future. */
  waitForLog(message: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      const check = (): void => {
        const record = this.lines.map(parseJson).find((r) => r?.['msg'] === message);
        if (record !== undefined) {
          finish();
          resolve(record);
        } else if (this.exited) {
          finish();
          reject(new Error(`${this.name} exited before "${message}"\n${this.log()}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`${this.name} did not log "${message}"\n${this.log()}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** Sends SIGTERM and waits for the exit. */
  async stop(): Promise<void> {
    if (this.exited) return;
    this.child.kill('SIGTERM');
    await this.exit;
  }
}

/** The product's process on this machine's Node, with exactly the environment given. */
export class ProductProcess extends LoggedProcess {
  constructor(name: string, script: string, env: Record<string, string>) {
    super(name, spawn(process.execPath, [join(ROOT, script)], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  }
}

function parseJson(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Stops every process of a test file, printing each one's log when a test of the file failed.
 * Called from an `afterAll` declared before the cluster's, so they stop while the cluster runs.
 */
export async function stopAll(processes: readonly LoggedProcess[]): Promise<void> {
  const failed = (globalThis.__failedTests ?? 0) > 0;
  for (const p of processes) {
    await p.stop();
    if (failed) console.error(p.log());
  }
}
