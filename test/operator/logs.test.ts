/**
 * Engine logs, end to end: engines run by the operator on simulated nodes, their containers'
 * logs simulated by kwok and served by the apiserver's pod log API, downloaded through the
 * gateway over REST, gRPC and the published Python client.
 */
import { execFile } from 'node:child_process';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { ApiError } from '../../gateway/src/errors/api-error.ts';
import { Code } from '../../gateway/src/errors/code.ts';
import { apiHandlers } from '../../gateway/src/services/api.ts';
import { PodLogs } from '../../gateway/src/store/pod-logs.ts';
import { freePort } from '../cluster/ports.ts';
import { useApiServer } from '../helpers/api-server.ts';
import { allowAll, DEVELOPMENT_CALLER } from '../helpers/development-identity.ts';
import { ok, PROFILE, reaches as reachesState, type EngineObject } from './fixtures.ts';

const NAMESPACE = 'logs-test';
const api = useApiServer({ namespace: NAMESPACE, operator: true });
const enc = encodeURIComponent;
const HERE = dirname(fileURLToPath(import.meta.url));
const CACHE = process.env['AIEM_CACHE'] ?? join(homedir(), '.cache', 'ai-engine-manager');
const PYTHON_CLIENTS = (process.env['PYTHON_CLIENT_VERSIONS'] ?? '1.4.0 1.10.2').split(/\s+/).filter(Boolean);

