import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { ENGINE_UID_LABEL } from '../../../shared/resources.ts';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { storeError } from './store-errors.ts';
import { statusCode } from '../../../shared/watched-collection.ts';

/** How much of one container's log a read returns. */
export interface LogLimits {
  /** Only the newest lines, this many at most. */
  tailLines: number;
  /** At most this many bytes of those lines (the oldest of them first). */
  limitBytes: number;
}

/** A pod of an engine and the names of its containers, init containers first (as they ran). */
export interface EnginePod {
  name: string;
  containers: string[];
}

/** One container's log text, or why it could not be read. */
export type ContainerLog = { pod: string; container: string } & ({ text: string } | { error: string });

/** Where engine pods and their logs are read; the gateway's is {@link PodLogs}. */
export interface PodLogSource {
  /** The pods of the engine with this uid, in no particular order; none while it is stopped. */
  podsOf(engineUid: string): Promise<EnginePod[]>;
  /** One container's log within `limits`. */
  read(pod: string, container: string, limits: LogLimits): Promise<ContainerLog>;
}

/**
 * Engine pods' logs through the apiserver's pod log API
 * (`GET /api/v1/namespaces/{ns}/pods/{pod}/log?container=…`), which asks the node's kubelet:
 * the gateway needs only `list` on pods and `get` on pods/log in its namespace, and never
 * reaches nodes itself.
 */
export class PodLogs implements PodLogSource {
  private readonly core: CoreV1Api;
  private readonly namespace: string;

  constructor(kubeConfig: KubeConfig, namespace: string) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.namespace = namespace;
  }

  /** UNAVAILABLE when the cluster does not answer. */
  async podsOf(engineUid: string): Promise<EnginePod[]> {
    try {
      const list = await this.core.listNamespacedPod({
        namespace: this.namespace,
        labelSelector: `${ENGINE_UID_LABEL}=${engineUid}`,
      });
      return list.items.map(enginePod);
    } catch (error: unknown) {
      throw storeError(error, `pods of engine ${engineUid}`, 'list');
    }
  }

  /**
   * A container whose log the cluster refuses (not started yet, its node unreachable, the pod
   * gone) gives the reason instead of text; only a cluster that does not answer at all fails
   * the read, with UNAVAILABLE.
   */
  async read(pod: string, container: string, limits: LogLimits): Promise<ContainerLog> {
    try {
      const text = await this.core.readNamespacedPodLog({
        name: pod,
        namespace: this.namespace,
        container,
        tailLines: limits.tailLines,
        limitBytes: limits.limitBytes,
      });
      return { pod, container, text };
    } catch (error: unknown) {
      const status = statusCode(error);
      if (status === undefined || status === 429)
        throw new ApiError(Code.UNAVAILABLE, 'The cluster is unavailable; retry later', {
          reason: 'CLUSTER_UNAVAILABLE',
          cause: error,
        });
      return { pod, container, error: answerMessage(error, status) };
    }
  }
}

function enginePod(pod: V1Pod): EnginePod {
  const names = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name);
  return { name: pod.metadata?.name ?? '', containers: names };
}

/** The apiserver's own words for a refused call (a Status body's message). */
function answerMessage(error: unknown, status: number): string {
  const body = typeof error === 'object' && error !== null && 'body' in error ? error.body : undefined;
  try {
    const parsed = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: unknown } | undefined;
    if (typeof parsed?.message === 'string' && parsed.message !== '') return parsed.message;
  } catch {
    // Not a Status: the HTTP status below says what is known.
  }
  return `the cluster answered HTTP ${status}`;
}
