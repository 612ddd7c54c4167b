/**
 * Duration limits count from when an engine became RUNNING, not from its creation: on the local
 * control plane with simulated nodes, an engine whose pods no node takes until the test labels
 * one (a slow start: an image pull, a wait for a node) outlasts its idle limit while starting, is
 * not paused when it comes up, and is paused once it has been idle for its limit after that.
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { waitFor } from '../cluster/wait.ts';
import { KWOK_NODE_ANNOTATION } from '../cluster/nodes.ts';
import { useApiServer } from '../helpers/api-server.ts';
import { watchUntil } from '../helpers/watch.ts';
import { ok, PROFILE, reaches as reachesState, type EngineObject } from './fixtures.ts';

const NAMESPACE = 'running-since-test';
const api = useApiServer({ namespace: NAMESPACE, operator: true });
const enc = encodeURIComponent;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** The label that lets the engine's pods onto a node: until a node has it, they stay pending. */
const HOLD = { key: 'engine-test/slow-start', value: 'open' };
const IDLE_LIMIT_MS = 4000;

const rest = (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> =>
  ok(api().rest(method, path, body));

type Engine = EngineObject & { status?: { runningSince?: string } };
interface StoppedCondition {
  type: string;
  reason: string;
  lastTransitionTime?: string;
}

const reaches = (name: string, state: string, timeoutMs = 60_000): Promise<Engine> =>
  reachesState(api(), { namespace: NAMESPACE, plural: 'daiengines', name }, state, timeoutMs);

/** Labels (or, with null, unlabels) a simulated node so that the held pods may run there. */
async function labelNode(node: string, value: string | null): Promise<void> {
  await api()
    .cluster.kubeConfig.makeApiClient(CoreV1Api)
    .patchNode({ name: node, body: { metadata: { labels: { [HOLD.key]: value } } } }, mergePatch);
}

/** A simulated node without taints (a CPU node). */
async function cpuNode(): Promise<string> {
  const nodes = await api().cluster.kubeConfig.makeApiClient(CoreV1Api).listNode();
  const simulated = (n: V1Node): boolean =>
    n.metadata?.annotations?.[KWOK_NODE_ANNOTATION] !== undefined && (n.spec?.taints ?? []).length === 0;
  const name = nodes.items.find(simulated)?.metadata?.name;
  if (name === undefined) throw new Error('No simulated CPU node');
  return name;
}

beforeAll(async () => {
  await rest('POST', '/v1/workspaces/global/daiEngineProfiles?daiEngineProfileId=slow', {
    ...PROFILE,
    yamlPodTemplateSpec: `spec:\n  nodeSelector:\n    ${HOLD.key}: ${HOLD.value}\n`,
  });
  await rest('POST', '/v1/workspaces/global/daiEngineVersions?daiEngineVersionId=1.10.6', {
    image: 'dai:1.10.6',
  });
});

describe('duration limits', () => {
  let node: string | undefined;
  afterAll(async () => {
    if (node !== undefined) await labelNode(node, null);
  });

  test('an engine slow to start is not paused before it has run for its idle limit, and is paused once idle after it', async () => {
    const created = await rest('POST', '/v1/workspaces/rs/daiEngines?daiEngineId=slow', {
      profile: 'workspaces/global/daiEngineProfiles/slow',
      daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6',
      maxIdleDuration: `${IDLE_LIMIT_MS / 1000}s`,
    });
    const createdAt = Date.parse((created['daiEngine'] as { createTime: string }).createTime);
    // Its pods wait for a node, and go on waiting past the idle limit.
    await watchUntil<Engine>(
      api().cluster.kubeConfig,
      `/apis/engine.h2o.ai/v1/namespaces/${NAMESPACE}/daiengines`,
      (e) =>
        e.object.status?.conditions?.some((c) => c.type === 'Ready' && c.reason === 'Unschedulable') === true,
      { what: 'the engine waiting for a node', query: { fieldSelector: 'metadata.name=rs.slow' } },
    );
    const startingPastLimit = await waitFor(
      async () => {
        const read = await rest('GET', `/v1/${enc('workspaces/rs/daiEngines/slow')}`);
        return Date.now() >= createdAt + IDLE_LIMIT_MS + 1000 ? read['daiEngine'] : undefined;
      },
      { what: 'the idle limit to pass while the engine starts', timeoutMs: 30_000, intervalMs: 250 },
    );
    // Starting time is not running time.
    expect(startingPastLimit).toMatchObject({ state: 'STATE_STARTING', currentRunningDuration: '0s' });

    node = await cpuNode();
    const openedAt = Date.now();
    await labelNode(node, HOLD.value);
    const running = await reaches('rs.slow', 'STATE_RUNNING');
    const runningSince = Date.parse(running.status?.runningSince ?? '');
    // The moment it became RUNNING is recorded: after the wait for a node, not before.
    expect(runningSince).toBeGreaterThanOrEqual(openedAt - 1000);
    expect(runningSince - createdAt).toBeGreaterThan(IDLE_LIMIT_MS);

    const paused = await reaches('rs.slow', 'STATE_PAUSED', 30_000);
    const conditions = (paused.status?.conditions ?? []) as StoppedCondition[];
    const stopped = conditions.find((c) => c.type === 'Stopped');
    expect(stopped?.reason).toBe('MaxIdleDurationExceeded');
    // Paused for idleness only once it had been RUNNING for its idle limit (condition times are
    // whole seconds).
    const stoppedAt = Date.parse(stopped?.lastTransitionTime ?? '');
    expect(stoppedAt - runningSince).toBeGreaterThanOrEqual(IDLE_LIMIT_MS - 1000);
  });
});
