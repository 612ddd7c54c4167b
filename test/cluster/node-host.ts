/**
 * The host-side state a real node leaves behind, and how to take it away again: the processes it
 * started (by pid, shims and containers included), mounts, cgroups, iptables chains, the bridge
 * and the sysctls it changed. Everything here is idempotent, so the same sweep serves a clean stop
 * and the start after a crashed run.
 */
import { execFile } from 'node:child_process';
import {
  existsSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { processAlive } from './process.ts';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Machine-wide places of the one real node a machine can run (the bridge and some runtime paths are fixed). */
export const NODE_PATHS = {
  /** Sockets, the runtime's state, the pid file, the saved sysctls: tmpfs, gone at reboot. */
  state: '/run/ai-engine-manager-node',
  /** The kubelet's root, pod logs, volumes and CNI's address leases. */
  data: '/var/lib/ai-engine-manager-node',
  /** Paths containerd and CNI use whatever their configuration says. */
  hardCoded: [
    '/run/containerd',
    '/var/lib/cni/results',
    '/var/lib/kubelet/device-plugins',
    '/var/log/containers',
    '/var/log/pods',
  ],
} as const;

/** The node's bridge; also the CNI network's name. */
export const BRIDGE = 'aiem0';

/** The kernel settings the node needs, and the values a bridged pod network needs them at. */
export const NODE_SYSCTLS: Readonly<Record<string, string>> = {
  'net/ipv4/ip_forward': '1',
  // Bridged pod-to-pod and pod-to-Service traffic passes iptables (kube-proxy's rules, policies).
  'net/bridge/bridge-nf-call-iptables': '1',
  'net/bridge/bridge-nf-call-ip6tables': '1',
  // kube-proxy sets it for node ports on loopback.
  'net/ipv4/conf/all/route_localnet': '1',
};

const PIDS_FILE = join(NODE_PATHS.state, 'pids');
const SYSCTLS_FILE = join(NODE_PATHS.state, 'sysctls.json');

/** Records a started component's pid, so that a later run can stop it if this one crashes. */
export function recordPid(name: string, pid: number | undefined): void {
  if (pid === undefined) return;
  writeFileSync(PIDS_FILE, `${name} ${pid}\n`, { flag: 'a' });
}

/** Sets the node's sysctls, saving what was there first (once: a crashed run's saved values stay the truth). */
export function applySysctls(): void {
  if (!existsSync(SYSCTLS_FILE)) {
    const before: Record<string, string> = {};
    for (const key of Object.keys(NODE_SYSCTLS)) before[key] = readSysctl(key);
    writeFileSync(SYSCTLS_FILE, JSON.stringify(before));
  }
  for (const [key, value] of Object.entries(NODE_SYSCTLS)) writeSysctl(key, value);
}

function readSysctl(key: string): string {
  return readFileSync(join('/proc/sys', key), 'utf8').trim();
}

function writeSysctl(key: string, value: string): void {
  writeFileSync(join('/proc/sys', key), value);
}

/** Processes whose executable lies under one of `dirs`: the node's components and its shims. */
function processesUnder(dirs: readonly string[]): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const exe = readlinkSync(`/proc/${entry}/exe`);
      if (dirs.some((dir) => exe.startsWith(`${dir}/`))) found.push(Number(entry));
    } catch {
      // Gone meanwhile, or a kernel thread.
    }
  }
  return found;
}

