/**
 * What should exist for an engine: a pure function from the engine resource (with its profile
 * and version snapshots) to the objects the operator applies. Every engine runs as a
 * StatefulSet — one pod for DAI and notebook engines, nodeCount pods for H2O — behind a headless
 * Service (and, for kinds a leader serves, a Service of ready pods for clients); engines with data
 * keep it in the StatefulSet's volume claim, which survives scaling to zero (pause) and goes with
 * the StatefulSet (delete). Names derive from the engine's object name; no clock, randomness or
 * I/O.
 */
import { createHash } from 'node:crypto';
import type {
  V1ConfigMap,
  V1Container,
  V1EnvVar,
  V1NetworkPolicy,
  V1NetworkPolicyPeer,
  V1ObjectMeta,
  V1OwnerReference,
  V1PersistentVolumeClaim,
  V1PodTemplateSpec,
  V1Service,
  V1StatefulSet,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import { workloadName as sharedWorkloadName } from '../../../shared/workloads.ts';
import { API_VERSION, ENGINE_KIND_LABEL, ENGINE_UID_LABEL, GROUP } from '../../../shared/resources.ts';
import { heldFailure } from '../observe/failure-hold.ts';
import { customisePodTemplate } from '../podtemplate/pod-template.ts';
import {
  decimalText,
  type EngineKind,
  type EngineKindName,
  type EngineResource,
  type EngineSizing,
  type Settings,
  type VersionInfo,
} from '../kinds/kind.ts';

/** On every owned object: the engine's object name, so events map to their engine's key. */
export const ENGINE_ANNOTATION = `${GROUP}/engine`;
/** A digest of the mounted files: a changed configuration rolls the pods. */
export const FILES_DIGEST_ANNOTATION = `${GROUP}/files-digest`;
export const DATA_VOLUME = 'data';
const FILES_VOLUME = 'config';
const SECRET_VOLUME = 'secret-files';

export interface DesiredObjects {
  statefulSet: V1StatefulSet;
  /** Headless, publishing pods before they are ready: the StatefulSet's pod DNS names, and peer discovery. */
  service: V1Service;
  /** For kinds a leader serves: a ClusterIP Service of ready pods, i.e. the leader alone. */
  clientService?: V1Service;
  configMap?: V1ConfigMap;
  networkPolicy?: V1NetworkPolicy;
}

/** The workload name: a DNS label from the engine's object name (which may hold dots). */
export function workloadName(kind: EngineKind, engine: EngineResource): string {
  return sharedWorkloadName(kind.prefix, engine.metadata.name);
}

/**
 * The Service clients of a leader-served engine (H2O) connect to, `<workload>-api`: it routes
 * to ready pods only, and only the leader is ever ready.
 */
export function clientServiceName(kind: EngineKind, engine: EngineResource): string {
  return `${workloadName(kind, engine)}-api`;
}

/**
 * The cluster's DNS domain. Pods resolve Services as `<service>.<namespace>.svc.<domain>`; H2O
 * looks its nodes up under this full name.
 */
export const CLUSTER_DOMAIN = 'cluster.local';

/** The engine's headless Service as its pods resolve it. */
export function peerDns(kind: EngineKind, engine: EngineResource): string {
  const namespace = engine.metadata.namespace ?? 'default';
  return `${workloadName(kind, engine)}.${namespace}.svc.${CLUSTER_DOMAIN}`;
}

/** Whether the engine is wanted stopped (paused, or terminated for H2O). */
export function stopWanted<K extends EngineKindName>(
  kind: EngineKind<K>,
  engine: EngineResource<K>,
): boolean {
  return engine.spec[kind.stopIntent] === true;
}

/** Pods the engine wants now: none while stopped, or while failed and not resumed since. */
export function wantedReplicas(kind: EngineKind, engine: EngineResource): number {
  if (stopWanted(kind, engine) || heldFailure(engine, kind.failureReason?.of(engine)) !== undefined) return 0;
  return kind.runningReplicas(engine);
}

/** The data volume claims of an engine's pods are named `<template>-<set>-<ordinal>`. */
export function dataClaimName(kind: EngineKind, engine: EngineResource, ordinal: number): string {
  return `${DATA_VOLUME}-${workloadName(kind, engine)}-${ordinal}`;
}

const PULL_POLICIES: Readonly<Record<string, string>> = {
  IMAGE_PULL_POLICY_ALWAYS: 'Always',
  IMAGE_PULL_POLICY_NEVER: 'Never',
  IMAGE_PULL_POLICY_IF_NOT_PRESENT: 'IfNotPresent',
};

function ownerReference(engine: EngineResource, kind: EngineKind): V1OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: kind.kind,
    name: engine.metadata.name,
    uid: engine.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function engineLabels(kind: EngineKind, engine: EngineResource): Record<string, string> {
  return { [ENGINE_UID_LABEL]: engine.metadata.uid ?? '', [ENGINE_KIND_LABEL]: kind.kind };
}

function metadata(kind: EngineKind, engine: EngineResource): V1ObjectMeta {
  return {
    name: workloadName(kind, engine),
    namespace: engine.metadata.namespace ?? 'default',
    labels: engineLabels(kind, engine),
    annotations: { [ENGINE_ANNOTATION]: engine.metadata.name },
    ownerReferences: [ownerReference(engine, kind)],
  };
}

/** The resources, pod customisation and limits of an engine, as its kind decides them. */
export function sizingOf(kind: EngineKind, engine: EngineResource): EngineSizing {
  return kind.sizing(engine);
}

function versionInfo(kind: EngineKind, engine: EngineResource): VersionInfo {
  return kind.snapshots(engine).version ?? {};
}

/** The data volume and the configuration files, where the kind has them. */
function mounts(kind: EngineKind, files: boolean): { volumeMounts: V1VolumeMount[]; env: V1EnvVar[] } {
  const volumeMounts: V1VolumeMount[] = [];
  const env: V1EnvVar[] = [];
  if (kind.dataMountPath !== undefined)
    volumeMounts.push({ name: DATA_VOLUME, mountPath: kind.dataMountPath });
  const filesMount = files ? kind.filesMount : undefined;
  if (filesMount !== undefined) {
    volumeMounts.push({ name: FILES_VOLUME, mountPath: filesMount.path });
    if (filesMount.env)
      env.push({ name: filesMount.env.name, value: `${filesMount.path}/${filesMount.env.file}` });
  }
  return { volumeMounts, env };
}

/** The port, its probe, and the hardening every engine gets (more for kinds that isolate). */
function serving(kind: EngineKind, engine: EngineResource, settings: Settings): Partial<V1Container> {
  const isolation = kind.isolation?.(engine, settings);
  return {
    ...(kind.port === undefined
      ? {}
      : {
          ports: [{ name: 'http', containerPort: kind.port }],
          // Ready means the engine answers (by default: on its port); until then the state reads
          // CONNECTING.
          readinessProbe: kind.readinessProbe ?? {
            tcpSocket: { port: kind.port },
            periodSeconds: 5,
            failureThreshold: 3,
          },
          ...(kind.startupProbe === undefined ? {} : { startupProbe: kind.startupProbe }),
        }),
    // No process of the engine gains privileges beyond its user's (setuid binaries included).
    securityContext: Object.assign({ allowPrivilegeEscalation: false }, isolation?.securityContext),
  };
}

function container(
  kind: EngineKind,
  engine: EngineResource,
  { files, settings }: { files: boolean; settings: Settings },
): V1Container {
  const version = versionInfo(kind, engine);
  const pullPolicy = PULL_POLICIES[version.imagePullPolicy ?? ''];
  const { volumeMounts: fileMounts, env: fileEnv } = mounts(kind, files);
  const secret = secretMount(kind, settings);
  const volumeMounts = [
    ...fileMounts,
    ...secret.volumeMounts,
    ...(kind.isolation?.(engine, settings).volumeMounts ?? []),
  ];
  const context = { replicas: kind.runningReplicas(engine), settings, peerDns: peerDns(kind, engine) };
  const env = [...kind.env(engine, context), ...fileEnv, ...secret.env];
  return {
    name: kind.container,
    image: version.image ?? '',
    ...(pullPolicy ? { imagePullPolicy: pullPolicy } : {}),
    resources: sizingOf(kind, engine).resources,
    ...serving(kind, engine, settings),
    ...(env.length > 0 ? { env } : {}),
    ...(volumeMounts.length > 0 ? { volumeMounts } : {}),
  };
}

function filesDigest(configMap: V1ConfigMap | undefined): Record<string, string> {
  if (configMap === undefined) return {};
  const digest = createHash('sha256').update(JSON.stringify(configMap.data)).digest('hex').slice(0, 16);
  return { [FILES_DIGEST_ANNOTATION]: digest };
}

/** Where the kind's Secret is mounted, and the variable naming its file. */
function secretMount(
  kind: EngineKind,
  settings: Settings,
): { volumeMounts: V1VolumeMount[]; env: V1EnvVar[] } {
  const secret = kind.secretFiles?.(settings);
  if (secret === undefined) return { volumeMounts: [], env: [] };
  return {
    volumeMounts: [{ name: SECRET_VOLUME, mountPath: secret.path, readOnly: true }],
    env: [{ name: secret.env.name, value: `${secret.path}/${secret.env.file}` }],
  };
}

/** The kind's Secret, optional: a missing Secret (no license configured) does not keep the pod from starting. */
function secretVolume(kind: EngineKind, settings: Settings): V1Volume[] {
  const secret = kind.secretFiles?.(settings);
  return secret ? [{ name: SECRET_VOLUME, secret: { secretName: secret.secret, optional: true } }] : [];
}

function filesVolume(configMap: V1ConfigMap | undefined): V1Volume[] {
  const name = configMap?.metadata?.name;
  return name ? [{ name: FILES_VOLUME, configMap: { name } }] : [];
}

/** The pod's account, pull secrets, runtime class and volumes, where it has them. */
function podExtras(
  kind: EngineKind,
  engine: EngineResource,
  settings: Settings,
  configMap: V1ConfigMap | undefined,
): Partial<NonNullable<V1PodTemplateSpec['spec']>> {
  const secrets = versionInfo(kind, engine).imagePullSecrets ?? [];
  const isolation = kind.isolation?.(engine, settings);
  const volumes = [...filesVolume(configMap), ...secretVolume(kind, settings), ...(isolation?.volumes ?? [])];
  return {
    ...whenSet('serviceAccountName', settings.engineServiceAccount),
    ...whenSet('imagePullSecrets', secrets.length > 0 ? secrets.map((name) => ({ name })) : undefined),
    ...whenSet('runtimeClassName', isolation?.runtimeClassName),
    ...whenSet('volumes', volumes.length > 0 ? volumes : undefined),
  };
}

/** `{ [key]: value }`, or nothing when the value is unset: applied objects leave out what is not set. */
function whenSet<V>(key: string, value: V | undefined): Record<string, V> {
  return value === undefined ? {} : { [key]: value };
}

function podTemplate(
  kind: EngineKind,
  engine: EngineResource,
  settings: Settings,
  configMap?: V1ConfigMap,
): V1PodTemplateSpec {
  const sizing = sizingOf(kind, engine);
  const base: V1PodTemplateSpec = {
    metadata: {
      labels: engineLabels(kind, engine),
      annotations: { [ENGINE_ANNOTATION]: engine.metadata.name, ...filesDigest(configMap) },
    },
    spec: {
      // Users run their own code in engines: no Kubernetes API token in the pod, and an account
      // with no permissions. A profile's pod template may still ask for either.
      automountServiceAccountToken: false,
      securityContext: Object.assign(
        { seccompProfile: { type: 'RuntimeDefault' } },
        kind.isolation?.(engine, settings).podSecurityContext,
      ),
      ...podExtras(kind, engine, settings, configMap),
      containers: [container(kind, engine, { files: configMap !== undefined, settings })],
    },
  };
  return customisePodTemplate(base, {
    yamlPodTemplateSpec: sizing.yamlPodTemplateSpec,
    yamlGpuTolerations: sizing.yamlGpuTolerations,
    gpu: sizing.gpu,
  });
}

function claimTemplate(kind: EngineKind, engine: EngineResource): V1PersistentVolumeClaim {
  const storageClassName = kind.storageClass?.(engine);
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: DATA_VOLUME,
      labels: engineLabels(kind, engine),
      annotations: { [ENGINE_ANNOTATION]: engine.metadata.name },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      ...(storageClassName !== undefined ? { storageClassName } : {}),
      resources: { requests: { storage: decimalText(kind.storageBytes?.(engine)) ?? String(1024 ** 3) } },
    },
  };
}

