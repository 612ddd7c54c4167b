import {
  CoreV1Api,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  StorageV1Api,
  type Informer,
  type KubernetesObject,
  type KubeConfig,
  type ObjectCache,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1StorageClass,
} from '@kubernetes/client-node';
import { parseStorageQuantity } from '../../shared/quantity.ts';

/** The simulated storage class: the cluster default, expandable, provisioned by this module. */
export const STORAGE_CLASS_NAME = 'standard';
export const PROVISIONER = 'storage.simulated.ai-engine-manager.io';
const PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';

/** The StorageClass that the simulator serves. */
export function simulatedStorageClass(name = STORAGE_CLASS_NAME): V1StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: PROVISIONER,
    allowVolumeExpansion: true,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
  };
}

/**
 * The PersistentVolume to provision for `pvc`, or `undefined` when the claim is not ours to
 * serve or already has a volume. The volume is pre-bound to the claim through `claimRef`, as an
 * external provisioner does; Kubernetes' own PV controller completes the binding.
 */
export function volumeFor(pvc: V1PersistentVolumeClaim, className: string): V1PersistentVolume | undefined {
  const { metadata = {}, spec = {} } = pvc;
  const request = storageOf(spec.resources?.requests);
  if (spec.storageClassName !== className || spec.volumeName || metadata.deletionTimestamp) return undefined;
  if (metadata.uid === undefined || request === undefined) return undefined;
  const name = `pvc-${metadata.uid}`;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { [PROVISIONED_BY]: PROVISIONER } },
    spec: {
      capacity: { storage: request },
      accessModes: spec.accessModes,
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: className,
      volumeMode: spec.volumeMode,
      claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...claimKey(pvc), uid: metadata.uid },
      csi: { driver: PROVISIONER, volumeHandle: name },
    },
  };
}

/** The size a bound claim of `className` asks to grow to, or `undefined` when none is pending. */
export function pendingExpansion(pvc: V1PersistentVolumeClaim, className: string): bigint | undefined {
  const { spec = {}, status = {} } = pvc;
  const request = storageOf(spec.resources?.requests);
  const capacity = storageOf(status.capacity);
  if (spec.storageClassName !== className || status.phase !== 'Bound') return undefined;
  if (request === undefined || capacity === undefined) return undefined;
  const wanted = parseStorageQuantity(request);
  return wanted > parseStorageQuantity(capacity) ? wanted : undefined;
}

function storageOf(resources: Record<string, string> | undefined): string | undefined {
  return resources?.['storage'];
}

/** The namespace and name of a claim, for API calls. */
function claimKey(pvc: V1PersistentVolumeClaim): { namespace: string; name: string } {
  return { namespace: pvc.metadata?.namespace ?? 'default', name: pvc.metadata?.name ?? '' };
}

/** Whether `pv` is a released volume of ours that must now be deleted (reclaim policy Delete). */
export function isReclaimable(pv: V1PersistentVolume): boolean {
  return (
    pv.metadata?.annotations?.[PROVISIONED_BY] === PROVISIONER &&
    pv.spec?.persistentVolumeReclaimPolicy === 'Delete' &&
    (pv.status?.phase === 'Released' || pv.status?.phase === 'Failed') &&
    !pv.metadata.deletionTimestamp
  );
}

/** Options of the {@link StorageSimulator}. */
export interface StorageSimulatorOptions {
  storageClassName?: string;
  /** How long a volume expansion takes, from the request to the grown capacity. */
  resizeDelayMs?: number;
  /** Called with errors that the simulator retried or gave up on, for the harness's log. */
  onError?: (error: unknown) => void;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/**
 * A stand-in for a CSI driver's external provisioner and resizer: it creates a PV for every
 * PVC of its class, deletes released PVs, and after `resizeDelayMs` grows the PV and the PVC's
 * status capacity when a claim asks for more. Its decisions are the pure functions above.
 */
export class StorageSimulator {
  readonly storageClassName: string;
  readonly resizeDelayMs: number;
  private readonly core: CoreV1Api;
  private readonly storage: StorageV1Api;
  private readonly claims: Informer<V1PersistentVolumeClaim> & ObjectCache<V1PersistentVolumeClaim>;
  private readonly volumes: Informer<V1PersistentVolume> & ObjectCache<V1PersistentVolume>;
  private readonly resizing = new Map<string, NodeJS.Timeout>();
  private readonly onError: (error: unknown) => void;
  private stopped = false;

  constructor(kubeConfig: KubeConfig, options: StorageSimulatorOptions = {}) {
    this.storageClassName = options.storageClassName ?? STORAGE_CLASS_NAME;
    this.resizeDelayMs = options.resizeDelayMs ?? 2_000;
    this.onError = options.onError ?? (() => undefined);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.storage = kubeConfig.makeApiClient(StorageV1Api);
    this.claims = makeInformer(kubeConfig, '/api/v1/persistentvolumeclaims', () =>
      this.core.listPersistentVolumeClaimForAllNamespaces(),
    );
    this.volumes = makeInformer(kubeConfig, '/api/v1/persistentvolumes', () =>
      this.core.listPersistentVolume(),
    );
  }

