/**
 * The documentation's diagrams. State diagrams draw what the operator and the gateway do
 * (operator/src/observe/state.ts, gateway/src/engines/lifecycle.ts); definitions.test.ts checks
 * that they name exactly the states of the API.
 */
import type { Diagram, DiagramEdge, DiagramNode } from './model.ts';

const state = (name: string, kind: DiagramNode['kind'] = 'state'): DiagramNode => ({
  id: name,
  label: name,
  kind,
});

/** Deleting works the same for every kind, from any state. */
const DELETION: { nodes: DiagramNode[]; edges: DiagramEdge[] } = {
  nodes: [
    { id: 'any', label: 'any state', kind: 'external' },
    state('DELETING'),
    { id: 'gone', label: 'gone', kind: 'final' },
  ],
  edges: [
    { from: 'any', to: 'DELETING', label: 'delete', by: 'user' },
    { from: 'DELETING', to: 'gone', label: 'pods and volume removed', by: 'system' },
  ],
};

/** How an engine comes up: created in STARTING, through CONNECTING if the kind reports it. */
interface Startup {
  /** Whether the kind reports CONNECTING between running pods and a usable engine. */
  connecting: boolean;
  /** What makes the pods run (`pod runs`, `pods run`). */
  podsRun: string;
  /** What makes the engine usable. */
  ready: string;
}

function startupNodes({ connecting }: Startup): DiagramNode[] {
  return [
    { id: 'create', label: 'create', kind: 'start' },
    state('STARTING'),
    ...(connecting ? [state('CONNECTING')] : []),
    state('RUNNING', 'usable'),
  ];
}

function startupEdges({ connecting, podsRun, ready }: Startup): DiagramEdge[] {
  const toReady: DiagramEdge[] = connecting
    ? [
        { from: 'STARTING', to: 'CONNECTING', label: podsRun, by: 'system' },
        { from: 'CONNECTING', to: 'RUNNING', label: ready, by: 'system' },
      ]
    : [{ from: 'STARTING', to: 'RUNNING', label: ready, by: 'system' }];
  return [{ from: 'create', to: 'STARTING', by: 'user' }, ...toReady];
}

/** A starting or running engine can fail, for the reason the kind names. */
const failureEdges = (label: string): DiagramEdge[] =>
  ['STARTING', 'RUNNING'].map((from) => ({ from, to: 'FAILED', label, by: 'system' }));

interface PausableKind extends Startup {
  name: string;
  engine: string;
}

/** DAI and notebook engines: they pause and resume, keeping their data volume. */
function pausableLifecycle(kind: PausableKind): Diagram {
  return {
    name: kind.name,
    title: `The states of a ${kind.engine} and what moves it between them.`,
    description:
      `Create starts the engine in STARTING${kind.connecting ? ', then CONNECTING once its pod runs,' : ''} ` +
      `and it becomes RUNNING when ${kind.ready}. Pausing it, or exceeding its idle or running ` +
      'limit, moves it to PAUSING and then PAUSED; resume brings it back to STARTING. A failure ' +
      'moves it to FAILED, from which resume restarts it. Delete, from any state, moves it to ' +
      'DELETING until its pods and volume are gone.',
    direction: 'DOWN',
    nodes: [
      ...startupNodes(kind),
      state('PAUSING'),
      state('PAUSED'),
      state('FAILED', 'failed'),
      ...DELETION.nodes,
    ],
    edges: [
      ...startupEdges(kind),
      { from: 'RUNNING', to: 'PAUSING', label: 'pause', by: 'user' },
      { from: 'RUNNING', to: 'PAUSING', label: 'idle or running limit', by: 'system' },
      { from: 'PAUSING', to: 'PAUSED', label: 'pod stopped', by: 'system' },
      { from: 'PAUSED', to: 'STARTING', label: 'resume', by: 'user' },
      ...failureEdges('fails'),
      { from: 'FAILED', to: 'STARTING', label: 'resume', by: 'user' },
      ...DELETION.edges,
    ],
  };
}

export const DAI_ENGINE_STATES = pausableLifecycle({
  name: 'dai-engine-states',
  engine: 'Driverless AI engine',
  connecting: true,
  podsRun: 'pod runs',
  ready: 'Driverless AI answers',
});

export const NOTEBOOK_ENGINE_STATES = pausableLifecycle({
  name: 'notebook-engine-states',
  engine: 'notebook engine',
  connecting: false,
  podsRun: 'pod runs',
  ready: 'the notebook server answers',
});

const H2O_STARTUP: Startup = { connecting: true, podsRun: 'pods run', ready: 'cluster formed' };

