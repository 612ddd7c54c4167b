/**
 * The host processes of simulated sandbox pods, and their end. A container's processes die with
 * it; kwok runs a pod's commands on the host and lets them run on after the pod is gone (until
 * their exec connection drops). The sandbox simulator therefore finds them in `/proc` and kills
 * them when their pod terminates.
 *
 * A command belongs to a pod when its environment names the pod's directory as the sandbox root
 * (`AIEM_SANDBOX_ROOT`, set for every command the simulator's exec runs). Every command runs in a
 * session of its own (the simulator's entry program calls setsid), so whatever it started — even
 * a child that cleared its environment or left for a process group of its own — is found by its
 * session. Only processes of the sandbox user are ever signalled.
 */
import { readdir, readFile, stat } from 'node:fs/promises';

/** What the simulator needs to know of one host process. */
export interface HostProcess {
  pid: number;
  /** The session id (`setsid`): a sandbox command's session is its own pid. */
  session: number;
  /** The real owner, from `/proc/<pid>`. */
  uid: number;
  /** A zombie has ended already; it waits for its parent and cannot be signalled away. */
  zombie: boolean;
  /** Whether its environment marks it as a process of the sandbox being ended. */
  marked: boolean;
}

/**
 * The `NAME=value` entry that marks a pod's processes (`exact`), or every sandbox's under a folder
 * (`prefix`).
 */
export type SandboxMark = { exact: string } | { prefix: string };

/** Whether one entry of a process's environment carries `mark`. */
export function hasMark(environment: readonly string[], mark: SandboxMark): boolean {
  return 'exact' in mark
    ? environment.includes(mark.exact)
    : environment.some((entry) => entry.startsWith(mark.prefix));
}

/** The session id in a `/proc/<pid>/stat` line (after the command name, which may hold spaces). */
export function parseStat(line: string): { state: string; session: number } | undefined {
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
  const session = Number(fields[3]);
  return fields[0] === undefined || !Number.isInteger(session) ? undefined : { state: fields[0], session };
}

/**
 * Which processes to kill: the sandbox user's marked processes, and every process of the sandbox
 * user in a session led by a marked process (or in one of `sessions`, found by an earlier look,
 * whose leader may be gone). `sessions` grows with those found.
 */
export function doomed(processes: readonly HostProcess[], uid: number, sessions: Set<number>): number[] {
  for (const p of processes) if (p.marked && p.pid === p.session && p.uid === uid) sessions.add(p.session);
  return processes
    .filter((p) => p.uid === uid && !p.zombie && (p.marked || sessions.has(p.session)))
    .map((p) => p.pid);
}

/** The processes of this host as `/proc` shows them now; those that end while being read are left out. */
export async function hostProcesses(mark: SandboxMark): Promise<HostProcess[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  const found = await Promise.all(pids.map((pid) => hostProcess(Number(pid), mark)));
  return found.filter((p): p is HostProcess => p !== undefined);
}

async function hostProcess(pid: number, mark: SandboxMark): Promise<HostProcess | undefined> {
  try {
    const [line, owner, environ] = await Promise.all([
      readFile(`/proc/${pid}/stat`, 'utf8'),
      stat(`/proc/${pid}`),
      readFile(`/proc/${pid}/environ`, 'utf8').catch(() => ''),
    ]);
    const parsed = parseStat(line);
    if (parsed === undefined) return undefined;
    return {
      pid,
      session: parsed.session,
      uid: owner.uid,
      zombie: parsed.state === 'Z',
      marked: hasMark(environ.split('\0'), mark),
    };
  } catch {
    return undefined;
  }
}

/**
 * Kills (SIGKILL, as a container's end does) every process of the sandbox user that `mark`
 * finds, and everything in their sessions, looking again until none is left: a process may fork
 * between a look and the kill. Resolves with how many were killed.
 */
export async function killSandboxProcesses(mark: SandboxMark, uid: number): Promise<number> {
  const sessions = new Set<number>();
  let killed = 0;
  for (let round = 0; round < 50; round++) {
    const pids = doomed(await hostProcesses(mark), uid, sessions);
    if (pids.length === 0) return killed;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // Gone already.
      }
    }
    // Let the kernel deliver the signals before the next look.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`Sandbox processes marked ${JSON.stringify(mark)} survived 50 rounds of SIGKILL`);
}
