/**
 * The operator: one controller per engine kind on the shared runtime. Each watches its engines
 * and the pods, StatefulSets and volume claims they own; an event on an owned object queues its
 * engine's key (read from the object's engine annotation).
 */
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { CustomObjectsApi, CoreV1Api, AppsV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { ENGINE_KIND_LABEL, GROUP, VERSION } from '../../shared/resources.ts';
import { ENGINE_ANNOTATION } from './desired/workload.ts';
import { daiEngineKind } from './kinds/dai-engine.ts';
import { h2oEngineKind } from './kinds/h2o-engine.ts';
import type { EngineKind, Settings } from './kinds/kind.ts';
import { notebookEngineKind } from './kinds/notebook-engine.ts';
import { KubeClient } from './kube/client.ts';
import { EngineReconciler } from './reconcile/reconciler.ts';
import { startController, type Controller, type Source } from './runtime/controller.ts';

export const ENGINE_KINDS: readonly EngineKind[] = [daiEngineKind, h2oEngineKind, notebookEngineKind];

export interface OperatorOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  settings: Settings;
  log: Logger;
  registry?: Registry;
  /** Reconciles running at once per kind. */
  workers?: number;
}

export interface Operator {
  registry: Registry;
  stop(): Promise<void>;
}

type List = () => Promise<KubernetesListObject<KubernetesObject>>;

const engineKey = (object: KubernetesObject): string | undefined =>
  object.metadata?.annotations?.[ENGINE_ANNOTATION];

/** The collections one kind's controller watches: its engines (For) and what they own (Owns). */
function sources(kubeConfig: KubeConfig, namespace: string, kind: EngineKind): Source[] {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const labelSelector = `${ENGINE_KIND_LABEL}=${kind.kind}`;
  return [
    {
      path: `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${kind.plural}`,
      list: (() =>
        custom.listNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace,
          plural: kind.plural,
        })) as List,
      keyOf: (o) => o.metadata?.name,
    },
    {
      path: `/api/v1/namespaces/${namespace}/pods`,
      list: () => core.listNamespacedPod({ namespace, labelSelector }),
      labelSelector,
      keyOf: engineKey,
    },
    {
      path: `/apis/apps/v1/namespaces/${namespace}/statefulsets`,
      list: () => apps.listNamespacedStatefulSet({ namespace, labelSelector }),
      labelSelector,
      keyOf: engineKey,
    },
    {
      path: `/api/v1/namespaces/${namespace}/persistentvolumeclaims`,
      list: () => core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector }),
      labelSelector,
      keyOf: engineKey,
    },
  ];
}

/** Starts the three engine controllers. */
export async function startOperator(options: OperatorOptions): Promise<Operator> {
  const registry = options.registry ?? new Registry();
  const { kubeConfig, namespace } = options;
  const kube = new KubeClient(kubeConfig, namespace);
  const controllers: Controller[] = [];
  for (const kind of ENGINE_KINDS) {
    const reconciler = new EngineReconciler({ kube, kind, settings: options.settings });
    controllers.push(
      await startController({
        name: kind.kind,
        kubeConfig,
        sources: sources(kubeConfig, namespace, kind),
        reconcile: (key) => reconciler.reconcile(key),
        log: options.log,
        registry,
        workers: options.workers ?? 4,
      }),
    );
  }
  return {
    registry,
    async stop(): Promise<void> {
      await Promise.all(controllers.map((c) => c.stop()));
    },
  };
}
