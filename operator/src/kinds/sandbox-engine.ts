/**
 * Sandbox engines: one pod running an administrator's image, sized and limited by a template,
 * in which users run their own code through the API (processes and files go through the
 * apiserver's exec, never through a port of the engine). Users' code is untrusted: the pod
 * runs as a non-root user on a read-only root with no capabilities, writes only to its scratch
 * volumes, and runs under the installation's hard-isolation runtime when one is configured.
 * Terminate is final; the kind has no port and is ready once its container runs.
 */
import type { V1Pod, V1ResourceRequirements } from '@kubernetes/client-node';
import { podPending, type Pending } from '../observe/pending.ts';
import { RESOURCE_KINDS } from '../../../shared/resources.ts';
import { SANDBOX_CONTAINER, SANDBOX_PREFIX } from '../../../shared/workloads.ts';
import type { Int64, SandboxEngineTemplateInfo } from '../gen/resources.ts';
import { decimalText, type EngineKind, type EngineResource, type Isolation } from './kind.ts';

/** Where users keep their work, their home, and temporary files: the pod's only writable places. */
export const SANDBOX_MOUNTS = { workspace: '/workspace', home: '/home/sandbox', tmp: '/tmp' } as const;
/** The user sandbox code runs as: not root, whatever the image says. */
export const SANDBOX_UID = 1000;

/** The snapshot of the template the sandbox was created from; empty until written. */
function template(engine: EngineResource<'SandboxEngine'>): SandboxEngineTemplateInfo {
  return engine.status?.sandboxEngineTemplateInfo ?? {};
}

function text(value: Int64 | undefined): string {
  return decimalText(value) ?? '';
}

function amount(value: Int64 | undefined): number {
  const parsed = Number(text(value));
  return Number.isFinite(parsed) ? parsed : 0;
}

/** Requests and limits from the template: a CPU limit of 0 is none, unset requests equal the limits. */
export function sandboxResources(info: SandboxEngineTemplateInfo): V1ResourceRequirements {
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  const memoryLimit = text(info.memoryBytesLimit);
  const memoryRequest = amount(info.memoryBytesRequest) > 0 ? text(info.memoryBytesRequest) : memoryLimit;
  if (amount(memoryLimit) > 0) limits['memory'] = memoryLimit;
  if (amount(memoryRequest) > 0) requests['memory'] = memoryRequest;
  const cpuLimit = amount(info.milliCpuLimit);
  const cpuRequest = amount(info.milliCpuRequest) || cpuLimit;
  if (cpuLimit > 0) limits['cpu'] = `${cpuLimit}m`;
  if (cpuRequest > 0) requests['cpu'] = `${cpuRequest}m`;
  return withGpu({ requests, limits }, info);
}

/** GPUs are requested as much as they are limited, under the template's resource name. */
function withGpu(
  resources: { requests: Record<string, string>; limits: Record<string, string> },
  info: SandboxEngineTemplateInfo,
): V1ResourceRequirements {
  const gpu = amount(info.gpu);
  if (gpu <= 0) return resources;
  const resource = info.gpuResource || 'nvidia.com/gpu';
  return {
    requests: { ...resources.requests, [resource]: String(gpu) },
    limits: { ...resources.limits, [resource]: String(gpu) },
  };
}

/** Non-root, read-only root, no capabilities; writable scratch volumes, the workspace sized by the template. */
function isolation(engine: EngineResource<'SandboxEngine'>, runtimeClassName: string | undefined): Isolation {
  const storage = text(template(engine).storageBytes);
  const workspaceLimit = storage !== '' && storage !== '0' ? { sizeLimit: storage } : {};
  return {
    securityContext: {
      runAsNonRoot: true,
      runAsUser: SANDBOX_UID,
      runAsGroup: SANDBOX_UID,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    },
    runtimeClassName,
    volumes: [
      { name: 'workspace', emptyDir: workspaceLimit },
      { name: 'home', emptyDir: {} },
      { name: 'tmp', emptyDir: {} },
    ],
    volumeMounts: [
      { name: 'workspace', mountPath: SANDBOX_MOUNTS.workspace },
      { name: 'home', mountPath: SANDBOX_MOUNTS.home },
      { name: 'tmp', mountPath: SANDBOX_MOUNTS.tmp },
    ],
  };
}

/** Why a starting sandbox is not running yet, read from its pod as Kubernetes reports it. */
export function pendingOf(pod: V1Pod | undefined): Pending {
  return podPending(pod);
}

const STOPPING = ['STATE_TERMINATING', 'STATE_DELETING'];

/** `pendingReason` and `pendingMessage` for a state: set while starting or stopping, empty otherwise. */
export function sandboxPendingStatus(state: string, pods: readonly V1Pod[]): Record<string, string> {
  if (state === 'STATE_STARTING') {
    const [reason, message] = pendingOf(pods[0]);
    return { pendingReason: reason, pendingMessage: message };
  }
  if (STOPPING.includes(state))
    return {
      pendingReason: 'PENDING_REASON_DELETING_RESOURCES',
      pendingMessage: 'The engine pod is being stopped',
    };
  return { pendingReason: 'PENDING_REASON_UNSPECIFIED', pendingMessage: '' };
}

export const sandboxEngineKind: EngineKind<'SandboxEngine'> = {
  kind: 'SandboxEngine',
  plural: RESOURCE_KINDS.SandboxEngine.plural,
  collection: RESOURCE_KINDS.SandboxEngine.collection,
  prefix: SANDBOX_PREFIX,
  container: SANDBOX_CONTAINER,
  snapshots: (engine) => ({
    profile: engine.status?.sandboxEngineTemplateInfo,
    version: engine.status?.sandboxEngineImageInfo,
  }),
  stopIntent: 'terminated',
  stopStates: { stopping: 'STATE_TERMINATING', stopped: 'STATE_TERMINATED' },
  hasConnectingState: false,
  runningReplicas: () => 1,
  env: (engine) => {
    const variables = Object.entries(template(engine).environmentalVariables ?? {});
    return [
      { name: 'HOME', value: SANDBOX_MOUNTS.home },
      ...variables.map(([name, value]) => ({ name, value })),
    ];
  },
  // Sandboxes are used through the API (processes, files, ports), not at an address of their own.
  urls: () => ({}),
  // Public ports: an Ingress per port routes to the pod (gateway/src/sandbox/port-service.ts).
  publishesPorts: true,
  sizing: (engine) => {
    const info = template(engine);
    return {
      resources: sandboxResources(info),
      gpu: amount(info.gpu),
      yamlPodTemplateSpec: info.yamlPodTemplateSpec ?? '',
      yamlGpuTolerations: '',
      maxIdleDuration: info.maxIdleDuration,
      maxRunningDuration: info.maxRunningDuration,
    };
  },
  isolation: (engine, settings) => isolation(engine, settings.sandboxRuntimeClassName),
  pendingStatus: sandboxPendingStatus,
};