function servicePorts(kind: EngineKind): NonNullable<V1Service['spec']>['ports'] {
  return kind.port === undefined ? [] : [{ name: 'http', port: kind.port, targetPort: kind.port }];
}

/** The Service of ready pods clients of a leader-served engine connect to; none for other kinds. */
function clientService(kind: EngineKind, engine: EngineResource, meta: V1ObjectMeta): V1Service | undefined {
  if (kind.servedByLeader !== true) return undefined;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: Object.assign({}, meta, { name: clientServiceName(kind, engine) }),
    spec: {
      type: 'ClusterIP',
      selector: { [ENGINE_UID_LABEL]: engine.metadata.uid ?? '' },
      ports: servicePorts(kind),
      // Only ready pods, i.e. the leader: H2O's followers refuse clients' calls.
      publishNotReadyAddresses: false,
    },
  };
}

/**
 * Everything that should exist for the engine.
 *
 * @throws PodTemplateError when the profile's pod template or GPU tolerations cannot be applied
 */
export function desiredObjects(kind: EngineKind, engine: EngineResource, settings: Settings): DesiredObjects {
  const meta = metadata(kind, engine);
  const files = kind.files?.(engine, settings);
  const configMap: V1ConfigMap | undefined =
    files === undefined ? undefined : { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta, data: files };
  const statefulSet: V1StatefulSet = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: meta,
    spec: {
      replicas: wantedReplicas(kind, engine),
      serviceName: meta.name ?? '',
      // H2O nodes start together: the cloud forms only once all of them are up, and the
      // followers never become ready, so none may wait for its predecessor's readiness.
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { [ENGINE_UID_LABEL]: engine.metadata.uid ?? '' } },
      // A formed H2O cloud takes no new member, and its followers are never ready (a rolling
      // update would replace one and wait forever): a changed template applies when the engine
      // next starts all its pods, never to a running cloud (an operator upgrade included).
      ...(kind.servedByLeader === true ? { updateStrategy: { type: 'OnDelete' } } : {}),
      // Pausing scales to zero and keeps the data; deleting the set deletes it.
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
      template: podTemplate(kind, engine, settings, configMap),
      ...(kind.dataMountPath !== undefined ? { volumeClaimTemplates: [claimTemplate(kind, engine)] } : {}),
    },
  };
  const service: V1Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta,
    spec: {
      // Headless: H2O nodes find each other by their pods' DNS names, which must resolve before
      // any pod is ready (no H2O node is ready until the cloud has formed).
      clusterIP: 'None',
      selector: { [ENGINE_UID_LABEL]: engine.metadata.uid ?? '' },
      ports: servicePorts(kind),
      publishNotReadyAddresses: true,
    },
  };
  const client = clientService(kind, engine, meta);
  const networkPolicy =
    settings.engineNetworkPeers && enginePolicy(kind, engine, meta, admittedPeers(kind, settings));
  return {
    statefulSet,
    service,
    ...whenSet('clientService', client),
    ...whenSet('configMap', configMap),
    ...whenSet('networkPolicy', networkPolicy),
  };
}

