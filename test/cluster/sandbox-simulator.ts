/**
 * A stand-in for a sandbox container's runtime: kwok runs no containers, but it serves
 * `pods/exec` by running the command on this host (kwok's `Exec` custom resource). For every pod
 * labelled as a sandbox engine's, this simulator makes a directory of its own under the cluster's
 * run folder — the pod's `/`, with its container's volume mounts (`/workspace`, `/home/sandbox`,
 * `/tmp`) made below it, owned by the sandbox user — and an `Exec` named after the pod that runs
 * commands there as uid/gid 1000 (the sandbox user of the pod spec; setuid to the number, nothing
 * is added to the host's users), with `AIEM_SANDBOX_ROOT` naming that directory: the gateway's
 * sandbox scripts prefix every path with it (gateway/src/sandbox/pod-exec.ts).
 *
 * kwok starts a command with its own environment, in its own process group; a container's
 * commands get the container's environment and die with it. So the `Exec` also names, in
 * `AIEM_SANDBOX_ENTER`, an entry program written for the pod ({@link entryScript}), through
 * which every sandbox script runs again: with only the pod's environment
 * ({@link podEnvironment}: a container's default PATH, the container's variables from the pod
 * spec, `HOME` mapped into the pod's directory), in a session of its own. When the pod
 * terminates, every process of those sessions is killed (sandbox-processes.ts), and the
 * directory and the entry program go.
 *
 * It also gives the pod a kwok `ResourceUsage`: a constant simulated usage
 * ({@link SIMULATED_SANDBOX_USAGE}) that kwok reports as the container's resource metrics, which
 * metrics-server serves when the cluster runs it (metrics-server.ts).
 *
 * Warning: the command runs on the host, with the host's files. The root prefix and the
 * unprivileged user are what keep it inside the directory; never make an Exec without both.
 */
import { REAL_NODE } from './real-node.ts';
import { chmod, chown, mkdir, rm, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  makeInformer,
  type Informer,
  type KubeConfig,
  type ObjectCache,
  type V1Container,
  type V1Pod,
} from '@kubernetes/client-node';
import { ENGINE_KIND_LABEL } from '../../shared/resources.ts';
import { PodExec, sandboxScript } from '../../gateway/src/sandbox/pod-exec.ts';
import { killSandboxProcesses } from './sandbox-processes.ts';
import { waitFor } from './wait.ts';

/** The label value that marks a sandbox engine's pods. */
export const SANDBOX_KIND = 'SandboxEngine';
/**
 * The user and group that sandbox commands run as on the host: the sandbox user of the pod spec
 * (operator/src/kinds/sandbox-engine.ts), whether or not the host knows it.
 */
export const SANDBOX_UID = 1000;
/** The environment variable that names a sandbox's root directory on the host. */
export const SANDBOX_ROOT_ENV = 'AIEM_SANDBOX_ROOT';
/** The environment variable that names the entry program every sandbox script runs through. */
export const SANDBOX_ENTER_ENV = 'AIEM_SANDBOX_ENTER';
/**
 * A container's PATH when its image sets none (the container runtimes' default): every folder in
 * it is searchable by any user, so a command that is nowhere is "not found" (127).
 */
export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** kwok's per-pod exec rule, a namespaced custom resource named after its pod. */
const EXECS = { group: 'kwok.x-k8s.io', version: 'v1alpha1', plural: 'execs' } as const;
/** kwok's per-pod simulated resource usage, also named after its pod. */
const USAGES = { group: 'kwok.x-k8s.io', version: 'v1alpha1', plural: 'resourceusages' } as const;

/**
 * What every sandbox container uses, as kwok reports it: a quarter of a core and 100 MiB of
 * working set. metrics-server reads the CPU as a rate of kwok's growing counter, so PodMetrics
 * show about 250m (not exactly: the rate is taken between two scrapes).
 */
export const SIMULATED_SANDBOX_USAGE = { cpu: '250m', memory: '100Mi', memoryBytes: 100 * 1024 * 1024 };

/** A pod, by namespace and name. */
export interface PodKey {
  namespace: string;
  name: string;
}

/**
 * Whether `pod` belongs to a sandbox engine on a simulated node. On the real node the container
 * itself runs the commands (the kubelet's own exec), so the simulator leaves those pods alone.
 */
export function isSandboxPod(pod: V1Pod): boolean {
  return pod.metadata?.labels?.[ENGINE_KIND_LABEL] === SANDBOX_KIND && pod.spec?.nodeName !== REAL_NODE.name;
}

/** The namespace and name of a pod. */
export function podKey(pod: V1Pod): PodKey {
  return { namespace: pod.metadata?.namespace ?? 'default', name: pod.metadata?.name ?? '' };
}

