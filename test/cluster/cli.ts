/**
 * The local control plane for people:
 *   node test/cluster/cli.ts up     start it in the background (state in .run/cluster/)
 *   node test/cluster/cli.ts down   stop it and wait until every component has exited
 *   node test/cluster/cli.ts serve  run it in the foreground until SIGINT or SIGTERM (used by up)
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster } from './cluster.ts';
import { processAlive } from './process.ts';
import { superviseShutdown } from './shutdown.ts';
import { GiveUp, waitFor } from './wait.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const STATE = join(ROOT, '.run', 'cluster');
const READY = join(STATE, 'ready.json');
const PID = join(STATE, 'supervisor.pid');
/** A stable kubeconfig path for people and scripts; it is replaced on every start. */
export const KUBECONFIG = join(ROOT, '.run', 'kubeconfig');

interface ReadyState {
  kubeconfig: string;
  /** The folder of the cluster's own kubectl, of the same release as the server. */
  kubectlDir: string;
  server: string;
  runDir: string;
  pid: number;
}

function supervisorPid(): number | undefined {
  if (!existsSync(PID)) return undefined;
  const pid = Number(readFileSync(PID, 'utf8'));
  return Number.isInteger(pid) && processAlive(pid) ? pid : undefined;
}

function describe(state: ReadyState): string {
  return [
    `Local control plane running (apiserver ${state.server}, supervisor pid ${state.pid}).`,
    `  export KUBECONFIG=${state.kubeconfig} PATH=${state.kubectlDir}:$PATH`,
    '  kubectl get nodes',
    `Component logs: ${state.runDir}/*.log. Stop it with: make cluster-down`,
  ].join('\n');
}

async function up(): Promise<void> {
  if (supervisorPid() !== undefined && existsSync(READY)) {
    console.log(describe(JSON.parse(readFileSync(READY, 'utf8')) as ReadyState));
    return;
  }
  mkdirSync(STATE, { recursive: true });
  rmSync(READY, { force: true });
  const log = join(STATE, 'supervisor.log');
  const out = openSync(log, 'w');
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'serve'], {
    detached: true,
    stdio: ['ignore', out, out],
  });
  child.unref();
  const pid = child.pid ?? 0;
  writeFileSync(PID, String(pid));
  const state = await waitFor(
    () => {
      if (!processAlive(pid)) throw new GiveUp(`The supervisor exited; see ${log}`);
      return Promise.resolve(
        existsSync(READY) ? (JSON.parse(readFileSync(READY, 'utf8')) as ReadyState) : undefined,
      );
    },
    { what: 'the local control plane to start', timeoutMs: 60 * 60 * 1000, intervalMs: 250 },
  );
  console.log(describe(state));
}

async function down(): Promise<void> {
  const pid = supervisorPid();
  if (pid === undefined) {
    console.log('No local control plane is running.');
    return;
  }
  process.kill(pid, 'SIGTERM');
  await waitFor(() => Promise.resolve(processAlive(pid) ? undefined : true), {
    what: `supervisor ${pid} to stop`,
    // The supervisor stops within 10 s, or kills what is left and exits.
    timeoutMs: 20_000,
  });
  rmSync(STATE, { recursive: true, force: true });
  console.log('Local control plane stopped.');
}

/** Runs the cluster until a signal, publishing its kubeconfig at .run/kubeconfig. */
async function serve(): Promise<void> {
  const shutdown = superviseShutdown();
  const cluster = await startCluster({
    log: (message) => {
      console.error(message);
    },
  });
  shutdown.add({
    name: 'the local control plane',
    stop: () => cluster.stop(),
    kill: () => {
      cluster.kill();
    },
  });
  mkdirSync(dirname(KUBECONFIG), { recursive: true });
  copyFileSync(cluster.kubeconfigPath, KUBECONFIG);
  const state: ReadyState = {
    kubeconfig: KUBECONFIG,
    kubectlDir: cluster.binaries.kubernetes,
    server: cluster.server,
    runDir: cluster.runDir,
    pid: process.pid,
  };
  writeFileSync(READY, JSON.stringify(state, null, 2));
  const removeReady = (): void => {
    rmSync(READY, { force: true });
  };
  shutdown.add({
    name: 'the ready file',
    stop: () => {
      removeReady();
      return Promise.resolve();
    },
    kill: removeReady,
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const commands: Record<string, () => Promise<void>> = { up, down, serve };
  const command = commands[process.argv[2] ?? ''];
  if (command === undefined) {
    console.error('usage: node test/cluster/cli.ts up|down|serve');
    process.exit(2);
  }
  await command();
}