  /** Creates the StorageClass (if missing) and starts watching claims and volumes. */
  async start(): Promise<void> {
    try {
      await this.storage.createStorageClass({ body: simulatedStorageClass(this.storageClassName) });
    } catch (error: unknown) {
      if (!isConflict(error)) throw error;
    }
    const onClaim = (pvc: V1PersistentVolumeClaim): void => void this.reconcileClaim(pvc);
    const onVolume = (pv: V1PersistentVolume): void => void this.reconcileVolume(pv);
    this.claims.on('add', onClaim);
    this.claims.on('update', onClaim);
    this.volumes.on('add', onVolume);
    this.volumes.on('update', onVolume);
    this.restartOnError(this.claims);
    this.restartOnError(this.volumes);
    await Promise.all([this.claims.start(), this.volumes.start()]);
  }

  /** An informer stops on a watch error; start it again a moment later. */
  private restartOnError<T extends KubernetesObject>(informer: Informer<T>): void {
    informer.on('error', (error) => {
      if (this.stopped) return;
      this.onError(error);
      setTimeout(() => {
        informer.start().catch(this.onError);
      }, 1_000);
    });
  }

  /** Stops watching and cancels expansions in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.resizing.values()) clearTimeout(timer);
    this.resizing.clear();
    await Promise.all([this.claims.stop(), this.volumes.stop()]);
  }

  private async reconcileClaim(pvc: V1PersistentVolumeClaim): Promise<void> {
    try {
      const volume = volumeFor(pvc, this.storageClassName);
      if (volume) {
        await this.core.createPersistentVolume({ body: volume }).catch((error: unknown) => {
          if (!isConflict(error)) throw error;
        });
        return;
      }
      const size = pendingExpansion(pvc, this.storageClassName);
      if (size !== undefined) await this.beginExpansion(pvc, size);
    } catch (error: unknown) {
      this.onError(error);
      this.retryLater(pvc);
    }
  }

  private async reconcileVolume(pv: V1PersistentVolume): Promise<void> {
    if (!isReclaimable(pv) || pv.metadata?.name === undefined) return;
    try {
      await this.core.deletePersistentVolume({ name: pv.metadata.name });
    } catch (error: unknown) {
      if (!isNotFound(error)) this.onError(error);
    }
  }

  /** Marks the claim as resizing now and completes the expansion after the configured delay. */
  private async beginExpansion(pvc: V1PersistentVolumeClaim, size: bigint): Promise<void> {
    const key = `${pvc.metadata?.uid}/${size}`;
    if (this.resizing.has(key) || this.stopped) return;
    this.resizing.set(
      key,
      setTimeout(() => void this.finishExpansion(pvc, size, key), this.resizeDelayMs),
    );
    await this.core.patchNamespacedPersistentVolumeClaimStatus(
      {
        ...claimKey(pvc),
        body: {
          status: {
            allocatedResources: { storage: String(size) },
            allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' },
            conditions: [{ type: 'Resizing', status: 'True', lastTransitionTime: new Date() }],
          },
        },
      },
      mergePatch,
    );
  }

  private async finishExpansion(pvc: V1PersistentVolumeClaim, size: bigint, key: string): Promise<void> {
    try {
      const volumeName = pvc.spec?.volumeName;
      if (volumeName) {
        await this.core.patchPersistentVolume(
          { name: volumeName, body: { spec: { capacity: { storage: String(size) } } } },
          mergePatch,
        );
      }
      await this.core.patchNamespacedPersistentVolumeClaimStatus(
        {
          ...claimKey(pvc),
          body: {
            status: {
              capacity: { storage: String(size) },
              allocatedResourceStatuses: null,
              conditions: null,
            },
          },
        },
        mergePatch,
      );
      this.resizing.delete(key);
    } catch (error: unknown) {
      this.onError(error);
      this.resizing.delete(key);
      this.retryLater(pvc);
    }
  }

  /** Reconciles the claim again from the cache's latest copy, when a step failed. */
  private retryLater(pvc: V1PersistentVolumeClaim): void {
    if (this.stopped) return;
    setTimeout(() => {
      const { name, namespace } = claimKey(pvc);
      const latest = this.claims.get(name, namespace);
      if (latest && !this.stopped) void this.reconcileClaim(latest);
    }, 1_000);
  }
}

function statusCode(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'number'
    ? error.code
    : undefined;
}

function isConflict(error: unknown): boolean {
  return statusCode(error) === 409;
}

function isNotFound(error: unknown): boolean {
  return statusCode(error) === 404;
}