/** The host directory that is the root of a sandbox pod's filesystem. */
export function sandboxDir(sandboxesDir: string, pod: PodKey): string {
  if (!/^[a-z0-9.-]+$/.test(pod.namespace) || !/^[a-z0-9.-]+$/.test(pod.name)) {
    throw new Error(`Not a pod name: ${pod.namespace}/${pod.name}`);
  }
  return join(sandboxesDir, pod.namespace, pod.name);
}

/** The folder of the sandboxes' entry programs, in the sandboxes' folder (no namespace starts with "."). */
export const ENTRIES_DIR = '.enter';

/** Where the entry program of a sandbox pod is: beside the pods' directories, out of their reach. */
export function entryPath(sandboxesDir: string, pod: PodKey): string {
  sandboxDir(sandboxesDir, pod); // the same check of the names
  return join(sandboxesDir, ENTRIES_DIR, pod.namespace, pod.name);
}

/** The sandbox container of a pod: the first, as the operator makes it. */
function containerOf(pod: V1Pod): V1Container | undefined {
  return pod.spec?.containers[0];
}

/**
 * The environment a command of the pod's container starts with on a node, as it is on this host:
 * a runtime's default PATH and the pod's HOSTNAME, then the container's variables from the pod
 * spec (plain values; `valueFrom` and `$(NAME)` references are not resolved here), with `HOME`
 * mapped into the pod's directory — programs write below it unasked, and the host's own home must
 * not be where they do (other absolute paths stay the host's, as the gateway's are rewritten by
 * the scripts themselves). Last, the sandbox root, which the scripts need and the spec may not
 * change. Later entries win.
 */
export function podEnvironment(pod: V1Pod, dir: string): { name: string; value: string }[] {
  const declared = (containerOf(pod)?.env ?? []).flatMap((v) =>
    v.value === undefined ? [] : [{ name: v.name, value: v.value }],
  );
  const home = declared.findLast((v) => v.name === 'HOME')?.value ?? '/';
  return [
    { name: 'PATH', value: DEFAULT_PATH },
    { name: 'HOSTNAME', value: podKey(pod).name },
    ...declared.filter((v) => v.name !== 'HOME' && v.name !== SANDBOX_ROOT_ENV),
    { name: 'HOME', value: inSandbox(dir, home) },
    { name: SANDBOX_ROOT_ENV, value: dir },
  ];
}

/** A path of the pod (absolute, `..` resolved within it) as the host path below `dir`. */
function inSandbox(dir: string, path: string): string {
  const normal = posix.normalize(`/${path}`).replace(/\/+$/, '');
  return `${dir}${normal}`;
}

/**
 * The host directories of the container's scratch mounts (emptyDir volumes: `/workspace` and the
 * like), below `dir`. Mounts of other volumes (a service account's token, a secret) hold files
 * that are not simulated, so they are not made.
 */
export function mountDirs(pod: V1Pod, dir: string): string[] {
  const scratch = new Set(
    (pod.spec?.volumes ?? []).filter((v) => v.emptyDir !== undefined).map((v) => v.name),
  );
  return (containerOf(pod)?.volumeMounts ?? [])
    .filter((m) => scratch.has(m.name))
    .map((m) => inSandbox(dir, m.mountPath))
    .filter((d) => d !== dir);
}

/**
 * The entry program every sandbox script of the pod runs through (`$AIEM_SANDBOX_ENTER`, see
 * gateway/src/sandbox/pod-exec.ts): it replaces kwok's environment by exactly `environment` and
 * gives the command a session, so a process group, of its own (setsid, without a fork: the pid,
 * exit status and signals stay the command's). The values travel single-quoted.
 */
export function entryScript(pod: PodKey, environment: readonly { name: string; value: string }[]): string {
  const assignments = environment.map(({ name, value }) => quoted(`${name}=${value}`)).join(' ');
  return [
    '#!/bin/sh',
    `# The entry of sandbox pod ${pod.namespace}/${pod.name}'s commands (test/cluster/sandbox-simulator.ts).`,
    's=$(command -v setsid) || exit 126',
    `exec env -i ${assignments} "$s" -w "$@"`,
    '',
  ].join('\n');
}

function quoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The kwok `Exec` that runs every container's commands in `dir`, as {@link SANDBOX_UID}, with
 * {@link SANDBOX_ROOT_ENV} set to `dir` and {@link SANDBOX_ENTER_ENV} to the pod's entry program.
 * It is owned by the pod, so it goes with it.
 *
 * @throws Error when `dir` is not an absolute directory below `/`: without a root, commands
 *   would act on the host's own files
 */
