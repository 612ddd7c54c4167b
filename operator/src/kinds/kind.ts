/**
 * What distinguishes one engine kind from another for the operator, as data and small pure
 * functions: how its pods run, what it wants, how its state names read. The shared reconcile
 * steps take one of these; no code switches on the kind name.
 */
import type {
  V1Container,
  V1EnvVar,
  V1NetworkPolicyPeer,
  V1Pod,
  V1PodSecurityContext,
  V1Probe,
  V1ResourceRequirements,
  V1Volume,
} from '@kubernetes/client-node';
import { ID_LABEL, WORKSPACE_LABEL } from '../../../shared/resources.ts';
import type { ActivityProbe } from '../activity/activity-probe.ts';
import type { ServingCheck } from '../observe/serving-check.ts';
import type { DAIEngineStatus, Int64, ResourceTypes } from '../gen/resources.ts';

/** The engine kinds the operator reconciles. */
export type EngineKindName = 'DAIEngine' | 'H2OEngine' | 'NotebookEngine' | 'SandboxEngine';

/** An engine's spec as stored (operator/src/gen/resources.ts). */
export type EngineSpec<K extends EngineKindName> = ResourceTypes[K]['spec'];
/** An engine's status as stored: the API's output fields and the operator's reports. */
export type EngineStatus<K extends EngineKindName> = ResourceTypes[K]['status'];

/**
 * An engine custom resource as the operator reads it, of kind K; of any engine kind when K is
 * not named (its spec and status then hold only what every kind has).
 */
export interface EngineResource<K extends EngineKindName = EngineKindName> {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    creationTimestamp?: string | Date;
    deletionTimestamp?: string | Date;
    finalizers?: string[];
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
  spec: EngineSpec<K>;
  /** The output fields: the status subresource over what the API recorded at creation. */
  status?: EngineStatus<K>;
  /**
   * The status subresource alone, when it differs from `status`: what the operator's reports
   * are compared with, so that kubectl shows the state it reports from the first one.
   */
  storedStatus?: EngineStatus<K>;
}

/** The spec field recording a kind's wanted stop: `paused`, or `terminated` for kinds that cannot resume. */
export type StopIntent<K extends EngineKindName> = K extends EngineKindName
  ? Extract<keyof EngineSpec<K>, 'paused' | 'terminated'>
  : never;

/**
 * The status fields the steps every kind shares read. Kinds that are never resumed (H2O,
 * sandboxes) have no resumeTime: it reads as unset for them.
 */
export type SharedStatus = Pick<DAIEngineStatus, 'resumeTime' | 'runningSince' | 'conditions'> & {
  state?: EngineStatus<EngineKindName>['state'];
};

/** A condition as stored in an engine's status. */
export type StoredCondition = NonNullable<SharedStatus['conditions']>[number];

/** The engine's status as the steps every kind shares read it. */
export function sharedStatus(engine: EngineResource): SharedStatus {
  return engine.status ?? {};
}

/** What an engine runs: its version's (or image's) snapshot, as every kind's has it. */
export interface VersionInfo {
  image?: string;
  imagePullPolicy?: string;
  imagePullSecrets?: string[];
}

/** The snapshots the API takes of what the engine was created from; unset until written. */
export interface Snapshots {
  /** The profile's (sandboxes: the template's). */
  profile: object | undefined;
  /** The version's (notebooks and sandboxes: the image's). */
  version: VersionInfo | undefined;
}

/** Operator settings every kind may use. */
export interface Settings {
  /** Where users reach engines, e.g. `https://cloud.example.com`; no trailing slash. */
  publicUrl: string;
  /**
   * The ServiceAccount engine pods run as (one without permissions); unset, the namespace's
   * default. Either way no token is mounted unless a profile's pod template asks for one.
   */
  engineServiceAccount?: string | undefined;
  /**
   * Who may connect to an engine's port besides the engine's own pods (the gateway, whose access
   * proxy serves engines' addresses): each engine then gets a NetworkPolicy admitting only them.
   * Unset: no policy.
   */
  engineNetworkPeers?: V1NetworkPolicyPeer[] | undefined;
  /**
   * Who else may connect to the pods of kinds whose ports users publish outside the cluster
   * (sandboxes: the ingress controller serving their public ports' Ingresses), with
   * `engineNetworkPeers` set. Other kinds never admit them.
   */
  publishedPortPeers?: V1NetworkPolicyPeer[] | undefined;
  /** The RuntimeClass sandbox pods run under unless their template's pod template names one. */
  sandboxRuntimeClassName?: string | undefined;
  /** The Secret holding the Driverless AI license (key `license.sig`); DAI engines mount it when it exists. */
  daiLicenseSecret?: string | undefined;
}