/** H2O engines keep their data in memory: they terminate, for good, instead of pausing. */
export const H2O_ENGINE_STATES: Diagram = {
  name: 'h2o-engine-states',
  title: 'The states of an H2O engine and what moves it between them.',
  description:
    'Create starts the engine in STARTING, then CONNECTING once its pods run, and it becomes ' +
    'RUNNING when the cluster has formed. Terminating it, or exceeding its idle or running ' +
    'limit, moves it to TERMINATING and then TERMINATED, which is final. A failing node moves ' +
    'it to FAILED, from which it can be terminated. Delete, from any state, moves it to ' +
    'DELETING until its pods are gone.',
  direction: 'DOWN',
  nodes: [
    ...startupNodes(H2O_STARTUP),
    state('TERMINATING'),
    state('TERMINATED', 'final'),
    state('FAILED', 'failed'),
    ...DELETION.nodes,
  ],
  edges: [
    ...startupEdges(H2O_STARTUP),
    { from: 'RUNNING', to: 'TERMINATING', label: 'terminate', by: 'user' },
    { from: 'RUNNING', to: 'TERMINATING', label: 'idle or running limit', by: 'system' },
    { from: 'TERMINATING', to: 'TERMINATED', label: 'pods stopped', by: 'system' },
    ...failureEdges('a node fails'),
    { from: 'FAILED', to: 'TERMINATING', label: 'terminate', by: 'user' },
    ...DELETION.edges,
  ],
};

/**
 * An engine in a GPU queue (when queueing is on): its `queue_status` state, with the engine state
 * it shows meanwhile. The operator maps Kueue's view of the engine's pods onto these
 * (queue-shared design: Kueue admits a StatefulSet's pods as one group).
 */
export const ENGINE_QUEUE_STATES: Diagram = {
  name: 'engine-queue-states',
  title: "The queue states of an engine that waits for GPUs, and the engine's state in each.",
  description:
    "Creating or resuming an engine that asks for GPUs puts it in its workspace's queue: its " +
    'queue state is QUEUED and the engine stays STARTING, with its position and what it waits ' +
    'for. When its workspace has free GPU quota, or can borrow some, the queue admits it: ADMITTED, ' +
    'and the engine starts and becomes RUNNING. When an engine of a higher queue priority needs ' +
    'the GPUs, the queue preempts an admitted engine: PREEMPTED, and a Driverless AI or notebook ' +
    'engine is PAUSED with its data kept, while an H2O engine is TERMINATED. Resuming a preempted ' +
    'engine queues it again.',
  direction: 'DOWN',
  nodes: [
    { id: 'create', label: 'create or resume', kind: 'start' },
    { id: 'queued', label: 'QUEUED', detail: 'engine STARTING · position · message', kind: 'state' },
    { id: 'admitted', label: 'ADMITTED', detail: 'engine STARTING, then RUNNING', kind: 'usable' },
    { id: 'preempted', label: 'PREEMPTED', detail: 'DAI, notebook: engine PAUSED, data kept', kind: 'state' },
    { id: 'preemptedH2o', label: 'PREEMPTED', detail: 'H2O: engine TERMINATED', kind: 'final' },
  ],
  edges: [
    { from: 'create', to: 'queued', label: 'asks for GPUs', by: 'user' },
    { from: 'queued', to: 'admitted', label: 'GPU quota free or borrowed', by: 'system' },
    { from: 'admitted', to: 'preempted', label: 'higher queue priority needs the GPUs', by: 'system' },
    { from: 'admitted', to: 'preemptedH2o', label: 'the same, for an H2O engine', by: 'system' },
    { from: 'preempted', to: 'queued', label: 'resume', by: 'user' },
  ],
};

export const ARCHITECTURE: Diagram = {
  name: 'architecture',
  title:
    'How AI Engine Manager is built: callers, the gateway, the Kubernetes API, the operator and the engines.',
  description:
    'The Python client, curl and browsers call the gateway over REST /v1, and gRPC clients over ' +
    'gRPC; the gateway checks tokens with the OIDC issuer. The gateway stores every resource as a ' +
    'custom resource in the Kubernetes API, which is the only database, and reads it back through ' +
    'watches. kubectl and GitOps tools write the same resources to the Kubernetes API, which sends ' +
    'each write to the gateway for admission. The operator watches the resources and creates the ' +
    "engines' pods, volumes and services: Driverless AI, H2O and notebook engines, on the " +
    "cluster's nodes.",
  direction: 'DOWN',
  nodes: [
    { id: 'clients', label: 'Python client · curl · browsers', kind: 'external' },
    { id: 'grpc', label: 'gRPC clients', kind: 'external' },
    { id: 'kubectl', label: 'kubectl · GitOps', kind: 'external' },
    { id: 'issuer', label: 'OIDC issuer', kind: 'external' },
    {
      id: 'cluster',
      label: 'Kubernetes cluster',
      kind: 'group',
      children: [
        { id: 'gateway', label: 'gateway', detail: 'authenticate · authorize · validate', kind: 'component' },
        {
          id: 'api',
          label: 'Kubernetes API',
          detail: 'custom resources: the only database',
          kind: 'component',
        },
        { id: 'operator', label: 'operator', detail: 'one controller per engine kind', kind: 'component' },
        {
          id: 'engines',
          label: 'engines',
          kind: 'group',
          children: [
            { id: 'dai', label: 'Driverless AI', detail: 'pod + data volume', kind: 'usable' },
            { id: 'h2o', label: 'H2O', detail: 'StatefulSet of nodes', kind: 'usable' },
            { id: 'notebook', label: 'Notebook', detail: 'pod + volume', kind: 'usable' },
          ],
        },
      ],
    },
  ],
  edges: [
    { from: 'clients', to: 'gateway', label: 'REST /v1' },
    { from: 'grpc', to: 'gateway', label: 'gRPC' },
    { from: 'issuer', to: 'gateway', label: 'signing keys', by: 'system' },
    { from: 'kubectl', to: 'api', label: 'apply' },
    { from: 'gateway', to: 'api', label: 'store · watch' },
    { from: 'api', to: 'gateway', label: 'admission', by: 'system' },
    { from: 'api', to: 'operator', label: 'watch', by: 'system' },
    { from: 'operator', to: 'engines', label: 'pods · volumes · services' },
  ],
};

