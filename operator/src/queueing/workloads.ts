/**
 * Kueue's Workloads in the engines' namespace, watched: Kueue makes one per queued StatefulSet
 * (owned by it, named from it) and says there whether the engine's pods wait for quota and why
 * (`QuotaReserved`), were admitted, or were evicted to make room for another engine (`Evicted`
 * with reason `Preempted`). Only what a reconcile reads is kept; a change queues the StatefulSet's
 * engine.
 */
import { CustomObjectsApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { GroupIndex } from '../../../shared/group-index.ts';
import {
  WatchedCollection,
  type CollectionOptions,
  type ListPage,
} from '../../../shared/watched-collection.ts';
import { KUEUE_GROUP, KUEUE_VERSION } from './kueue-objects.ts';

/** The label Kueue puts on a StatefulSet's Workload: the set's uid. */
export const JOB_UID_LABEL = 'kueue.x-k8s.io/job-uid';
/** The annotation Kueue puts on a StatefulSet's Workload: the set's name. */
export const JOB_OWNER_NAME_ANNOTATION = 'kueue.x-k8s.io/job-owner-name';

/** A condition of a Workload, as kept. */
export interface WorkloadCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** What the operator keeps of a Workload. */
export interface WorkloadView {
  name: string;
  /** The uid of the StatefulSet it stands for. */
  setUid: string | undefined;
  /** The name of the StatefulSet it stands for. */
  setName: string | undefined;
  deleting: boolean;
  conditions: WorkloadCondition[];
}

interface WorkloadObject extends KubernetesObject {
  status?: { conditions?: WorkloadCondition[] };
}

/** The part of a Workload a reconcile reads. Pure. */
export function workloadView(object: WorkloadObject): WorkloadView {
  const metadata = object.metadata ?? {};
  const owner = metadata.ownerReferences?.find((o) => o.kind === 'StatefulSet')?.name;
  return {
    name: metadata.name ?? '',
    setUid: metadata.labels?.[JOB_UID_LABEL],
    setName: metadata.annotations?.[JOB_OWNER_NAME_ANNOTATION] ?? owner,
    deleting: metadata.deletionTimestamp !== undefined,
    conditions: (object.status?.conditions ?? []).map(
      ({ type, status, reason, message, lastTransitionTime }) => ({
        type,
        status,
        ...(reason === undefined ? {} : { reason }),
        ...(message === undefined ? {} : { message }),
        ...(lastTransitionTime === undefined ? {} : { lastTransitionTime }),
      }),
    ),
  };
}

export class Workloads {
  private readonly collection: WatchedCollection<WorkloadView>;
  private readonly bySet = new GroupIndex<WorkloadView>();

  constructor(
    options: {
      kubeConfig: KubeConfig;
      namespace: string;
      log: Logger;
      takeTurn?: CollectionOptions<unknown>['takeTurn'];
    },
    /** Hears that the Workload of the StatefulSet of that name changed. */
    changed: (setName: string) => void,
  ) {
    const { kubeConfig, namespace } = options;
    const api = kubeConfig.makeApiClient(CustomObjectsApi);
    const plural = 'workloads';
    this.collection = new WatchedCollection<WorkloadView>({
      kubeConfig,
      path: `/apis/${KUEUE_GROUP}/${KUEUE_VERSION}/namespaces/${namespace}/${plural}`,
      labelSelector: JOB_UID_LABEL,
      listPage: (limit: number, token: string | undefined) =>
        api.listNamespacedCustomObject({
          group: KUEUE_GROUP,
          version: KUEUE_VERSION,
          namespace,
          plural,
          labelSelector: JOB_UID_LABEL,
          limit,
          ...(token === undefined ? {} : { _continue: token }),
        }) as Promise<ListPage>,
      // The apiserver's Workloads, which Kueue's CRD schema checked.
      keep: (object) => workloadView(object),
      onChange: (name, before, after) => {
        this.bySet.update(name, before, after, (w) => w.setUid);
        const setName = (after ?? before)?.setName;
        if (setName !== undefined) changed(setName);
      },
      log: options.log,
      what: 'Workload',
      ...(options.takeTurn === undefined ? {} : { takeTurn: options.takeTurn }),
    });
  }

  start(): Promise<void> {
    return this.collection.start();
  }

  stop(): Promise<void> {
    return this.collection.stop();
  }

  get size(): number {
    return this.collection.size;
  }

  /** The Workload of that name. */
  named(name: string): WorkloadView | undefined {
    return this.collection.get(name);
  }

  /** The Workload of the StatefulSet with that uid (the one not being deleted, if several). */
  of(setUid: string): WorkloadView | undefined {
    let found: WorkloadView | undefined;
    for (const workload of this.bySet.of(setUid)) if (found === undefined || found.deleting) found = workload;
    return found;
  }
}
