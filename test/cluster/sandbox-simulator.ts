/**
 * A stand-in for a sandbox container's runtime: kwok runs no containers, but it serves
 * `pods/exec` by running the command on this host (kwok's `Exec` custom resource). For every pod
 * labelled as a sandbox engine's, this simulator makes a directory of its own under the cluster's
 * run folder and an `Exec` named after the pod that runs commands there as uid/gid 65534, with
 * `AIEM_SANDBOX_ROOT` naming that directory: the gateway's sandbox scripts prefix every path with
 * it (gateway/src/sandbox/pod-exec.ts). The directory goes when the pod does. It also gives the
 * pod a kwok `ResourceUsage`: a constant simulated usage ({@link SIMULATED_SANDBOX_USAGE}) that
 * kwok reports as the container's resource metrics, which metrics-server serves when the cluster
 * runs it (metrics-server.ts).
 *
 * Warning: the command runs on the host with kwok's rights and environment. The root prefix and
 * the unprivileged user are what keep it inside the directory; never make an Exec without both.
 */
import { chmod, chown, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  makeInformer,
  type Informer,
  type KubeConfig,
  type ObjectCache,
  type V1Pod,
} from '@kubernetes/client-node';
import { ENGINE_KIND_LABEL } from '../../shared/resources.ts';
import { PodExec, sandboxScript } from '../../gateway/src/sandbox/pod-exec.ts';
import { waitFor } from './wait.ts';

/** The label value that marks a sandbox engine's pods. */
export const SANDBOX_KIND = 'SandboxEngine';
/** The unprivileged user and group that sandbox commands run as on the host ("nobody"). */
export const SANDBOX_UID = 65534;
/** The environment variable that names a sandbox's root directory on the host. */
export const SANDBOX_ROOT_ENV = 'AIEM_SANDBOX_ROOT';

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

/** Whether `pod` belongs to a sandbox engine. */
export function isSandboxPod(pod: V1Pod): boolean {
  return pod.metadata?.labels?.[ENGINE_KIND_LABEL] === SANDBOX_KIND;
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

/**
 * The kwok `Exec` that runs every container's commands in `dir`, as {@link SANDBOX_UID}, with
 * {@link SANDBOX_ROOT_ENV} set to `dir`. It is owned by the pod, so it goes with it.
 *
 * @throws Error when `dir` is not an absolute directory below `/`: without a root, commands
 *   would act on the host's own files
 */
export function execRuleFor(pod: V1Pod, dir: string): Record<string, unknown> {
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
            envs: [{ name: SANDBOX_ROOT_ENV, value: dir }],
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
    this.pods.on('error', (error) => {
      if (this.stopped) return;
      this.onError(error);
      setTimeout(() => {
        this.pods.start().catch(this.onError);
      }, 1_000);
    });
    await this.pods.start();
  }

  /** Stops watching; the directories stay until the run folder goes. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.pods.stop();
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
    await mkdir(join(this.dir, key.namespace), { recursive: true, mode: 0o711 });
    await mkdir(dir, { recursive: true, mode: 0o755 });
    await chown(dir, SANDBOX_UID, SANDBOX_UID);
    const body = execRuleFor(pod, dir);
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

  private async forget(pod: V1Pod): Promise<void> {
    const key = podKey(pod);
    this.prepared.delete(keyOf(key));
    try {
      await rm(sandboxDir(this.dir, key), { recursive: true, force: true });
    } catch (error: unknown) {
      this.onError(error);
    }
  }
}

function keyOf(pod: PodKey): string {
  return `${pod.namespace}/${pod.name}`;
}
