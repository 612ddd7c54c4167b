/**
 * What the operator tests share: a profile that fits the simulated nodes, and ways to await an
 * engine's state and find what the operator made for it.
 */
import {
  CoreV1Api,
  type KubeConfig,
  type KubernetesObject,
  type V1Lease,
  type V1Pod,
} from '@kubernetes/client-node';
import { ENGINE_UID_LABEL } from '../../shared/resources.ts';
import type { ApiServer, RestResponse } from '../helpers/api-server.ts';
import { watchUntil } from '../helpers/watch.ts';
import { LEASE } from '../charts/permissions.ts';

export const GIB = 1024 ** 3;

/** A numeric constraint in the API's JSON. */
export const numeric = (
  min: string,
  def: string,
  max: string | null = null,
): { min: string; default: string; max: string | null; cumulativeMax: null } => ({
  min,
  default: def,
  max,
  cumulativeMax: null,
});

/** The fields every kind of profile accepts, with room for a few engines per simulated node. */
export const PROFILE = {
  enabled: true,
  assignedOidcRolesEnabled: false,
  cpuConstraint: numeric('1', '1', '8'),
  gpuConstraint: numeric('0', '0', '4'),
  memoryBytesConstraint: numeric(String(GIB), String(2 * GIB)),
  storageBytesConstraint: numeric(String(GIB), String(2 * GIB), String(100 * GIB)),
  nodeCountConstraint: numeric('1', '1', '5'),
  maxIdleDurationConstraint: { min: '0s', default: '3600s' },
  maxRunningDurationConstraint: { min: '0s', default: '14400s' },
};

/** The JSON of a REST answer that must succeed. */
export async function ok(response: Promise<RestResponse>): Promise<Record<string, unknown>> {
  const r = await response;
  if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.json)}`);
  return r.json;
}

export type EngineObject = KubernetesObject & {
  status?: {
    state?: string;
    storageResizing?: boolean;
    conditions?: { type: string; status: string; reason: string; message?: string }[];
  };
};

/**
 * Resolves once the engine's reported state is `state` (watching, not polling), and reads so
 * through the API too.
 */
export async function reaches(
  api: ApiServer,
  where: { namespace: string; plural: string; name: string },
  state: string,
  timeoutMs = 60_000,
): Promise<EngineObject> {
  const engine = await watchUntil<EngineObject>(
    api.cluster.kubeConfig,
    `/apis/engine.h2o.ai/v1/namespaces/${where.namespace}/${where.plural}`,
    (event) => event.object.status?.state === state,
    { what: `${where.name} in ${state}`, query: { fieldSelector: `metadata.name=${where.name}` }, timeoutMs },
  );
  await api.sees(where.plural, engine);
  return engine;
}

/** The label selector of everything the operator made for an engine. */
export const ownedBy = (uid: string): string => `${ENGINE_UID_LABEL}=${uid}`;

/** The engine's pods that are not being deleted. */
export async function podsOf(kubeConfig: KubeConfig, namespace: string, uid: string): Promise<V1Pod[]> {
  const list = await kubeConfig
    .makeApiClient(CoreV1Api)
    .listNamespacedPod({ namespace, labelSelector: ownedBy(uid) });
  return list.items.filter((p) => p.metadata?.deletionTimestamp === undefined);
}

/** Resolves once the operator's leader-election Lease in `namespace` is held by `identity`. */
export const operatorLeaseHeldBy = (
  kubeConfig: KubeConfig,
  namespace: string,
  identity: string,
): Promise<V1Lease> =>
  watchUntil<V1Lease>(
    kubeConfig,
    `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
    (e) => e.object.metadata?.name === LEASE && e.object.spec?.holderIdentity === identity,
    { what: `the operator lease held by ${identity}`, timeoutMs: 30_000 },
  );