const rest = (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> =>
  ok(api().rest(method, path, body));

/** The text of a REST download: HttpBody.data is base64 in JSON. */
async function downloadRest(name: string): Promise<string> {
  const { logs } = (await rest('POST', `/v1/${enc(name)}:downloadLogs`)) as {
    logs: { contentType: string; data: string };
  };
  expect(logs.contentType).toBe('text/plain');
  return Buffer.from(logs.data, 'base64').toString('utf8');
}

beforeAll(async () => {
  await rest('POST', '/v1/workspaces/global/daiEngineProfiles?daiEngineProfileId=standard', PROFILE);
  await rest('POST', '/v1/workspaces/global/h2oEngineProfiles?h2oEngineProfileId=standard', PROFILE);
  await rest('POST', '/v1/workspaces/global/daiEngineVersions?daiEngineVersionId=1.11.0', {
    image: 'dai:1.11.0',
  });
  await rest('POST', '/v1/workspaces/global/h2oEngineVersions?h2oEngineVersionId=3.46.0.1', {
    image: 'h2o:3.46',
  });
});

const reaches = (plural: string, name: string, state: string): Promise<EngineObject> =>
  reachesState(api(), { namespace: NAMESPACE, plural, name }, state);

/** The names of the engine's pods, in ordinal order. */
async function podsOf(uid: string): Promise<string[]> {
  const core = api().cluster.kubeConfig.makeApiClient(CoreV1Api);
  const list = await core.listNamespacedPod({
    namespace: NAMESPACE,
    labelSelector: `engine.h2o.ai/engine-uid=${uid}`,
  });
  return list.items.map((p) => p.metadata?.name ?? '').sort();
}

const header = (pod: string, container: string): string =>
  `===== pod "${pod}", container "${container}" =====`;

/** Starts a DAI engine and a 2-node H2O engine in `workspace`, with simulated logs per pod. */
async function runningEngines(
  workspace: string,
): Promise<{ dai: string; h2o: string; daiPod: string; h2oPods: string[] }> {
  const dai = await rest('POST', `/v1/workspaces/${workspace}/daiEngines?daiEngineId=dai`, {
    profile: 'workspaces/global/daiEngineProfiles/standard',
    daiEngineVersion: 'workspaces/global/daiEngineVersions/1.11.0',
  });
  const h2o = await rest('POST', `/v1/workspaces/${workspace}/h2oEngines?h2oEngineId=h2o`, {
    profile: 'workspaces/global/h2oEngineProfiles/standard',
    h2oEngineVersion: 'workspaces/global/h2oEngineVersions/3.46.0.1',
    nodeCount: 2,
  });
  await reaches('daiengines', `${workspace}.dai`, 'STATE_RUNNING');
  await reaches('h2oengines', `${workspace}.h2o`, 'STATE_RUNNING');
  const [daiPod = ''] = await podsOf((dai['daiEngine'] as { uid: string }).uid);
  const h2oPods = await podsOf((h2o['h2oEngine'] as { uid: string }).uid);
  expect(h2oPods).toHaveLength(2);
  const pod = (name: string): { namespace: string; name: string } => ({ namespace: NAMESPACE, name });
  await api().cluster.simulateLogs(pod(daiPod), {
    'driverless-ai': ['Driverless AI 1.11.0 starting', 'Listening on port 12345'],
  });
  for (const [i, name] of h2oPods.entries()) {
    await api().cluster.simulateLogs(pod(name), {
      h2o: [`H2O node ${i} of 2 starting`, `Cloud of size 2 formed`],
    });
  }
  return {
    dai: `workspaces/${workspace}/daiEngines/dai`,
    h2o: `workspaces/${workspace}/h2oEngines/h2o`,
    daiPod,
    h2oPods,
  };
}

describe('DownloadLogs', () => {
  let engines: Awaited<ReturnType<typeof runningEngines>>;
  beforeAll(async () => {
    engines = await runningEngines('logs');
  }, 120_000);

  test('returns a running DAI engine’s container log under a header naming the pod', async () => {
    expect(await downloadRest(engines.dai)).toBe(
      `${header(engines.daiPod, 'driverless-ai')}\nDriverless AI 1.11.0 starting\nListening on port 12345\n`,
    );
  });

  test('returns every node of an H2O engine, node 0 first, over REST and gRPC alike', async () => {
    const [first = '', second = ''] = engines.h2oPods;
    const expected = [
      header(first, 'h2o'),
      'H2O node 0 of 2 starting',
      'Cloud of size 2 formed',
      '',
      header(second, 'h2o'),
      'H2O node 1 of 2 starting',
      'Cloud of size 2 formed',
      '',
    ].join('\n');
    expect(await downloadRest(engines.h2o)).toBe(expected);
    const response = (await api().grpc('H2OEngineService.DownloadLogs', { h2oEngine: engines.h2o })) as {
      logs: { contentType: string; data: Uint8Array };
    };
    expect(response.logs.contentType).toBe('text/plain');
    expect(Buffer.from(response.logs.data).toString('utf8')).toBe(expected);
  });

  test('the published Python clients’ download_logs() return the same text', async () => {
    const [dai, h2o] = [await downloadRest(engines.dai), await downloadRest(engines.h2o)];
    for (const version of PYTHON_CLIENTS) {
      const python = join(CACHE, `python-client-${version}`, 'bin', 'python');
      const { stdout } = await promisify(execFile)(python, [
        join(HERE, '..', 'compat', 'download_logs.py'),
        api().gateway.restUrl,
        'logs',
        'dai',
        'h2o',
      ]);
      expect(stdout).toBe(`##### ${engines.dai}\n${dai}##### ${engines.h2o}\n${h2o}`);
    }
  });

  test('a container whose log cannot be read says why, and the others are still returned', async () => {
    const [first = '', second = ''] = engines.h2oPods;
    await api().cluster.simulateLogs({ namespace: NAMESPACE, name: first }, { h2o: undefined });
    const text = await downloadRest(engines.h2o);
    expect(text).toMatch(
      new RegExp(
        `^${escape(header(first, 'h2o'))}\\n\\(log unavailable: .*no such file or directory\\)\\n\\n`,
      ),
    );
    expect(text).toContain(`${header(second, 'h2o')}\nH2O node 1 of 2 starting\n`);
  });

  test('a paused DAI engine has no pods and downloads empty; resumed, its log is back', async () => {
    await rest('POST', `/v1/${enc(engines.dai)}:pause`);
    await reaches('daiengines', 'logs.dai', 'STATE_PAUSED');
    expect(await downloadRest(engines.dai)).toBe('');
    const grpc = (await api().grpc('DAIEngineService.DownloadLogs', { daiEngine: engines.dai })) as {
      logs: { data: Uint8Array };
    };
    expect(grpc.logs.data).toHaveLength(0);

    await rest('POST', `/v1/${enc(engines.dai)}:resume`);
    await reaches('daiengines', 'logs.dai', 'STATE_RUNNING');
    // The StatefulSet's new pod has the old one's name.
    expect(await downloadRest(engines.dai)).toMatch(
      new RegExp(`^${escape(header(engines.daiPod, 'driverless-ai'))}\\n.+`),
    );
  });

  test('an unreachable cluster is UNAVAILABLE, not an error of the caller', async () => {
    const offline = new KubeConfig();
    offline.loadFromOptions({
      clusters: [{ name: 'offline', server: `https://127.0.0.1:${await freePort()}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'c', cluster: 'offline', user: 'u' }],
      currentContext: 'c',
    });
    const handlers = apiHandlers({
      store: api().store,
      authorizer: allowAll,
      podLogs: new PodLogs(offline, NAMESPACE),
    });
    const download = handlers['ai.h2o.engine.v1.H2OEngineService.DownloadLogs'];
    const failure = download?.({ h2oEngine: engines.h2o }, { caller: DEVELOPMENT_CALLER });
    await expect(failure).rejects.toBeInstanceOf(ApiError);
    await expect(failure).rejects.toMatchObject({ code: Code.UNAVAILABLE });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