function killPid(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Every cgroup folder (v1 controllers and the unified tree) named kubepods, deepest first. */
function kubepodsCgroups(): string[] {
  const roots: string[] = [];
  for (const controller of safeList('/sys/fs/cgroup')) {
    const dir = join('/sys/fs/cgroup', controller, 'kubepods');
    if (existsSync(dir)) roots.push(dir);
    const slice = join('/sys/fs/cgroup', controller, 'kubepods.slice');
    if (existsSync(slice)) roots.push(slice);
  }
  const all: string[] = [];
  const walk = (dir: string): void => {
    for (const child of readdirSync(dir, { withFileTypes: true })) {
      if (child.isDirectory()) walk(join(dir, child.name));
    }
    all.push(dir);
  };
  for (const root of roots) walk(root);
  return all;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The pids in the node's pod cgroups: the containers, which outlive their shims. */
function containerPids(): Set<number> {
  const pids = new Set<number>();
  for (const dir of kubepodsCgroups()) {
    const procs = safeRead(join(dir, 'cgroup.procs'))
      .split('\n')
      .filter((line) => line !== '');
    for (const pid of procs) pids.add(Number(pid));
  }
  return pids;
}

/** Kills every container process, until none is left (a dying parent may still start one). */
function killContainers(): void {
  for (let round = 0; round < 20; round++) {
    const pids = containerPids();
    if (pids.size === 0) return;
    for (const pid of pids) killPid(pid);
    waitSync(50);
  }
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function waitSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Mount points under any of `prefixes`, deepest first (so that nested mounts go first). */
function mountsUnder(prefixes: readonly string[]): string[] {
  const points = safeRead('/proc/self/mountinfo')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => point !== undefined)
    .map((point) => point.replace(/\\040/g, ' '))
    .filter((point) => prefixes.some((prefix) => point === prefix || point.startsWith(`${prefix}/`)));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

async function unmountAll(prefixes: readonly string[]): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const points = mountsUnder(prefixes);
    if (points.length === 0) return;
    for (const point of points) {
      // Lazy: a mount still in use (a dying container) goes as soon as it is free.
      await run('umount', ['-l', point]).catch(() => undefined);
    }
  }
}

async function quiet(command: string, args: readonly string[]): Promise<void> {
  await run(command, [...args]).catch(() => undefined);
}

/** The chains of `rules` (an `iptables -S` listing) that belong to the node. */
function nodeChains(rules: string): string[] {
  return rules
    .split('\n')
    .filter((line) => line.startsWith('-N '))
    .map((line) => line.slice(3).trim())
    .filter((chain) => chain.startsWith('KUBE-') || chain.startsWith('AIEM-'));
}

/** The rules of other chains that jump to one of `chains`, as delete commands. */
function jumpsInto(rules: string, chains: readonly string[]): string[][] {
  return rules
    .split('\n')
    .filter((line) => line.startsWith('-A '))
    .filter((line) => {
      const jump = /-j (\S+)/.exec(line)?.[1];
      return jump !== undefined && chains.includes(jump) && !chains.includes(line.split(' ')[1] ?? '');
    })
    .map((line) => line.replace(/^-A /, '-D ').split(' '));
}

async function removeChainsOf(tool: string, table: string): Promise<void> {
  const rules = await run(tool, ['-t', table, '-S']).then(
    (r) => r.stdout,
    () => '',
  );
  const chains = nodeChains(rules);
  // The jumps into the node's chains first, then their rules, then the chains themselves.
  for (const rule of jumpsInto(rules, chains)) await quiet(tool, ['-t', table, ...rule]);
  for (const chain of chains) await quiet(tool, ['-t', table, '-F', chain]);
  for (const chain of chains) await quiet(tool, ['-t', table, '-X', chain]);
}

/** The chains kube-proxy leaves after its own cleanup, and the node's own (policy) chains. */
async function removeIptablesChains(kubeProxy: string | undefined): Promise<void> {
  if (kubeProxy !== undefined && existsSync(kubeProxy)) await quiet(kubeProxy, ['--cleanup']);
  for (const tool of ['iptables', 'ip6tables']) {
    for (const table of ['filter', 'nat', 'mangle']) await removeChainsOf(tool, table);
  }
}

/** The bridge, and pods' veth ends on it that outlived their namespace. */
async function removeBridge(): Promise<void> {
  const links = await run('ip', ['-o', 'link', 'show', 'master', BRIDGE]).then(
    (r) => r.stdout,
    () => '',
  );
  const veths = links
    .split('\n')
    .map((line) => /^\d+: ([^@:]+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
  for (const name of veths) await quiet('ip', ['link', 'delete', name]);
  await quiet('ip', ['link', 'delete', BRIDGE]);
}

/** Puts back the sysctls saved before the node first changed them. */
function restoreSysctls(): void {
  const saved = safeRead(SYSCTLS_FILE);
  if (saved === '') return;
  for (const [key, value] of Object.entries(JSON.parse(saved) as Record<string, string>)) {
    try {
      writeSysctl(key, value);
    } catch {
      // A setting this kernel lacks.
    }
  }
}

function removeCgroups(): void {
  for (const dir of kubepodsCgroups()) {
    try {
      rmdirSync(dir);
    } catch {
      // Busy for a moment longer; the next sweep takes it.
    }
  }
}

/** Stops the node's processes: those recorded, any of its binaries, and its containers. */
function killProcesses(binaryDirs: readonly string[]): void {
  const recorded = safeRead(PIDS_FILE)
    .split('\n')
    .map((line) => Number(line.split(' ')[1]))
    .filter((pid) => Number.isInteger(pid) && pid > 1);
  for (const pid of [...recorded, ...processesUnder(binaryDirs)]) killPid(pid);
  killContainers();
  for (let i = 0; i < 40 && processesUnder(binaryDirs).some(processAlive); i++) waitSync(50);
}

/**
 * Takes away everything a real node may have left on this machine, whether it stopped cleanly or
 * not: its processes (recorded pids and any process of its binaries), its containers (by their
 * cgroups), mounts, cgroups, iptables chains, the bridge, its folders, and the sysctls it changed.
 */
export async function sweepNode(options: {
  binaryDirs: readonly string[];
  kubeProxy?: string;
}): Promise<void> {
  killProcesses(options.binaryDirs);
  // Pods' network namespaces are mounted under the runtime's state folder, among the node's own.
  await unmountAll([NODE_PATHS.state, NODE_PATHS.data, ...NODE_PATHS.hardCoded]);
  removeCgroups();
  await removeIptablesChains(options.kubeProxy);
  await removeBridge();
  restoreSysctls();
  for (const path of [NODE_PATHS.state, NODE_PATHS.data, ...NODE_PATHS.hardCoded]) {
    rmSync(path, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 });
  }
}