export function execRuleFor(pod: V1Pod, dir: string, enter: string): Record<string, unknown> {
  if (!dir.startsWith('/') || dir.replace(/\/+$/, '') === '') {
    throw new Error(`Refusing an exec rule without a sandbox root (got "${dir}")`);
  }
  const { namespace, name } = podKey(pod);
  const uid = pod.metadata?.uid;
  return {
    apiVersion: `${EXECS.group}/${EXECS.version}`,
    kind: 'Exec',
    metadata: {
      name,
      namespace,
      ...(uid === undefined ? {} : { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid }] }),
    },
    spec: {
      execs: [
        {
          local: {
            workDir: dir,
            envs: [
              { name: SANDBOX_ROOT_ENV, value: dir },
              { name: SANDBOX_ENTER_ENV, value: enter },
            ],
            securityContext: { runAsUser: SANDBOX_UID, runAsGroup: SANDBOX_UID },
          },
        },
      ],
    },
  };
}

/** The kwok `ResourceUsage` of a sandbox pod: {@link SIMULATED_SANDBOX_USAGE}, owned by the pod. */
export function resourceUsageFor(pod: V1Pod): Record<string, unknown> {
  const { namespace, name } = podKey(pod);
  const uid = pod.metadata?.uid;
  return {
    apiVersion: `${USAGES.group}/${USAGES.version}`,
    kind: 'ResourceUsage',
    metadata: {
      name,
      namespace,
      ...(uid === undefined ? {} : { ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name, uid }] }),
    },
    spec: {
      usages: [
        {
          usage: {
            cpu: { value: SIMULATED_SANDBOX_USAGE.cpu },
            memory: { value: SIMULATED_SANDBOX_USAGE.memory },
          },
        },
      ],
    },
  };
}

/** Options of the {@link SandboxSimulator}. */
export interface SandboxSimulatorOptions {
  /** Called with errors that the simulator retried or gave up on, for the harness's log. */
  onError?: (error: unknown) => void;
}

/**
 * Gives every running sandbox pod a directory and an `Exec` rule (see the file header), and
 * removes the directory when the pod is deleted. {@link SandboxSimulator.ready} tells when kwok
 * serves a pod's exec.
 */
export class SandboxSimulator {
  /** Where the sandboxes' directories are: `<dir>/<namespace>/<pod>`. */
  readonly dir: string;
  private readonly custom: CustomObjectsApi;
  private readonly exec: PodExec;
  private readonly pods: Informer<V1Pod> & ObjectCache<V1Pod>;
  private readonly onError: (error: unknown) => void;
  /** Pods being set up or set up, by `namespace/name`, each with its set-up's outcome. */
  private readonly prepared = new Map<string, Promise<void>>();
  /** Pods whose processes are being or were killed (terminating), by uid: a name comes back. */
  private readonly ended = new Set<string>();
  private stopped = false;

  constructor(kubeConfig: KubeConfig, dir: string, options: SandboxSimulatorOptions = {}) {
    this.dir = dir;
    this.onError = options.onError ?? (() => undefined);
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.exec = new PodExec(kubeConfig);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const selector = `${ENGINE_KIND_LABEL}=${SANDBOX_KIND}`;
    this.pods = makeInformer(
      kubeConfig,
      '/api/v1/pods',
      () => core.listPodForAllNamespaces({ labelSelector: selector }),
      selector,
    );
  }