/** The state names a kind reports while stopping and once stopped. */
export interface StopStates {
  stopping: string;
  stopped: string;
}

export interface EngineKind<K extends EngineKindName = EngineKindName> {
  /** The custom resource kind, e.g. `DAIEngine`. */
  kind: K;
  /** The Kubernetes plural, e.g. `daiengines`. */
  plural: string;
  /** The API collection, e.g. `daiEngines`. */
  collection: string;
  /** Prefix of workload names, e.g. `dai`. */
  prefix: string;
  container: string;
  /**
   * The port the engine serves on; probes and the Service use it. Kinds without one (sandboxes,
   * which expose ports on request) are ready once their container runs.
   */
  port?: number;
  /**
   * Whether users publish the engine's ports outside the cluster, reached through an ingress
   * controller rather than the gateway (sandboxes' public ports): its NetworkPolicy then also
   * admits `settings.publishedPortPeers`.
   */
  publishesPorts?: boolean;
  /**
   * How the kubelet tells that a pod serves, when not by its port accepting connections (H2O:
   * its leader's answer on the clustering API).
   */
  readinessProbe?: V1Probe;
  /**
   * How the kubelet tells that a pod has started, before which its readiness is not asked (H2O:
   * its API opens only once the node knows its cloud's members).
   */
  startupProbe?: V1Probe;
  /**
   * Whether one pod, the leader, serves the whole engine and is the only one ever Ready (H2O's
   * Kubernetes mode): the engine runs once its leader is ready, and clients reach it through a
   * Service of ready pods besides the headless Service the nodes find each other by. Such a
   * cluster cannot take a new member once formed, so its pods are never replaced one by one.
   */
  servedByLeader?: boolean;
  /** The snapshots of the profile (or template) and the version (or image) the engine runs. */
  snapshots(engine: EngineResource<K>): Snapshots;
  /**
   * What the engine's pod gets: from its profile (cpu, gpu and memoryBytes in the spec; the
   * profile's pod template and GPU tolerations), or, for sandboxes, from their template.
   */
  sizing(engine: EngineResource<K>): EngineSizing;
  /** Hardening and volumes beyond every engine's (sandboxes: read-only root, scratch space). */
  isolation?(engine: EngineResource<K>, settings: Settings): Isolation;
  /** A Secret's files the engine reads (Driverless AI: its license), when the installation has them. */
  secretFiles?(settings: Settings): SecretFiles | undefined;
  /** Status fields beyond the state, from the pods (sandboxes: why they are still starting). */
  pendingStatus?(state: string, pods: readonly V1Pod[]): Record<string, unknown>;
  /** Where the data volume is mounted; kinds without one keep no data. */
  dataMountPath?: string;
  /** The size the data volume is wanted at, in bytes (kinds with one); unset takes 1 GiB. */
  storageBytes?(engine: EngineResource<K>): Int64 | undefined;
  /** The spec field recording the wanted stop, and the states it leads through. */
  stopIntent: StopIntent<K>;
  stopStates: StopStates;
  /** Whether a running pod whose engine does not answer yet reads CONNECTING (else STARTING). */
  hasConnectingState: boolean;
  /**
   * The status field with the notebook failure reason, which the operator reports, and the
   * reason reported so far, when the kind has one.
   */
  failureReason?: { field: 'failureReason'; of(engine: EngineResource<K>): string | undefined };
  /**
   * The queue priority of the engine's profile (kinds created from a profile): an engine of a
   * higher one is admitted first and may preempt lower ones. Kinds without it never queue.
   */
  queuePriority?(engine: EngineResource<K>): number;
  /** Pods wanted while running. */
  runningReplicas(engine: EngineResource<K>): number;
  /** Environment of the engine container. */
  env(engine: EngineResource<K>, context: EnvContext): V1EnvVar[];
  /** Files the engine reads at start (mounted from a ConfigMap), by file name. */
  files?(engine: EngineResource<K>, settings: Settings): Record<string, string>;
  /** Where the files are mounted, and the environment variable naming the main one. */
  filesMount?: { path: string; env?: { name: string; file: string } };
  /** URLs reported in status, by field. */
  urls(engine: EngineResource<K>, settings: Settings): Record<string, string>;
  /** The storage class the data volume asks for, if any. */
  storageClass?(engine: EngineResource<K>): string | undefined;
  /** Whether the engine reports its disk usage (DAI 1.10.6 and later). */
  reportsDiskUsage?(engine: EngineResource<K>): boolean;
  /**
   * How to ask a running engine, once its idle time reaches its limit, whether it worked without
   * traffic through its address (a kernel busy, a job training); served on `port` under the
   * engine's path. Kinds without one idle by their activity annotations alone.
   */
  activityProbe?: ActivityProbe;
  /**
   * What a ready engine must also show, asked of it on `port` under its path, before it is first
   * called RUNNING (H2O: its cloud formed). An engine that does not answer is judged by its pods'
   * readiness alone.
   */
  servingCheck?: ServingCheck<EngineResource<K>>;
}