/**
 * The peers admitted to the engine's port: the configured ones (the gateway), and for kinds whose
 * ports users publish, whoever serves those (the ingress controller) — never to other kinds.
 */
function admittedPeers(kind: EngineKind, settings: Settings): V1NetworkPolicyPeer[] {
  const published = kind.publishesPorts === true ? (settings.publishedPortPeers ?? []) : [];
  return [...(settings.engineNetworkPeers ?? []), ...published];
}

/**
 * Who may connect to the engine's pods: the pods of the same engine, on any port (the nodes of
 * an H2O cluster talk to each other), and `peers` on the engine's port only. Other engines —
 * another user's notebook among them — are not admitted. Outgoing traffic is not restricted.
 */
function enginePolicy(
  kind: EngineKind,
  engine: EngineResource,
  meta: V1ObjectMeta,
  peers: V1NetworkPolicyPeer[],
): V1NetworkPolicy {
  const own = { matchLabels: { [ENGINE_UID_LABEL]: engine.metadata.uid ?? '' } };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: meta,
    spec: {
      podSelector: own,
      policyTypes: ['Ingress'],
      ingress: [
        { _from: [{ podSelector: own }] },
        // Kinds without a fixed port (sandboxes) open the ports their users expose.
        ...(peers.length > 0
          ? [
              {
                _from: peers,
                ...(kind.port === undefined ? {} : { ports: [{ port: kind.port, protocol: 'TCP' }] }),
              },
            ]
          : []),
      ],
    },
  };
}
