/**
 * H2O engines: nodeCount pods of one StatefulSet that form one H2O cloud in H2O-3's Kubernetes
 * mode. The nodes find each other by resolving the engine's headless Service (which publishes
 * pods before they are ready, since none is ready before the cloud forms), wait for the expected
 * count, and elect a leader; only the leader then answers its readiness probe, so clients reach
 * the cloud through a Service of ready pods, and the engine runs once its leader is ready. No data
 * volume; terminate is final.
 */
import { RESOURCE_KINDS } from '../../../shared/resources.ts';
import { h2oActivityProbe } from '../activity/h2o-jobs.ts';
import { unprivilegedEngine } from './engine-user.ts';
import type { V1EnvVar } from '@kubernetes/client-node';
import { decimalText, enginePath, engineUrl, type EngineKind, type EngineResource } from './kind.ts';
import { profileSizing } from './profile-sizing.ts';
import { h2oCloudFormed } from '../observe/serving-check.ts';

/** The nodes of the engine's cloud (its pods while it runs). */
function nodesOf(engine: EngineResource<'H2OEngine'>): number {
  return Math.max(1, engine.spec.nodeCount ?? 1);
}

/** Port of H2O's Kubernetes endpoint (`/kubernetes/isLeaderNode`), beside its API on 54321. */
export const H2O_KUBERNETES_API_PORT = 8081;
/** How long a node looks for the others before the cloud forms without the missing ones. */
export const H2O_NODE_LOOKUP_TIMEOUT_SECONDS = 180;

/** The JVM's options and class path, from the profile. */
function javaEnv(engine: EngineResource<'H2OEngine'>): V1EnvVar[] {
  const profile = engine.status?.profileInfo;
  return [
    { name: 'JAVA_OPTS', value: profile?.javaOptions ?? '' },
    { name: 'H2O_OPTS', value: profile?.h2oOptions ?? '' },
    { name: 'CLASSPATH', value: profile?.javaClasspath ?? '' },
  ];
}

export const h2oEngineKind: EngineKind<'H2OEngine'> = {
  kind: 'H2OEngine',
  plural: RESOURCE_KINDS.H2OEngine.plural,
  collection: RESOURCE_KINDS.H2OEngine.collection,
  prefix: 'h2o',
  container: 'h2o',
  port: 54321,
  // The clustering API answers 200 from every node until the nodes know each other, then from
  // the leader of the node's current cloud alone. A node's own API (54321) opens only once it
  // knows its cloud's members, so the kubelet asks for readiness only from then on (a node that
  // waits for the others is never taken for the leader), and two successes 3 s apart let a node
  // that led a cloud of one for a heartbeat, before the nodes merged, drop out first. One failure
  // takes a follower out at once: the engine runs only with its leader alone ready.
  startupProbe: {
    tcpSocket: { port: 54321 },
    periodSeconds: 2,
    // The lookup of the other nodes, and the JVM's start before it.
    failureThreshold: Math.ceil((H2O_NODE_LOOKUP_TIMEOUT_SECONDS + 60) / 2),
  },
  readinessProbe: {
    httpGet: { path: '/kubernetes/isLeaderNode', port: H2O_KUBERNETES_API_PORT },
    periodSeconds: 3,
    successThreshold: 2,
    failureThreshold: 1,
  },
  servedByLeader: true,
  snapshots: (engine) => ({
    profile: engine.status?.profileInfo,
    version: engine.status?.h2oEngineVersionInfo,
  }),
  sizing: profileSizing,
  queuePriority: (engine) => engine.status?.profileInfo?.queuePriority ?? 0,
  stopIntent: 'terminated',
  stopStates: { stopping: 'STATE_TERMINATING', stopped: 'STATE_TERMINATED' },
  hasConnectingState: true,
  runningReplicas: nodesOf,
  env: (engine, { replicas, settings, peerDns }) => [
    ...javaEnv(engine),
    // H2O-3's Kubernetes clustering: look the nodes up by the headless Service's DNS name until
    // all of them answer (or the timeout passes), then elect the leader.
    { name: 'H2O_KUBERNETES_SERVICE_DNS', value: peerDns },
    { name: 'H2O_NODE_EXPECTED_COUNT', value: String(replicas) },
    { name: 'H2O_NODE_LOOKUP_TIMEOUT', value: String(H2O_NODE_LOOKUP_TIMEOUT_SECONDS) },
    { name: 'H2O_KUBERNETES_API_PORT', value: String(H2O_KUBERNETES_API_PORT) },
    { name: 'H2O_NODE_MEMORY', value: decimalText(engine.spec.memoryBytes) ?? '' },
    // The image passes it to `-context_path`: H2O's pages and links stay under the engine's address.
    { name: 'H2O_CONTEXT_PATH', value: enginePath(h2oEngineKind, engine, settings) },
  ],
  isolation: () => unprivilegedEngine(),
  urls: (engine, settings) => {
    const url = engineUrl(h2oEngineKind, engine, settings);
    return { apiUrl: url, loginUrl: url };
  },
  // A job training (or one that ended since the idle time began) keeps the cloud running; asked
  // of the leader on the API port, which is the port above.
  activityProbe: h2oActivityProbe,
  // The leader's readiness can come a moment before its cloud has merged (see serving-check.ts).
  servingCheck: { path: '/3/Cloud', serves: (answer, engine) => h2oCloudFormed(answer, nodesOf(engine)) },
};