type Box = Omit<DiagramNode, 'kind'>;

/**
 * Checks in order: each passes ("yes") to the next, the last to `end`, and each fails ("no")
 * to its refusal.
 */
function checkChain(
  start: DiagramNode,
  checks: readonly { check: Box; refusal: Box }[],
  end: DiagramNode,
): { nodes: DiagramNode[]; edges: DiagramEdge[] } {
  const path = [start.id, ...checks.map(({ check }) => check.id), end.id];
  return {
    nodes: [
      start,
      ...checks.map(({ check }): DiagramNode => ({ ...check, kind: 'check' })),
      end,
      ...checks.map(({ refusal }): DiagramNode => ({ ...refusal, kind: 'refusal' })),
    ],
    edges: [
      ...path.slice(1).map((to, i): DiagramEdge => {
        const from = path[i] ?? start.id;
        return i === 0 ? { from, to } : { from, to, label: 'yes' };
      }),
      ...checks.map(({ check, refusal }): DiagramEdge => ({ from: check.id, to: refusal.id, label: 'no' })),
    ],
  };
}

/** The checks every call passes, in order, and the answer when one fails. */
export const PERMISSIONS: Diagram = {
  name: 'permissions',
  title: 'The checks a call passes before it runs, in order, and the answer when one fails.',
  description:
    'First the bearer token must be valid, or the answer is 401. Then the route, body and names ' +
    'must be valid, or the answer is 404 or 400. Then the policy must grant the permission ' +
    'actions/enginemanager/{resource}/{ACTION} on the workspace, or the answer is 403. Then an ' +
    'engine must be the caller’s own, a shared notebook, or in a workspace the caller administers, ' +
    'or the answer is 404 as for a missing engine. Creating or resuming an engine also needs a ' +
    'profile open or assigned to one of the caller’s roles (else 403) and room within its limits ' +
    '(else 429). Then the call runs.',
  direction: 'DOWN',
  ...checkChain(
    { id: 'call', label: 'a call', kind: 'start' },
    [
      {
        check: {
          id: 'token',
          label: 'Bearer token valid?',
          detail: 'issuer · audience · expiry · signature',
        },
        refusal: { id: 'e401', label: '401', detail: 'Unauthenticated' },
      },
      {
        check: { id: 'request', label: 'Route, body and names valid?' },
        refusal: { id: 'e400', label: '404 · 400', detail: 'the field named' },
      },
      {
        check: {
          id: 'policy',
          label: 'Policy grants the permission here?',
          detail: 'actions/enginemanager/{resource}/{ACTION} on the workspace',
        },
        refusal: { id: 'e403', label: '403', detail: 'permission and workspace named' },
      },
      {
        check: {
          id: 'owner',
          label: 'Engine yours, shared, or administered?',
          detail: 'creator · shared notebook · engines/ADMINISTER',
        },
        refusal: { id: 'e404', label: '404', detail: 'as if it did not exist' },
      },
      {
        check: { id: 'profile', label: 'Profile assigned to you?', detail: 'creating and resuming engines' },
        refusal: { id: 'e403p', label: '403', detail: 'profile not assigned' },
      },
      {
        check: {
          id: 'limits',
          label: 'Within the profile’s limits?',
          detail: 'max_running_engines · cumulative maximums',
        },
        refusal: { id: 'e429', label: '429', detail: 'limit reached' },
      },
    ],
    { id: 'runs', label: 'the call runs', kind: 'allowed' },
  ),
};

export const DIAGRAMS: readonly Diagram[] = [
  ARCHITECTURE,
  DAI_ENGINE_STATES,
  H2O_ENGINE_STATES,
  NOTEBOOK_ENGINE_STATES,
  ENGINE_QUEUE_STATES,
  PERMISSIONS,
];
