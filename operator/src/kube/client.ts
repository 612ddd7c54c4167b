/**
 * The operator's only door to the Kubernetes API: typed calls that return what they read or
 * throw. "Not found" is recognised here, once.
 */
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../../shared/resources.ts';
import { outputFields } from '../../../shared/recorded.ts';
import type { EngineResource } from '../kinds/kind.ts';

/** Every object the operator writes is applied by this one field manager. */
export const FIELD_MANAGER = 'ai-engine-manager-operator';
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** The HTTP status of a failed Kubernetes call, if it has one. */
export function statusCode(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'number'
    ? error.code
    : undefined;
}

async function unlessNotFound<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error: unknown) {
    if (statusCode(error) === 404) return undefined;
    throw error;
  }
}

export class KubeClient {
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly apps: AppsV1Api;
  private readonly objects: KubernetesObjectApi;
  readonly namespace: string;

  constructor(kubeConfig: KubeConfig, namespace: string) {
    this.namespace = namespace;
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.apps = kubeConfig.makeApiClient(AppsV1Api);
    this.objects = KubernetesObjectApi.makeApiClient(kubeConfig);
  }

  private engineTarget(
    plural: string,
    name: string,
  ): {
    group: string;
    version: string;
    namespace: string;
    plural: string;
    name: string;
  } {
    return { group: GROUP, version: VERSION, namespace: this.namespace, plural, name };
  }

  /** The engine, its status read over the fields the API recorded at creation (shared/recorded.ts). */
  async getEngine(plural: string, name: string): Promise<EngineResource | undefined> {
    const engine = (await unlessNotFound(
      this.custom.getNamespacedCustomObject(this.engineTarget(plural, name)),
    )) as EngineResource | undefined;
    return engine === undefined
      ? undefined
      : { ...engine, status: outputFields(engine), storedStatus: engine.status ?? {} };
  }

  /** A JSON merge patch of an engine's metadata or spec (with resourceVersion: fails on a race). */
  async patchEngine(plural: string, name: string, body: object): Promise<void> {
    await this.custom.patchNamespacedCustomObject({ ...this.engineTarget(plural, name), body }, mergePatch);
  }

  async patchEngineStatus(plural: string, name: string, status: object): Promise<void> {
    await this.custom.patchNamespacedCustomObjectStatus(
      { ...this.engineTarget(plural, name), body: { status } },
      mergePatch,
    );
  }

  /** Server-side apply, forcing ownership of the fields the operator sets. */
  async apply(object: KubernetesObject): Promise<void> {
    await this.objects.patch(
      object,
      undefined,
      undefined,
      FIELD_MANAGER,
      true,
      PatchStrategy.ServerSideApply,
    );
  }

  readStatefulSet(name: string): Promise<V1StatefulSet | undefined> {
    return unlessNotFound(this.apps.readNamespacedStatefulSet({ name, namespace: this.namespace }));
  }

  async pods(labelSelector: string): Promise<V1Pod[]> {
    return (await this.core.listNamespacedPod({ namespace: this.namespace, labelSelector })).items;
  }

  async claims(labelSelector: string): Promise<V1PersistentVolumeClaim[]> {
    return (await this.core.listNamespacedPersistentVolumeClaim({ namespace: this.namespace, labelSelector }))
      .items;
  }

  async growClaim(name: string, bytes: bigint): Promise<void> {
    await this.core.patchNamespacedPersistentVolumeClaim(
      {
        name,
        namespace: this.namespace,
        body: { spec: { resources: { requests: { storage: bytes.toString() } } } },
      },
      mergePatch,
    );
  }

  async deletePod(name: string): Promise<void> {
    await unlessNotFound(this.core.deleteNamespacedPod({ name, namespace: this.namespace }));
  }

  /** Deletes the engine's workloads by name; what is already gone is fine. */
  async deleteWorkloads(name: string): Promise<void> {
    const namespace = this.namespace;
    await unlessNotFound(
      this.apps.deleteNamespacedStatefulSet({ name, namespace, propagationPolicy: 'Background' }),
    );
    await unlessNotFound(this.core.deleteNamespacedService({ name, namespace }));
    await unlessNotFound(this.core.deleteNamespacedConfigMap({ name, namespace }));
  }

  async deleteClaim(name: string): Promise<void> {
    await unlessNotFound(
      this.core.deleteNamespacedPersistentVolumeClaim({ name, namespace: this.namespace }),
    );
  }
}
