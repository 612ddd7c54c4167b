/**
 * The product's image (built by `make image`, kept in podman's local storage) run with podman and
 * runc as a pod's container would run: the command, environment and mounts of a container of the
 * chart's rendered Deployments, its security context (user, read-only root), on the host's network
 * so that it reaches the local control plane.
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LoggedProcess } from './product-process.ts';
import { ROOT } from '../charts/helm.ts';

const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
/** The image `make image` leaves in podman's local storage. */
export const IMAGE = `localhost/ai-engine-manager:${version}`;
export const VERSION = version;

/**
 * podman on these machines: runc (crun cannot use the hybrid cgroup layout) and explicit limits
 * (the defaults cannot be set here).
 */
const PODMAN = ['--runtime', 'runc'];
export const LIMITS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];
/** Where the kubeconfig that stands in for the pod's ServiceAccount token is mounted. */
const KUBECONFIG_PATH = '/var/run/ai-engine-manager/kubeconfig';

/** Runs podman; resolves to its standard output. */
export async function podman(args: readonly string[]): Promise<string> {
  const { stdout } = await promisify(execFile)('podman', [...PODMAN, ...args], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/** The fields of a rendered container that a run needs. */
export interface ContainerSpec {
  command?: string[];
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  securityContext?: SecurityContext;
}

interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[] };
}

/** The fields of a rendered pod template's spec that a run needs. */
export interface PodSpec {
  securityContext?: SecurityContext;
  containers: ContainerSpec[];
  volumes?: { name: string; emptyDir?: object; configMap?: object; secret?: object }[];
}

/** Where the pod's volumes come from on this machine. */
export interface RunOptions {
  /** The pod's name, for environment variables from `metadata.name`. */
  podName: string;
  /** Host folders for the pod's ConfigMap and Secret volumes, by volume name (emptyDir volumes are tmpfs). */
  volumes: Record<string, string>;
  /** A kubeconfig file that stands in for the pod's ServiceAccount token. */
  kubeconfig: string;
  /** Values that only make sense inside a pod (listen addresses, ports); each must be one the chart sets. */
  overrides: Record<string, string>;
}

/** podman run's security arguments for the pod's and the container's security contexts. */
function securityArguments(pod: PodSpec, container: ContainerSpec): string[] {
  const security = { ...pod.securityContext, ...container.securityContext };
  const args: string[] = [];
  if (security.runAsUser !== undefined)
    args.push('--user', `${security.runAsUser}:${security.runAsGroup ?? security.runAsUser}`);
  if (security.readOnlyRootFilesystem === true) args.push('--read-only');
  if (security.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');
  for (const capability of security.capabilities?.drop ?? []) args.push('--cap-drop', capability);
  return args;
}

/** The container's environment: plain values, the pod name from the downward API, then `overrides`. */
function environment(container: ContainerSpec, options: RunOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (variable.valueFrom?.fieldRef?.fieldPath === 'metadata.name')
      env[variable.name] = options.podName;
    else throw new Error(`Unexpected environment source of ${variable.name}: ${JSON.stringify(variable)}`);
  }
  for (const key of Object.keys(options.overrides))
    if (!(key in env)) throw new Error(`The chart does not set ${key}`);
  return Object.assign(env, options.overrides, { KUBECONFIG: KUBECONFIG_PATH });
}

/** podman's mount arguments: emptyDir volumes as tmpfs, ConfigMap and Secret volumes from host folders. */
function mountArguments(pod: PodSpec, container: ContainerSpec, options: RunOptions): string[] {
  const args = ['--volume', `${options.kubeconfig}:${KUBECONFIG_PATH}:ro`];
  for (const mount of container.volumeMounts ?? []) {
    const volume = pod.volumes?.find((v) => v.name === mount.name);
    args.push(...mountOf(volume, mount, options.volumes[mount.name]));
  }
  return args;
}

type Volume = NonNullable<PodSpec['volumes']>[number];
type Mount = NonNullable<ContainerSpec['volumeMounts']>[number];

function mountOf(volume: Volume | undefined, mount: Mount, source: string | undefined): string[] {
  if (volume?.emptyDir !== undefined) return ['--tmpfs', mount.mountPath];
  const fromFiles = volume?.configMap !== undefined || volume?.secret !== undefined;
  if (!fromFiles || source === undefined) throw new Error(`No source for the volume ${mount.name}`);
  return ['--volume', `${source}:${mount.mountPath}${mount.readOnly === true ? ':ro' : ''}`];
}

/** podman run's arguments for the first container of a rendered pod template; nothing of this machine leaks in. */
function runArguments(name: string, pod: PodSpec, options: RunOptions): string[] {
  const container = pod.containers[0];
  if (container === undefined) throw new Error('The pod has no container');
  const [command, ...rest] = container.command ?? [];
  if (command === undefined) throw new Error('The container names no command');
  const env = Object.entries(environment(container, options)).flatMap(([key, value]) => [
    '--env',
    `${key}=${value}`,
  ]);
  return [
    ...['run', '--rm', '--name', name, '--network=host', '--pull=never', ...LIMITS],
    ...securityArguments(pod, container),
    ...env,
    ...mountArguments(pod, container, options),
    IMAGE,
    command,
    ...rest,
  ];
}

/** A container of the product's image, run in the foreground by podman, its output kept. */
export class ContainerProcess extends LoggedProcess {
  private readonly containerName: string;

  /** Runs the first container of a rendered pod template (see RunOptions) as `name`. */
  constructor(name: string, pod: PodSpec, options: RunOptions) {
    const containerName = `aiem-test-${name}-${process.pid}-${Date.now()}`;
    const args = runArguments(containerName, pod, options);
    super(name, spawn('podman', [...PODMAN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }));
    this.containerName = containerName;
  }

  /** Sends a signal to the container's process (PID 1 in the container). */
  async signal(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    await podman(['kill', '--signal', signal, this.containerName]);
  }

  /** SIGTERM, as the kubelet sends, and the exit awaited. */
  override async stop(): Promise<void> {
    if (this.exited) return;
    await this.signal('SIGTERM').catch(() => undefined);
    await this.exit;
  }
}
