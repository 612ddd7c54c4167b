/**
 * Where an engine's server answers: the ready addresses of its Service, from a watch-fed copy of
 * the namespace's EndpointSlices of engines (the slices carry their Service's labels, the
 * engine's uid among them). A pod address is reached directly: the headless Services of DAI and
 * notebook engines have no ClusterIP, and for H2O the `<set>-api` Service's slice lists only
 * ready pods, i.e. the cloud's leader, exactly what its ClusterIP would route to.
 */
import {
  DiscoveryV1Api,
  type KubeConfig,
  type KubernetesObject,
  type V1EndpointSlice,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { ENGINE_UID_LABEL } from '../../../shared/resources.ts';
import { WatchedCollection } from '../../../shared/watched-collection.ts';

/** The Service a slice belongs to (set by the EndpointSlice controller). */
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** A host and port to connect to. */
export interface Target {
  host: string;
  port: number;
}

/** What is kept of one EndpointSlice. */
interface Slice {
  service: string;
  engineUid: string;
  port: number | undefined;
  /** Addresses of endpoints that are ready (and not terminating). */
  ready: string[];
}

/** What is kept of a slice: its Service, engine and ready addresses; nothing for other slices. */
export function sliceEntry(object: KubernetesObject): Slice | undefined {
  const slice = object as V1EndpointSlice;
  const labels = slice.metadata?.labels ?? {};
  const service = labels[SERVICE_NAME_LABEL];
  const engineUid = labels[ENGINE_UID_LABEL];
  if (service === undefined || engineUid === undefined) return undefined;
  const ready = (slice.endpoints ?? [])
    .filter((e) => e.conditions?.ready === true && e.conditions.terminating !== true)
    .flatMap((e) => e.addresses);
  const port = (slice.ports ?? []).find((p) => p.name === 'http')?.port;
  return { service, engineUid, port, ready };
}

/** The ready addresses of the engines' Services, kept current by a watch. */
export class EngineTargets {
  private readonly slices: WatchedCollection<Slice>;
  /** Slices by Service name: a lookup per request must not scan every engine's slices. */
  private readonly byService = new Map<string, Map<string, Slice>>();

  constructor(options: { kubeConfig: KubeConfig; namespace: string; log: Logger }) {
    const { kubeConfig, namespace } = options;
    const api = kubeConfig.makeApiClient(DiscoveryV1Api);
    const labelSelector = ENGINE_UID_LABEL;
    this.slices = new WatchedCollection<Slice>({
      kubeConfig,
      path: `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`,
      labelSelector,
      listPage: (limit, token) =>
        api.listNamespacedEndpointSlice({
          namespace,
          labelSelector,
          limit,
          ...(token === undefined ? {} : { _continue: token }),
        }),
      keep: sliceEntry,
      onChange: (name, before, after) => {
        if (before !== undefined) this.byService.get(before.service)?.delete(name);
        if (before !== undefined && this.byService.get(before.service)?.size === 0)
          this.byService.delete(before.service);
        if (after === undefined) return;
        const slices = this.byService.get(after.service) ?? new Map<string, Slice>();
        this.byService.set(after.service, slices.set(name, after));
      },
      log: options.log,
      what: 'EndpointSlice',
    });
  }

  /** Starts watching; resolves once the copy holds every slice. */
  start(): Promise<void> {
    return this.slices.start();
  }

  stop(): Promise<void> {
    return this.slices.stop();
  }

  get synced(): boolean {
    return this.slices.synced;
  }

  /**
   * A ready address of the Service `service` of the engine of `engineUid` (a slice of an engine
   * deleted and created again under the same name is not taken for the new one's), or none.
   */
  target(service: string, engineUid: string, defaultPort: number): Target | undefined {
    for (const slice of this.byService.get(service)?.values() ?? []) {
      if (slice.engineUid !== engineUid) continue;
      const host = slice.ready[0];
      if (host !== undefined) return { host, port: slice.port ?? defaultPort };
    }
    return undefined;
  }
}
