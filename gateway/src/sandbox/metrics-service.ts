/**
 * ai.h2o.engine.v1.MetricsService: the resource usage of a running sandbox engine. CPU and memory
 * come from the `metrics.k8s.io` PodMetrics of its pod (metrics-server: the same figures as
 * `kubectl top`, sampled every metrics-server resolution), disk from `df` in its container
 * (pods/exec). Limits come from the engine's template snapshot, so they are what the pod got.
 */
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { CallContext, Handlers } from '../call/handler.ts';
import { serviceHandlers } from '../call/service-impl.ts';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import type { SandboxEngine } from '../gen/ai/h2o/engine/v1/sandbox_engine.pb.ts';
import {
  MetricsServiceService,
  type ReadMetricsRequest,
  type ReadMetricsResponse,
} from '../gen/ai/h2o/engine/v1/metrics_service.pb.ts';
import { cpuCapacityCores, metricsOf, missingParts, parseDf, sampleOf } from './metrics.ts';
import type { Collected, DiskUsage } from './metrics.ts';
import type { PodMetricsObject, UsageSample } from './metrics.ts';
import { sandboxScript, type PodExec } from './pod-exec.ts';
import { sandboxPath } from './sandbox-path.ts';
import type { ReachSandbox, SandboxTarget } from './target.ts';

/** How long the disk measurement may take before it counts as missing. */
const DF_TIMEOUT_MS = 15_000;

/** Where CPU and memory samples and node capacities come from. */
export interface UsageSource {
  /** The latest sample of a pod's container; undefined when the metrics API has none. */
  sample(target: SandboxTarget): Promise<UsageSample | undefined>;
  /** The allocatable CPU cores of the pod's node; undefined when unknown. */
  nodeCores(target: SandboxTarget): Promise<number | undefined>;
}

/** What the MetricsService needs. */
export interface MetricsDeps {
  /** Checks the call (permission, owner, running): the engine and where it runs. */
  reach: ReachSandbox;
  exec: PodExec;
  usage: UsageSource;
  now?: () => Date;
}

/** `df` on the sandbox path `$1`: POSIX output in KiB. */
const DISK_FREE = 'exec df -Pk "$R$1"';

/** The RPC of MetricsService. */
export function metricsService(deps: MetricsDeps): Handlers {
  return serviceHandlers(MetricsServiceService, {
    readMetrics: (request, context) => readMetrics(deps, request, context),
  });
}

async function readMetrics(
  deps: MetricsDeps,
  request: ReadMetricsRequest,
  context: CallContext,
): Promise<ReadMetricsResponse> {
  // 1.4.0 clients may name the filesystem to measure; it is confined to the sandbox like file paths.
  const diskPath = request.diskPath === '' ? '/' : sandboxPath('disk_path', request.diskPath);
  const { engine, target } = await deps.reach(request.name, context);
  const collected = await collect(deps, target, engine, diskPath);
  const missing = missingParts(collected);
  if (request.strictMode && missing.length > 0) {
    throw new ApiError(
      Code.UNAVAILABLE,
      `Cannot collect every metric of "${request.name}": missing ${missing.join('; ')}. Try again shortly, or read without strict mode to get zeros for what is missing`,
      { reason: 'METRICS_UNAVAILABLE' },
    );
  }
  return { metrics: metricsOf(collected) };
}

/** The usage sample, disk usage and limits of a sandbox, each undefined when it cannot be had. */
async function collect(
  deps: MetricsDeps,
  target: SandboxTarget,
  engine: SandboxEngine,
  diskPath: string,
): Promise<Collected> {
  const template = engine.sandboxEngineTemplateInfo;
  const milliCpuLimit = template?.milliCpuLimit ?? 0;
  const [sample, disk, nodeCores] = await Promise.all([
    deps.usage.sample(target).catch(() => undefined),
    diskUsage(deps.exec, target, diskPath),
    milliCpuLimit > 0 ? undefined : deps.usage.nodeCores(target).catch(() => undefined),
  ]);
  return {
    sample,
    disk,
    capacityCores: cpuCapacityCores(milliCpuLimit, nodeCores),
    memoryLimitBytes: template?.memoryBytesLimit ?? '',
    now: deps.now?.() ?? new Date(),
  };
}

/** Size and free space of the filesystem holding `path` in the sandbox; undefined when `df` fails. */
async function diskUsage(exec: PodExec, target: SandboxTarget, path: string): Promise<DiskUsage | undefined> {
  let stdout = '';
  try {
    const code = await exec.run(target, sandboxScript(DISK_FREE, [path]), {
      onStdout: (chunk) => (stdout += chunk.toString()),
      signal: AbortSignal.timeout(DF_TIMEOUT_MS),
    });
    return code === 0 ? parseDf(stdout) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * {@link UsageSource} of the Kubernetes API: PodMetrics of `metrics.k8s.io/v1beta1` (the gateway
 * needs `get` on `pods` of that group).
 */
export class KubeUsageSource implements UsageSource {
  private readonly custom: CustomObjectsApi;

  constructor(kubeConfig: KubeConfig) {
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  async sample(target: SandboxTarget): Promise<UsageSample | undefined> {
    const podMetrics = (await this.custom.getNamespacedCustomObject({
      group: 'metrics.k8s.io',
      version: 'v1beta1',
      namespace: target.namespace,
      plural: 'pods',
      name: target.pod,
    })) as PodMetricsObject;
    return sampleOf(podMetrics, target.container);
  }

  /**
   * Unknown: a node's allocatable CPU needs `get` on nodes, a cluster-wide grant the chart
   * deliberately does not give the gateway (it has a namespaced Role only). Templates without a
   * CPU limit therefore report a ratio of 0, and strict mode names the missing capacity.
   */
  nodeCores(): Promise<number | undefined> {
    return Promise.resolve(undefined);
  }
}