/** What the environment of an engine's container may depend on besides the engine itself. */
export interface EnvContext {
  /** Pods wanted while running. */
  replicas: number;
  settings: Settings;
  /** The engine's headless Service as pods resolve it: `<service>.<namespace>.svc.cluster.local`. */
  peerDns: string;
}

/** Resources, pod customisation and duration limits of an engine. */
export interface EngineSizing {
  resources: V1ResourceRequirements;
  gpu: number;
  yamlPodTemplateSpec: string;
  yamlGpuTolerations: string;
  /** Durations as stored, e.g. `"3600s"`; unset or `"0s"`: no limit. */
  maxIdleDuration: string | undefined;
  maxRunningDuration: string | undefined;
}

/** A Secret mounted read-only at `path`, and the environment variable naming the file there. */
export interface SecretFiles {
  secret: string;
  path: string;
  env: { name: string; file: string };
}

/** What a kind adds to the container and pod for isolation. */
export interface Isolation {
  securityContext: NonNullable<V1Container['securityContext']>;
  /** Pod-level settings, e.g. the group that owns mounted volumes (`fsGroup`). */
  podSecurityContext?: V1PodSecurityContext;
  /** A runtime that isolates harder than namespaces (gVisor, Kata), when the cluster has one. */
  runtimeClassName?: string | undefined;
  volumes: V1Volume[];
  volumeMounts: NonNullable<V1Container['volumeMounts']>;
}

/** The engine's API name, e.g. `workspaces/w/daiEngines/e1`, from the labels the API writes. */
export function apiPath(kind: EngineKind, engine: EngineResource): string {
  const labels = engine.metadata.labels ?? {};
  return `workspaces/${labels[WORKSPACE_LABEL] ?? ''}/${kind.collection}/${labels[ID_LABEL] ?? ''}`;
}

/** The engine's address under the public URL, ending in `/`. */
export function engineUrl(kind: EngineKind, engine: EngineResource, settings: Settings): string {
  return `${settings.publicUrl.replace(/\/$/, '')}/${apiPath(kind, engine)}/`;
}

/**
 * The path of the engine's address, without the trailing slash, e.g.
 * `/workspaces/w/notebookEngines/e1` (with the public URL's own path in front, if it has one):
 * where the engine serves its pages, so that its links stay under its address.
 */
export function enginePath(kind: EngineKind, engine: EngineResource, settings: Settings): string {
  return new URL(engineUrl(kind, engine, settings)).pathname.replace(/\/$/, '');
}

/** An integer of the spec as text, as Kubernetes quantities and environment variables take it. */
export function decimalText(value: Int64 | undefined): string | undefined {
  return value === undefined ? undefined : String(value);
}
