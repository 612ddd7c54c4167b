/**
 * The uninstall hook's Kubernetes calls (an {@link UninstallPort} over client-node), in the
 * release namespace, with exactly the permissions the chart's hook Role grants: list, delete and
 * patch the four engine kinds, list pods. A separate process from the operator, under its own
 * short-lived ServiceAccount, so these calls are not the operator's (test/charts/permissions.ts).
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../../shared/resources.ts';
import { statusCode } from '../../../shared/watched-collection.ts';
import { ENGINE_PLURALS, FINALIZER, type EngineRef, type UninstallPort } from './engines.ts';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const PAGE = 500;

type Engine = KubernetesObject & { status?: { state?: string } };

/** Swallows the answers that mean "nothing to do": gone (404) or changed since it was read (409). */
async function unlessGoneOrChanged(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (error: unknown) {
    const code = statusCode(error);
    if (code !== 404 && code !== 409) throw error;
  }
}

/** The port over the cluster `kubeConfig` names, in `namespace`; `operatorSelector` selects the operator's pods. */
export function kubeUninstallPort(
  kubeConfig: KubeConfig,
  namespace: string,
  operatorSelector: string,
): UninstallPort {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const target = (plural: string): { group: string; version: string; namespace: string; plural: string } => ({
    group: GROUP,
    version: VERSION,
    namespace,
    plural,
  });

  async function listKind(plural: string): Promise<EngineRef[]> {
    const found: EngineRef[] = [];
    let page: string | undefined;
    do {
      let list: KubernetesListObject<Engine>;
      try {
        list = (await custom.listNamespacedCustomObject({
          ...target(plural),
          limit: PAGE,
          ...(page === undefined ? {} : { _continue: page }),
        })) as KubernetesListObject<Engine>;
      } catch (error: unknown) {
        // The kind's CRD is not served (never installed, or already deleted): no engines of it.
        if (statusCode(error) === 404) return [];
        throw error;
      }
      for (const item of list.items) found.push(refOf(plural, item));
      page = list.metadata?._continue || undefined;
    } while (page !== undefined);
    return found;
  }

  return {
    async listEngines() {
      return (await Promise.all(ENGINE_PLURALS.map(listKind))).flat();
    },
    async deleteEngine(engine) {
      await unlessGoneOrChanged(
        custom.deleteNamespacedCustomObject({ ...target(engine.plural), name: engine.name }),
      );
    },
    async releaseEngine(engine) {
      // A merge patch replaces the whole list; the resourceVersion makes it fail (409) rather
      // than drop a finalizer someone added since the engine was read.
      const body = {
        metadata: {
          finalizers: engine.finalizers.filter((f) => f !== FINALIZER),
          resourceVersion: engine.resourceVersion,
        },
      };
      await unlessGoneOrChanged(
        custom.patchNamespacedCustomObject({ ...target(engine.plural), name: engine.name, body }, mergePatch),
      );
    },
    async operatorPods() {
      const pods = await core.listNamespacedPod({ namespace, labelSelector: operatorSelector });
      return pods.items.map((pod) => pod.metadata?.name ?? '');
    },
  };
}

function refOf(plural: string, item: Engine): EngineRef {
  return {
    plural,
    name: item.metadata?.name ?? '',
    resourceVersion: item.metadata?.resourceVersion ?? '',
    finalizers: item.metadata?.finalizers ?? [],
    deleting: item.metadata?.deletionTimestamp !== undefined,
    state: item.status?.state,
  };
}