  /** Makes the sandboxes' folder (traversable by the sandbox user) and starts watching pods. */
  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o711 });
    await chmod(this.dir, 0o711);
    const onPod = (pod: V1Pod): void => {
      this.reconcile(pod);
    };
    this.pods.on('add', onPod);
    this.pods.on('update', onPod);
    this.pods.on('delete', (pod) => void this.forget(pod));
    // A container's processes end with it; this ends theirs as soon as the pod terminates.
    this.pods.on('update', (pod) => {
      if (pod.metadata?.deletionTimestamp !== undefined) void this.end(pod);
    });
    this.pods.on('error', (error) => {
      if (this.stopped) return;
      this.onError(error);
      setTimeout(() => {
        this.pods.start().catch(this.onError);
      }, 1_000);
    });
    await this.pods.start();
  }

  /**
   * Stops watching and kills every sandbox's processes (they run in sessions of their own, so
   * kwok's end would not end them); the directories stay until the run folder goes.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.pods.stop();
    await killSandboxProcesses({ prefix: `${SANDBOX_ROOT_ENV}=${this.dir}/` }, SANDBOX_UID).catch(
      this.onError,
    );
  }

  /**
   * Resolves once kwok runs commands of this pod in its sandbox directory; rejects when that
   * does not happen within `timeoutMs`.
   */
  async ready(pod: PodKey, timeoutMs = 60_000): Promise<string> {
    const dir = sandboxDir(this.dir, pod);
    await waitFor(() => this.prepared.get(keyOf(pod))?.then(() => true) ?? Promise.resolve(undefined), {
      what: `the sandbox exec of ${pod.namespace}/${pod.name}`,
      timeoutMs,
    });
    return dir;
  }

  /** Sets a running sandbox pod up once; a failed set-up is tried again on the next event. */
  private reconcile(pod: V1Pod): void {
    if (!isSandboxPod(pod) || pod.status?.phase !== 'Running' || pod.metadata?.deletionTimestamp) return;
    const key = keyOf(podKey(pod));
    if (this.prepared.has(key) || this.stopped) return;
    const setUp = this.prepare(pod);
    this.prepared.set(key, setUp);
    setUp.catch((error: unknown) => {
      this.onError(error);
      if (this.prepared.get(key) === setUp) this.prepared.delete(key);
      setTimeout(() => {
        const { namespace, name } = podKey(pod);
        const latest = this.pods.get(name, namespace);
        if (latest && !this.stopped) this.reconcile(latest);
      }, 1_000);
    });
  }

  private async prepare(pod: V1Pod): Promise<void> {
    const key = podKey(pod);
    const dir = sandboxDir(this.dir, key);
    await this.makeDirectories(pod, dir);
    const enter = entryPath(this.dir, key);
    await mkdir(join(this.dir, ENTRIES_DIR, key.namespace), { recursive: true, mode: 0o711 });
    // Root's, readable and runnable by the sandbox user, who must not change it.
    await writeFile(enter, entryScript(key, podEnvironment(pod, dir)), { mode: 0o755 });
    await chmod(enter, 0o755);
    const body = execRuleFor(pod, dir, enter);
    await this.custom
      .deleteNamespacedCustomObject({ ...EXECS, namespace: key.namespace, name: key.name })
      .catch(() => undefined);
    await this.custom.createNamespacedCustomObject({ ...EXECS, namespace: key.namespace, body });
    await this.custom
      .deleteNamespacedCustomObject({ ...USAGES, namespace: key.namespace, name: key.name })
      .catch(() => undefined);
    await this.custom.createNamespacedCustomObject({
      ...USAGES,
      namespace: key.namespace,
      body: resourceUsageFor(pod),
    });
    // kwok learns of the rule through its own watch; nothing announces when it has.
    const container = pod.spec?.containers[0]?.name ?? '';
    await waitFor(
      async () => {
        let out = '';
        const code = await this.exec.run(
          { namespace: key.namespace, pod: key.name, container },
          sandboxScript('printf %s "$R:$(id -u)"', []),
          { onStdout: (chunk) => (out += chunk.toString()), signal: AbortSignal.timeout(10_000) },
        );
        return code === 0 && out === `${dir}:${SANDBOX_UID}` ? true : undefined;
      },
      {
        what: `kwok to serve the sandbox exec of ${key.namespace}/${key.name}`,
        timeoutMs: 30_000,
        intervalMs: 200,
      },
    );
  }

  /**
   * The pod's `/` and its volume mounts below it, the sandbox user's as on a node (a mount of an
   * emptyDir is writable by all, 0777); folders between them are root's, like an image's.
   */
  private async makeDirectories(pod: V1Pod, dir: string): Promise<void> {
    await mkdir(join(this.dir, podKey(pod).namespace), { recursive: true, mode: 0o711 });
    await mkdir(dir, { recursive: true, mode: 0o755 });
    await chown(dir, SANDBOX_UID, SANDBOX_UID);
    for (const mount of mountDirs(pod, dir)) {
      await mkdir(mount, { recursive: true });
      await chown(mount, SANDBOX_UID, SANDBOX_UID);
      await chmod(mount, 0o777);
    }
  }

  /** Kills the pod's processes once, as the end of its container would. */
  private async end(pod: V1Pod): Promise<void> {
    const key = pod.metadata?.uid ?? keyOf(podKey(pod));
    if (this.ended.has(key)) return;
    this.ended.add(key);
    try {
      const mark = `${SANDBOX_ROOT_ENV}=${sandboxDir(this.dir, podKey(pod))}`;
      await killSandboxProcesses({ exact: mark }, SANDBOX_UID);
    } catch (error: unknown) {
      this.onError(error);
    }
  }

  private async forget(pod: V1Pod): Promise<void> {
    const key = podKey(pod);
    this.prepared.delete(keyOf(key));
    await this.end(pod);
    this.ended.delete(pod.metadata?.uid ?? keyOf(key));
    try {
      await rm(sandboxDir(this.dir, key), { recursive: true, force: true });
      await rm(entryPath(this.dir, key), { force: true });
    } catch (error: unknown) {
      this.onError(error);
    }
  }
}

function keyOf(pod: PodKey): string {
  return `${pod.namespace}/${pod.name}`;
}
