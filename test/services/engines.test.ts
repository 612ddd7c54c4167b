import { withoutLiveDurations } from '../helpers/live-durations.ts';
import { status } from '@grpc/grpc-js';
import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { DAIEngine } from '../../gateway/src/gen/ai/h2o/engine/v1/dai_engine.pb.ts';
import type { Authenticate } from '../../gateway/src/call/handler.ts';
import { waitFor } from '../cluster/wait.ts';
import { useApiServer, type RestResponse } from '../helpers/api-server.ts';
import { RESOURCE_KINDS } from '../../shared/resources.ts';

/** `Bearer <subject>[:<roles>]`; no header is users/developer with role `admin`. */
const authenticate: Authenticate = (headers) => {
  const [subject = '', roles = ''] = (headers['authorization'] ?? 'Bearer users/developer:admin')
    .replace(/^Bearer /, '')
    .split(':');
  return Promise.resolve({
    subject,
    displayName: `Name of ${subject}`,
    roles: roles.split(',').filter(Boolean),
  });
};
const NAMESPACE = 'engines-test';
const api = useApiServer({ namespace: NAMESPACE, authenticate });
const enc = encodeURIComponent;
const as = (user: string): Record<string, string> => ({ Authorization: `Bearer ${user}` });

const GIB = 1024 ** 3;
const numeric = (
  min: string,
  def: string,
  max: string | null = null,
  cumulativeMax: string | null = null,
) => ({
  min,
  default: def,
  max,
  cumulativeMax,
});
const PROFILE = {
  displayName: 'Standard',
  priority: 1,
  enabled: true,
  assignedOidcRolesEnabled: false,
  assignedOidcRoles: [],
  maxRunningEngines: null,
  cpuConstraint: numeric('1', '2', '8'),
  gpuConstraint: numeric('0', '0', '2'),
  memoryBytesConstraint: numeric(String(GIB), String(4 * GIB), String(64 * GIB)),
  storageBytesConstraint: numeric(String(GIB), String(10 * GIB), String(100 * GIB)),
  nodeCountConstraint: numeric('1', '1', '4'),
  maxIdleDurationConstraint: { min: '0s', default: '3600s', max: '86400s' },
  maxRunningDurationConstraint: { min: '0s', default: '14400s', max: null },
  configEditability: 'CONFIG_EDITABILITY_FULL',
  baseConfiguration: { max_cores: '4' },
};

async function ok(response: Promise<RestResponse>): Promise<Record<string, unknown>> {
  const r = await response;
  if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.json)}`);
  return r.json;
}

beforeAll(async () => {
  for (const collection of ['daiEngineProfiles', 'h2oEngineProfiles', 'notebookEngineProfiles']) {
    await ok(
      api().rest(
        'POST',
        `/v1/workspaces/global/${collection}?${collection.replace(/s$/, '')}Id=standard`,
        PROFILE,
      ),
    );
    await ok(
      api().rest('POST', `/v1/workspaces/global/${collection}?${collection.replace(/s$/, '')}Id=limited`, {
        ...PROFILE,
        maxRunningEngines: 3,
        cpuConstraint: numeric('1', '1', '8', '4'),
      }),
    );
  }
  await ok(
    api().rest('POST', '/v1/workspaces/global/daiEngineProfiles?daiEngineProfileId=no-config', {
      ...PROFILE,
      configEditability: 'CONFIG_EDITABILITY_BASE_CONFIG_ONLY',
    }),
  );
  await ok(
    api().rest('POST', '/v1/workspaces/global/daiEngineProfiles?daiEngineProfileId=off', {
      ...PROFILE,
      enabled: false,
    }),
  );
  await ok(
    api().rest('POST', '/v1/workspaces/global/daiEngineProfiles?daiEngineProfileId=gpu-team', {
      ...PROFILE,
      assignedOidcRolesEnabled: true,
      assignedOidcRoles: ['gpu'],
    }),
  );
  for (const id of ['1.10.5', '1.10.6']) {
    await ok(
      api().rest('POST', `/v1/workspaces/global/daiEngineVersions?daiEngineVersionId=${id}`, {
        image: `dai:${id}`,
        aliases: id === '1.10.6' ? ['latest'] : [],
      }),
    );
  }
  await ok(
    api().rest('POST', '/v1/workspaces/global/h2oEngineVersions?h2oEngineVersionId=3.46.0.1', {
      image: 'h2o:3.46.0.1',
      aliases: ['latest'],
    }),
  );
  await ok(
    api().rest('POST', '/v1/workspaces/global/notebookEngineImages?notebookEngineImageId=jupyter', {
      image: 'jupyter:1',
      enabled: true,
    }),
  );
  await ok(
    api().rest('POST', '/v1/workspaces/global/notebookEngineImages?notebookEngineImageId=retired', {
      image: 'jupyter:0',
      enabled: false,
    }),
  );
});

/**
 * Plays the operator: sets fields of an engine's reported status through the status subresource,
 * and waits until the gateway's cache has seen them (as it does within moments for the real
 * operator).
 */
async function reportStatus(
  plural: string,
  workspace: string,
  id: string,
  status: Record<string, unknown>,
): Promise<void> {
  const objects = api().cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  const patched = (await objects.patchNamespacedCustomObjectStatus(
    {
      group: 'engine.h2o.ai',
      version: 'v1',
      namespace: NAMESPACE,
      plural,
      name: `${workspace}.${id}`,
      body: { status },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  )) as KubernetesObject;
  await api().sees(plural, patched);
}

/** {@link reportStatus} of the engine's state alone. */
function reportState(plural: string, workspace: string, id: string, state: string): Promise<void> {
  return reportStatus(plural, workspace, id, { state });
}

/**
 * Plays the operator at the end of a deletion: the engine reads as DELETING until the operator,
 * with nothing of it left to clean up, takes its finalizer off; then it is gone. Waits until the
 * gateway's cache has seen it go.
 */
async function cleanedUp(plural: string, workspace: string, id: string): Promise<void> {
  const name = `${workspace}.${id}`;
  await api()
    .cluster.kubeConfig.makeApiClient(CustomObjectsApi)
    .patchNamespacedCustomObject(
      {
        group: 'engine.h2o.ai',
        version: 'v1',
        namespace: NAMESPACE,
        plural,
        name,
        body: { metadata: { finalizers: null } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  const kind = Object.values(RESOURCE_KINDS).find((k) => k.plural === plural);
  if (kind === undefined || !(await api().store.cache(kind)?.gone(name, 10_000)))
    throw new Error(`The gateway still holds ${plural} ${name}`);
}

const DAI = {
  profile: 'workspaces/global/daiEngineProfiles/standard',
  daiEngineVersion: 'workspaces/global/daiEngineVersions/latest',
};
const createDai = (workspace: string, id: string, body: unknown, headers?: Record<string, string>) =>
  api().rest('POST', `/v1/workspaces/${workspace}/daiEngines?daiEngineId=${id}`, body, headers);
const daiPath = (workspace: string, id: string) => `/v1/${enc(`workspaces/${workspace}/daiEngines/${id}`)}`;

describe('DAIEngineService over REST', () => {
  test('creates from a global profile and an alias, with the profile defaults and snapshots', async () => {
    const created = await ok(
      createDai('dai', 'e1', { ...DAI, displayName: 'My engine', config: { max_cores: '2', port: '1' } }),
    );
    expect(created['daiEngine']).toMatchObject({
      name: 'workspaces/dai/daiEngines/e1',
      daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6',
      cpu: 2,
      gpu: 0,
      memoryBytes: String(4 * GIB),
      storageBytes: String(10 * GIB),
      maxIdleDuration: '3600s',
      maxRunningDuration: '14400s',
      state: 'STATE_STARTING',
      reconciling: true,
      creator: 'users/developer',
      creatorDisplayName: 'Name of users/developer',
      // Reserved keys are dropped without an error.
      config: { max_cores: '2' },
      profileInfo: { name: 'workspaces/global/daiEngineProfiles/standard', cpuConstraint: { max: '8' } },
      daiEngineVersionInfo: { name: 'workspaces/global/daiEngineVersions/1.10.6', image: 'dai:1.10.6' },
    });
    const got = await ok(api().rest('GET', daiPath('dai', 'e1')));
    expect(withoutLiveDurations(got['daiEngine'])).toEqual(withoutLiveDurations(created['daiEngine']));
  });

  test.each<[string, Record<string, unknown>, number, string]>([
    ['cpu above the profile maximum', { cpu: 9 }, 400, 'dai_engine.cpu'],
    ['memory below the minimum', { memoryBytes: '1' }, 400, 'dai_engine.memory_bytes'],
    ['an idle limit above the maximum', { maxIdleDuration: '90000s' }, 400, 'dai_engine.max_idle_duration'],
    ['a missing profile', { profile: '' }, 400, 'dai_engine.profile'],
    [
      'a profile that does not exist',
      { profile: 'workspaces/global/daiEngineProfiles/nope' },
      400,
      'does not exist',
    ],
    [
      'a profile of another workspace',
      { profile: 'workspaces/other/daiEngineProfiles/standard' },
      400,
      "engine's workspace",
    ],
    ['a disabled profile', { profile: 'workspaces/global/daiEngineProfiles/off' }, 400, 'is disabled'],
    [
      'a version that does not exist',
      { daiEngineVersion: 'workspaces/global/daiEngineVersions/9.9.9' },
      400,
      'dai_engine.dai_engine_version',
    ],
    ['a bad annotation key', { annotations: { '-bad': 'x' } }, 400, 'annotations'],
    ['a display name over 63 characters', { displayName: 'x'.repeat(64) }, 400, 'display_name'],
    [
      'config keys outside the base configuration',
      { profile: 'workspaces/global/daiEngineProfiles/no-config', config: { other: '1' } },
      400,
      'config["other"]',
    ],
    [
      'a profile not assigned to the caller',
      { profile: 'workspaces/global/daiEngineProfiles/gpu-team' },
      403,
      'not assigned',
    ],
  ])('refuses %s and stores nothing', async (_what, change, code, message) => {
    const response = await createDai('dai-bad', 'refused', { ...DAI, ...change }, as('users/ann:cpu'));
    expect(response.status).toBe(code);
    expect(String(response.json['message'])).toContain(message);
    expect((await api().rest('GET', daiPath('dai-bad', 'refused'))).status).toBe(404);
  });

  test('accepts values on the inclusive bounds, and a profile assigned to one of the caller’s roles', async () => {
    const edge = await ok(
      createDai('dai-edge', 'e1', { ...DAI, cpu: 8, memoryBytes: String(GIB), maxIdleDuration: '86400s' }),
    );
    expect(edge['daiEngine']).toMatchObject({ cpu: 8, memoryBytes: String(GIB) });
    await ok(
      createDai(
        'dai-edge',
        'e2',
        { ...DAI, profile: 'workspaces/global/daiEngineProfiles/gpu-team' },
        as('users/gil:gpu'),
      ),
    );
  });

  test('validateOnly checks and answers without storing', async () => {
    const answer = await ok(
      api().rest('POST', '/v1/workspaces/dai/daiEngines?daiEngineId=dry&validateOnly=True', DAI),
    );
    expect(answer['daiEngine']).toMatchObject({ name: 'workspaces/dai/daiEngines/dry', cpu: 2 });
    expect((await api().rest('GET', daiPath('dai', 'dry'))).status).toBe(404);
  });

  test('updates masked fields within the profile, and refuses what breaks it', async () => {
    await ok(createDai('dai-update', 'e1', DAI));
    const updated = await ok(
      api().rest('PATCH', `${daiPath('dai-update', 'e1')}?updateMask=cpu,display_name`, {
        ...DAI,
        cpu: 4,
        displayName: 'Bigger',
        gpu: 2,
      }),
    );
    expect(updated['daiEngine']).toMatchObject({
      cpu: 4,
      gpu: 0,
      displayName: 'Bigger',
      state: 'STATE_STARTING',
    });
    const tooBig = await api().rest('PATCH', `${daiPath('dai-update', 'e1')}?updateMask=cpu`, {
      ...DAI,
      cpu: 99,
    });
    expect(tooBig.status).toBe(400);
    expect(String(tooBig.json['message'])).toContain('dai_engine.cpu');
    const bad = await api().rest(
      'PATCH',
      `${daiPath('dai-update', 'e1')}?updateMask=dai_engine_version`,
      DAI,
    );
    expect(bad.status).toBe(400);
  });

  test('pauses and resumes through the intent in spec, refusing calls that make no sense', async () => {
    await ok(createDai('dai-life', 'e1', DAI));
    const path = daiPath('dai-life', 'e1');
    await reportState('daiengines', 'dai-life', 'e1', 'STATE_RUNNING');
    const resumeRunning = await api().rest('POST', `${path}:resume`);
    expect(resumeRunning.status).toBe(400);
    expect(resumeRunning.json).toMatchObject({ code: 9 });
    expect(String(resumeRunning.json['message'])).toContain('STATE_RUNNING');
    await ok(api().rest('POST', `${path}:pause`));
    const objects = api().cluster.kubeConfig.makeApiClient(CustomObjectsApi);
    const stored = (await objects.getNamespacedCustomObject({
      group: 'engine.h2o.ai',
      version: 'v1',
      namespace: NAMESPACE,
      plural: 'daiengines',
      name: 'dai-life.e1',
    })) as { spec: { paused: boolean }; status: { state: string; reconciling: boolean } };
    expect(stored.spec.paused).toBe(true);
    // The engine reads as on its way until the operator reports the outcome.
    expect(stored.status).toMatchObject({ state: 'STATE_PAUSING', reconciling: true });
    expect((await api().rest('POST', `${path}:pause`)).status).toBe(400);
    await reportState('daiengines', 'dai-life', 'e1', 'STATE_PAUSED');
    const resumed = await ok(api().rest('POST', `${path}:resume`));
    expect((resumed['daiEngine'] as { resumeTime?: string }).resumeTime).toMatch(/^\d{4}-/);
  });

  test('resizes storage only upwards and within the profile, and upgrades a paused engine to a newer version', async () => {
    await ok(
      createDai('dai-ops', 'e1', { ...DAI, daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.5' }),
    );
    const path = daiPath('dai-ops', 'e1');
    expect((await api().rest('POST', `${path}:resizeStorage`, { newStorageBytes: String(GIB) })).status).toBe(
      400,
    );
    expect(
      (await api().rest('POST', `${path}:resizeStorage`, { newStorageBytes: String(200 * GIB) })).status,
    ).toBe(400);
    const grown = await ok(
      api().rest('POST', `${path}:resizeStorage`, { newStorageBytes: String(20 * GIB) }),
    );
    expect(grown['daiEngine']).toMatchObject({ storageBytes: String(20 * GIB) });
    // 1.10.6 is newer than the engine's 1.10.5: reads say so.
    expect((await ok(api().rest('GET', path)))['daiEngine']).toMatchObject({ upgradeAvailable: true });
    const running = await api().rest('POST', `${path}:upgradeDAIEngineVersion`, {
      newDaiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6',
    });
    expect(running.status).toBe(400);
    await ok(api().rest('POST', `${path}:pause`));
    const same = await api().rest('POST', `${path}:upgradeDAIEngineVersion`, {
      newDaiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.5',
    });
    expect(String(same.json['message'])).toContain('must be newer');
    const upgraded = await ok(
      api().rest('POST', `${path}:upgradeDAIEngineVersion`, {
        newDaiEngineVersion: 'workspaces/global/daiEngineVersions/latest',
      }),
    );
    expect(upgraded['daiEngine']).toMatchObject({
      daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6',
      daiEngineVersionInfo: { image: 'dai:1.10.6' },
    });
    const listed = await ok(api().rest('GET', '/v1/workspaces/dai-ops/daiEngines'));
    expect(listed['daiEngines']).toEqual([expect.objectContaining({ upgradeAvailable: false })]);
    const migrated = await ok(api().rest('POST', `${path}:migrateCreator`, { newCreator: 'users/bob' }));
    expect(migrated['daiEngine']).toMatchObject({ creator: 'users/bob' });
    expect((await api().rest('POST', `${path}:migrateCreator`, { newCreator: 'bob' })).status).toBe(400);
    const logs = await ok(api().rest('POST', `${path}:downloadLogs`));
    expect(logs['logs']).toMatchObject({ contentType: 'text/plain' });
  });

  test('deletes, with allowMissing and validateOnly', async () => {
    await ok(createDai('dai-del', 'e1', DAI));
    const dry = await ok(api().rest('DELETE', `${daiPath('dai-del', 'e1')}?validateOnly=true`));
    expect(dry['daiEngine']).toMatchObject({ state: 'STATE_DELETING' });
    await ok(api().rest('GET', daiPath('dai-del', 'e1')));
    await ok(api().rest('DELETE', daiPath('dai-del', 'e1')));
    expect((await ok(api().rest('GET', daiPath('dai-del', 'e1'))))['daiEngine']).toMatchObject({
      state: 'STATE_DELETING',
    });
    await cleanedUp('daiengines', 'dai-del', 'e1');
    expect((await api().rest('GET', daiPath('dai-del', 'e1'))).status).toBe(404);
    expect((await api().rest('DELETE', daiPath('dai-del', 'e1'))).status).toBe(404);
    expect((await api().rest('DELETE', `${daiPath('dai-del', 'e1')}?allowMissing=true`)).status).toBe(200);
  });

  test('caps running engines per user and profile, also under 50 concurrent creates', async () => {
    const limited = { ...DAI, profile: 'workspaces/global/daiEngineProfiles/limited' };
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => createDai('dai-cap', `e${i}`, limited, as('users/carl'))),
    );
    const statuses = results.map((r) => r.status);
    // maxRunningEngines 3, and cpu 1 each against a cumulative maximum of 4: exactly 3 start.
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(47);
    expect(String(results.find((r) => r.status === 429)?.json['message'])).toContain('running engines');
    // Another user has their own allowance; a bigger engine hits the cumulative cpu cap.
    await ok(createDai('dai-cap', 'dora-1', { ...limited, cpu: 3 }, as('users/dora')));
    const over = await createDai('dai-cap', 'dora-2', { ...limited, cpu: 2 }, as('users/dora'));
    expect(over.status).toBe(429);
    expect(String(over.json['message'])).toContain('cumulative maximum 4');
  });

  test('filters, orders and pages a few hundred engines', async () => {
    const objects = api().cluster.kubeConfig.makeApiClient(CustomObjectsApi);
    // Written straight to the cluster, as many engines would accumulate over time.
    await Promise.all(
      Array.from({ length: 240 }, (_, i) =>
        objects.createNamespacedCustomObject({
          group: 'engine.h2o.ai',
          version: 'v1',
          namespace: NAMESPACE,
          plural: 'daiengines',
          body: {
            apiVersion: 'engine.h2o.ai/v1',
            kind: 'DAIEngine',
            metadata: {
              name: `many.e${i}`,
              labels: { 'engine.h2o.ai/workspace': 'many', 'engine.h2o.ai/id': `e${i}` },
            },
            spec: {
              ...DAI,
              cpu: (i % 8) + 1,
              displayName: i % 2 === 0 ? `even ${i}` : `odd ${i}`,
              memoryBytes: String(GIB * ((i % 5) + 1)),
            },
          },
        }),
      ),
    );
    const list = (query: string) => ok(api().rest('GET', `/v1/workspaces/many/daiEngines?${query}`));
    // Written behind the gateway's back: its cache shows them once the watch has brought them.
    await waitFor(async () => ((await list('pageSize=1'))['totalSize'] === 240 ? true : undefined), {
      what: 'the 240 engines in the gateway',
      timeoutMs: 10_000,
    });
    const high = await list(
      `filter=${enc('cpu >= 7 AND display_name = "even*"')}&orderBy=${enc('cpu desc, name')}&pageSize=1000`,
    );
    const engines = high['daiEngines'] as { cpu: number; displayName: string; name: string }[];
    expect(high['totalSize']).toBe(30);
    expect(engines.every((e) => e.cpu >= 7 && e.displayName.startsWith('even'))).toBe(true);
    expect(engines.map((e) => e.cpu)).toEqual([...engines.map((e) => e.cpu)].sort((a, b) => b - a));
    // Paging the whole list returns each engine once, in a stable order.
    const seen: string[] = [];
    let token = '';
    do {
      const pageResult = await list(`pageSize=100&pageToken=${token}&orderBy=memory_bytes`);
      seen.push(...(pageResult['daiEngines'] as { name: string }[]).map((e) => e.name));
      token = String(pageResult['nextPageToken']);
    } while (token !== '');
    expect(seen).toHaveLength(240);
    expect(new Set(seen).size).toBe(240);
    const reused = await api().rest(
      'GET',
      `/v1/workspaces/many/daiEngines?pageSize=100&orderBy=memory_bytes`,
    );
    const wrongQuery = await api().rest(
      'GET',
      `/v1/workspaces/many/daiEngines?pageSize=100&orderBy=cpu&pageToken=${String(reused.json['nextPageToken'])}`,
    );
    expect(wrongQuery.status).toBe(400);
    const badFilter = await api().rest('GET', `/v1/workspaces/many/daiEngines?filter=${enc('cpu = many')}`);
    expect(badFilter.status).toBe(400);
    expect(String(badFilter.json['message'])).toContain('column 7');
  });
});

describe('paging while engines come and go', () => {
  test('pages of 20 over 150 engines, while 50 are created and 50 deleted meanwhile: each engine that stayed shows exactly once', async () => {
    const ids = Array.from({ length: 150 }, (_, i) => `p${i}`);
    for (let i = 0; i < ids.length; i += 25)
      await Promise.all(ids.slice(i, i + 25).map((id) => ok(createDai('paging', id, DAI))));
    const doomed = new Set(ids.filter((_, i) => i % 3 === 0).slice(0, 50));
    const seen: string[] = [];
    let token = '';
    let round = 0;
    const churn: Promise<unknown>[] = [];
    do {
      const page = await ok(
        api().rest(
          'GET',
          `/v1/workspaces/paging/daiEngines?pageSize=20&orderBy=${enc('cpu, display_name')}&pageToken=${token}`,
        ),
      );
      seen.push(...(page['daiEngines'] as { name: string }[]).map((e) => e.name.split('/').pop() ?? ''));
      token = String(page['nextPageToken']);
      // Between pages, others create and delete engines.
      const batch = [...doomed].slice(round * 7, round * 7 + 7);
      churn.push(
        ...batch.map((id) => ok(api().rest('DELETE', daiPath('paging', id)))),
        ...Array.from({ length: 7 }, (_, j) => ok(createDai('paging', `new${round}x${j}`, DAI))),
      );
      await Promise.all(churn.splice(0));
      round++;
    } while (token !== '');
    const stayed = ids.filter((id) => !doomed.has(id));
    expect(new Set(seen).size).toBe(seen.length);
    expect(stayed.filter((id) => !seen.includes(id))).toEqual([]);
  });
});

describe('DAIEngineService update with allowMissing', () => {
  test('creates a missing engine from the whole body, still requiring a valid mask', async () => {
    const path = `${daiPath('dai-upsert', 'e1')}?allowMissing=true`;
    expect((await api().rest('PATCH', `${path}&updateMask=`, { ...DAI, cpu: 3 })).status).toBe(400);
    const created = await ok(api().rest('PATCH', `${path}&updateMask=display_name`, { ...DAI, cpu: 3 }));
    expect(created['daiEngine']).toMatchObject({ name: 'workspaces/dai-upsert/daiEngines/e1', cpu: 3 });
    const missing = await api().rest('PATCH', `${daiPath('dai-upsert', 'e2')}?updateMask=cpu`, DAI);
    expect(missing.status).toBe(404);
  });
});

describe('H2OEngineService and NotebookEngineService over REST', () => {
  test('creates an H2O engine with node count defaults, terminates it once, and recommends sizes', async () => {
    const created = await ok(
      api().rest('POST', '/v1/workspaces/h2o/h2oEngines?h2oEngineId=h1', {
        profile: 'workspaces/global/h2oEngineProfiles/standard',
        h2oEngineVersion: 'workspaces/global/h2oEngineVersions/latest',
        nodeCount: 2,
      }),
    );
    expect(created['h2oEngine']).toMatchObject({
      nodeCount: 2,
      cpu: 2,
      state: 'STATE_STARTING',
      h2oEngineVersionInfo: { image: 'h2o:3.46.0.1' },
    });
    const path = `/v1/${enc('workspaces/h2o/h2oEngines/h1')}`;
    await ok(api().rest('POST', `${path}:terminate`));
    expect((await api().rest('POST', `${path}:terminate`)).status).toBe(400);
    const tooMany = await api().rest('POST', '/v1/workspaces/h2o/h2oEngines?h2oEngineId=h2', {
      profile: 'workspaces/global/h2oEngineProfiles/standard',
      h2oEngineVersion: 'workspaces/global/h2oEngineVersions/latest',
      nodeCount: 5,
    });
    expect(String(tooMany.json['message'])).toContain('h2o_engine.node_count');
    const size = await ok(
      api().rest('POST', '/v1/h2oEngines:calculateH2OEngineSizeRawDataset', {
        datasetSizeBytes: String(100 * GIB),
        limits: {
          memoryBytesPerNodeMin: String(GIB),
          memoryBytesPerNodeMax: String(64 * GIB),
          nodeCountMin: '1',
          nodeCountMax: '10',
        },
      }),
    );
    expect(size['h2oEngineSize']).toEqual({ nodeCount: '7', memoryBytes: String(58 * GIB) });
    const noLimits = await api().rest('POST', '/v1/h2oEngines:calculateH2OEngineSizeCompressedDataset', {
      rowsCount: '10',
      columnsCount: '2',
    });
    expect(noLimits.status).toBe(400);
  });

  test('creates a notebook engine from an image, gives its address, and refuses a disabled image', async () => {
    const body = {
      profile: 'workspaces/global/notebookEngineProfiles/standard',
      notebookImage: 'workspaces/global/notebookEngineImages/jupyter',
    };
    const created = await ok(
      api().rest('POST', '/v1/workspaces/nb/notebookEngines?notebookEngineId=n1', body),
    );
    expect(created['notebookEngine']).toMatchObject({
      storageBytes: String(10 * GIB),
      notebookImageInfo: { image: 'jupyter:1' },
    });
    const before = Date.now();
    const access = await ok(api().rest('GET', `/v1/${enc('workspaces/nb/notebookEngines/n1')}:access`));
    expect(access['uri']).toMatch(/\/workspaces\/nb\/notebookEngines\/n1\/$/);
    // Opening the notebook counts as activity, which the operator's idle limit reads.
    const stored = (await api().cluster.kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: 'engine.h2o.ai',
      version: 'v1',
      namespace: NAMESPACE,
      plural: 'notebookengines',
      name: 'nb.n1',
    })) as { metadata: { annotations?: Record<string, string> } };
    const activity = Date.parse(stored.metadata.annotations?.['engine.h2o.ai/last-activity-time'] ?? '');
    expect(activity).toBeGreaterThanOrEqual(before - 1000);
    const retired = await api().rest('POST', '/v1/workspaces/nb/notebookEngines?notebookEngineId=n2', {
      ...body,
      notebookImage: 'workspaces/global/notebookEngineImages/retired',
    });
    expect(String(retired.json['message'])).toContain('is disabled');
    const immutable = await api().rest(
      'PATCH',
      `/v1/${enc('workspaces/nb/notebookEngines/n1')}?updateMask=notebook_image`,
      body,
    );
    expect(String(immutable.json['message'])).toContain('cannot be changed');
  });

  test('the generic list shows every kind with its version, and filters by type and version', async () => {
    await ok(
      createDai('mixed', 'd1', { ...DAI, daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.5' }),
    );
    await ok(createDai('mixed', 'd2', DAI));
    await ok(
      api().rest('POST', '/v1/workspaces/mixed/notebookEngines?notebookEngineId=n1', {
        profile: 'workspaces/global/notebookEngineProfiles/standard',
        notebookImage: 'workspaces/global/notebookEngineImages/jupyter',
      }),
    );
    const all = await ok(api().rest('GET', '/v1/workspaces/mixed/engines'));
    expect(all['totalSize']).toBe(3);
    const upgrades = (all['engines'] as { name: string; upgradeAvailable: boolean }[]).map((e) => [
      e.name.split('/').pop(),
      e.upgradeAvailable,
    ]);
    expect(upgrades.sort()).toEqual([
      ['d1', true],
      ['d2', false],
      ['n1', false],
    ]);
    const newer = await ok(
      api().rest(
        'GET',
        `/v1/workspaces/mixed/engines?filter=${enc('type = TYPE_DRIVERLESS_AI AND version > 1.10.5')}`,
      ),
    );
    expect((newer['engines'] as { name: string; version: string }[]).map((e) => [e.name, e.version])).toEqual(
      [['workspaces/mixed/daiEngines/d2', '1.10.6']],
    );
    const notebooks = await ok(
      api().rest('GET', `/v1/workspaces/mixed/engines?filter=${enc('type != TYPE_DRIVERLESS_AI')}`),
    );
    expect(notebooks['engines']).toMatchObject([
      { type: 'TYPE_NOTEBOOK', version: 'jupyter', deletedVersion: false },
    ]);
    // A notebook's version is its image id: no release number, so release comparisons leave it
    // out, and ordering by version sorts it after the releases.
    const releases = await ok(
      api().rest(
        'GET',
        `/v1/workspaces/mixed/engines?filter=${enc('version >= "0.1.0"')}&orderBy=${enc('version desc')}`,
      ),
    );
    expect((releases['engines'] as { version: string }[]).map((e) => e.version)).toEqual([
      '1.10.6',
      '1.10.5',
    ]);
    const byVersion = await ok(api().rest('GET', `/v1/workspaces/mixed/engines?orderBy=version`));
    expect((byVersion['engines'] as { version: string }[]).map((e) => e.version)).toEqual([
      '1.10.5',
      '1.10.6',
      'jupyter',
    ]);
    const everywhere = await ok(api().rest('GET', '/v1/workspaces/-/engines?pageSize=1000'));
    expect(Number(everywhere['totalSize'])).toBeGreaterThan(3);
  });
});

describe('engines held by a GPU queue', () => {
  const kinds = [
    {
      collection: 'daiEngines',
      plural: 'daiengines',
      field: 'daiEngine',
      getRpc: 'DAIEngineService.GetDAIEngine',
      body: { daiEngineVersion: 'workspaces/global/daiEngineVersions/latest' },
      profiles: 'daiEngineProfiles',
    },
    {
      collection: 'h2oEngines',
      plural: 'h2oengines',
      field: 'h2oEngine',
      getRpc: 'H2OEngineService.GetH2OEngine',
      body: { h2oEngineVersion: 'workspaces/global/h2oEngineVersions/latest' },
      profiles: 'h2oEngineProfiles',
    },
    {
      collection: 'notebookEngines',
      plural: 'notebookengines',
      field: 'notebookEngine',
      getRpc: 'NotebookEngineService.GetNotebookEngine',
      body: { notebookImage: 'workspaces/global/notebookEngineImages/jupyter' },
      profiles: 'notebookEngineProfiles',
    },
  ];

  test.each(kinds)(
    '$collection carry their profile’s queue priority and show the queue status the operator reports',
    async (k) => {
      const workspace = `queued-${k.plural}`;
      const profileId = `${k.profiles.replace(/s$/, '')}Id`;
      await ok(
        api().rest('POST', `/v1/workspaces/${workspace}/${k.profiles}?${profileId}=urgent`, {
          ...PROFILE,
          queuePriority: 7,
        }),
      );
      const created = await ok(
        api().rest('POST', `/v1/workspaces/${workspace}/${k.collection}?${k.field}Id=e1`, {
          ...k.body,
          profile: `workspaces/${workspace}/${k.profiles}/urgent`,
        }),
      );
      expect(created[k.field]).toMatchObject({ profileInfo: { queuePriority: 7, priority: 1 } });
      // Never held by a queue: no queue status at all.
      expect(created[k.field]).not.toHaveProperty('queueStatus');

      // Position 0 (next in line) is a value, not an unknown position.
      const queued = {
        state: 'STATE_QUEUED',
        queue: `workspaces/${workspace}`,
        position: 0,
        message: "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu",
        since: '2026-11-28T08:00:00Z',
      };
      await reportStatus(k.plural, workspace, 'e1', { state: 'STATE_STARTING', queueStatus: queued });
      const path = `/v1/${enc(`workspaces/${workspace}/${k.collection}/e1`)}`;
      expect((await ok(api().rest('GET', path)))[k.field]).toMatchObject({
        state: 'STATE_STARTING',
        queueStatus: queued,
      });
      const listed = await ok(api().rest('GET', `/v1/workspaces/${workspace}/${k.collection}`));
      expect(listed[k.collection]).toMatchObject([{ queueStatus: queued }]);
      const generic = await ok(api().rest('GET', `/v1/workspaces/${workspace}/engines`));
      expect(generic['engines']).toMatchObject([{ state: 'STATE_STARTING', queueStatus: queued }]);
      const overGrpc = await api().grpc(k.getRpc, { name: `workspaces/${workspace}/${k.collection}/e1` });
      expect(overGrpc[k.field]).toMatchObject({
        queueStatus: { state: 1, queue: `workspaces/${workspace}`, position: 0, message: queued.message },
      });

      // Once admitted, the position goes and the queue stays.
      const admitted = {
        state: 'STATE_ADMITTED',
        queue: `workspaces/${workspace}`,
        since: '2026-11-28T08:05:00Z',
      };
      await reportStatus(k.plural, workspace, 'e1', {
        queueStatus: { ...admitted, position: null, message: null },
      });
      const after = (await ok(api().rest('GET', path)))[k.field] as { queueStatus: Record<string, unknown> };
      expect(after.queueStatus).toEqual({ ...admitted, message: '' });
    },
  );
});

describe('H2O and notebook engines over REST, every call', () => {
  test('get, list, update, download logs and delete an H2O engine', async () => {
    await ok(
      api().rest('POST', '/v1/workspaces/h2o-all/h2oEngines?h2oEngineId=h1', {
        profile: 'workspaces/global/h2oEngineProfiles/standard',
        h2oEngineVersion: 'workspaces/global/h2oEngineVersions/3.46.0.1',
      }),
    );
    const path = `/v1/${enc('workspaces/h2o-all/h2oEngines/h1')}`;
    expect((await ok(api().rest('GET', path)))['h2oEngine']).toMatchObject({ nodeCount: 1 });
    const list = await ok(
      api().rest(
        'GET',
        `/v1/workspaces/h2o-all/h2oEngines?filter=${enc('node_count = 1')}&orderBy=node_count`,
      ),
    );
    expect(list).toMatchObject({ totalSize: 1, nextPageToken: '' });
    const updated = await ok(api().rest('PATCH', `${path}?updateMask=node_count`, { nodeCount: 3 }));
    expect(updated['h2oEngine']).toMatchObject({ nodeCount: 3 });
    // The generic list reports the engine's totals: three nodes of the per-node sizes.
    const perNode = updated['h2oEngine'] as { cpu: number; memoryBytes: string };
    const generic = await ok(api().rest('GET', '/v1/workspaces/h2o-all/engines'));
    expect(generic['engines']).toMatchObject([
      { type: 'TYPE_H2O', cpu: perNode.cpu * 3, memoryBytes: String(BigInt(perNode.memoryBytes) * 3n) },
    ]);
    expect((await ok(api().rest('POST', `${path}:downloadLogs`)))['logs']).toMatchObject({
      contentType: 'text/plain',
    });
    expect((await ok(api().rest('DELETE', path)))['h2oEngine']).toMatchObject({ state: 'STATE_DELETING' });
    await cleanedUp('h2oengines', 'h2o-all', 'h1');
    expect((await api().rest('GET', path)).status).toBe(404);
  });

  test('get, list, update, pause, resume, resize and delete a notebook engine', async () => {
    const body = {
      profile: 'workspaces/global/notebookEngineProfiles/standard',
      notebookImage: 'workspaces/global/notebookEngineImages/jupyter',
    };
    await ok(api().rest('POST', '/v1/workspaces/nb-all/notebookEngines?notebookEngineId=n1', body));
    const path = `/v1/${enc('workspaces/nb-all/notebookEngines/n1')}`;
    expect((await ok(api().rest('GET', path)))['notebookEngine']).toMatchObject({ cpu: 2 });
    expect(await ok(api().rest('GET', '/v1/workspaces/nb-all/notebookEngines'))).toMatchObject({
      nextPageToken: '',
    });
    const updated = await ok(
      api().rest('PATCH', `${path}?updateMask=display_name,memory_bytes`, {
        ...body,
        displayName: 'Lab',
        memoryBytes: String(8 * GIB),
      }),
    );
    expect(updated['notebookEngine']).toMatchObject({
      displayName: 'Lab',
      memoryBytes: String(8 * GIB),
      updater: 'users/developer',
    });
    await ok(api().rest('POST', `${path}:pause`));
    expect((await api().rest('POST', `${path}:pause`)).status).toBe(400);
    await ok(api().rest('POST', `${path}:resume`));
    const resized = await ok(
      api().rest('POST', `${path}:resizeStorage`, { newStorageBytes: String(20 * GIB) }),
    );
    expect(resized['notebookEngine']).toMatchObject({ storageBytes: String(20 * GIB) });
    await ok(api().rest('DELETE', path));
    await cleanedUp('notebookengines', 'nb-all', 'n1');
    expect((await api().rest('GET', path)).status).toBe(404);
  });
});

describe('engine RPCs over gRPC', () => {
  test('serve DAI create, get, list, update, pause, resume and delete; H2O and notebook calls; the generic list', async () => {
    const rpc = (method: string, request: object) => api().grpc(method, request);
    const created = await rpc('DAIEngineService.CreateDAIEngine', {
      parent: 'workspaces/grpc',
      daiEngineId: 'g1',
      daiEngine: DAIEngine.fromPartial(DAI),
      validateOnly: false,
    });
    const name = 'workspaces/grpc/daiEngines/g1';
    expect(created['daiEngine']).toMatchObject({ name, cpu: 2 });
    expect(withoutLiveDurations(await rpc('DAIEngineService.GetDAIEngine', { name }))).toEqual(
      withoutLiveDurations(created),
    );
    const list = await rpc('DAIEngineService.ListDAIEngines', {
      parent: 'workspaces/grpc',
      pageSize: 0,
      pageToken: '',
      filter: 'cpu = 2',
      orderBy: '',
    });
    expect(list).toMatchObject({ totalSize: 1, nextPageToken: '' });
    const updated = await rpc('DAIEngineService.UpdateDAIEngine', {
      daiEngine: { ...(created['daiEngine'] as object), cpu: 3 },
      updateMask: ['cpu'],
      allowMissing: false,
      validateOnly: false,
    });
    expect(updated['daiEngine']).toMatchObject({ cpu: 3 });
    await rpc('DAIEngineService.PauseDAIEngine', { name, validateOnly: false });
    await rpc('DAIEngineService.ResumeDAIEngine', { name, validateOnly: false });
    await expect(
      rpc('DAIEngineService.ResumeDAIEngine', { name, validateOnly: false }),
    ).rejects.toMatchObject({
      code: status.FAILED_PRECONDITION,
    });
    const size = await rpc('H2OEngineService.CalculateH2OEngineSizeCompressedDataset', {
      rowsCount: '1000000',
      columnsCount: '100',
      limits: { memoryBytesPerNodeMin: String(GIB), nodeCountMin: '1' },
    });
    expect(size['h2oEngineSize']).toEqual({ nodeCount: '1', memoryBytes: String(2 * GIB) });
    const engines = await rpc('EngineService.ListEngines', {
      parent: 'workspaces/grpc',
      pageSize: 0,
      pageToken: '',
      filter: '',
      orderBy: '',
    });
    expect(engines['totalSize']).toBe(1);
    await rpc('DAIEngineService.DeleteDAIEngine', { name, allowMissing: false, validateOnly: false });
    await cleanedUp('daiengines', 'grpc', 'g1');
    await expect(rpc('DAIEngineService.GetDAIEngine', { name })).rejects.toMatchObject({
      code: status.NOT_FOUND,
    });
  });

  test('serve the remaining DAI calls, every H2O call and every notebook call', async () => {
    const rpc = (method: string, request: object) => api().grpc(method, request);
    const dai = 'workspaces/grpc-more/daiEngines/g1';
    await rpc('DAIEngineService.CreateDAIEngine', {
      parent: 'workspaces/grpc-more',
      daiEngineId: 'g1',
      daiEngine: DAIEngine.fromPartial({
        ...DAI,
        daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.5',
      }),
      validateOnly: false,
    });
    expect(
      await rpc('DAIEngineService.ResizeStorage', { daiEngine: dai, newStorageBytes: String(20 * GIB) }),
    ).toMatchObject({
      daiEngine: { storageBytes: String(20 * GIB) },
    });
    await rpc('DAIEngineService.PauseDAIEngine', { name: dai, validateOnly: false });
    expect(
      await rpc('DAIEngineService.UpgradeDAIEngineVersion', {
        daiEngine: dai,
        newDaiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6',
      }),
    ).toMatchObject({ daiEngine: { daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6' } });
    expect(
      await rpc('DAIEngineService.MigrateCreator', { daiEngine: dai, newCreator: 'users/eve' }),
    ).toMatchObject({
      daiEngine: { creator: 'users/eve' },
    });
    expect(await rpc('DAIEngineService.DownloadLogs', { daiEngine: dai })).toMatchObject({
      logs: { contentType: 'text/plain' },
    });

    const h2o = 'workspaces/grpc-more/h2oEngines/h1';
    const h2oEngine = {
      profile: 'workspaces/global/h2oEngineProfiles/standard',
      h2oEngineVersion: 'workspaces/global/h2oEngineVersions/3.46.0.1',
      state: 0,
      reconciling: false,
      annotations: {},
      name: '',
      uid: '',
      creator: '',
      creatorDisplayName: '',
      apiUrl: '',
      loginUrl: '',
      displayName: '',
    };
    await rpc('H2OEngineService.CreateH2OEngine', {
      parent: 'workspaces/grpc-more',
      h2oEngineId: 'h1',
      h2oEngine,
      validateOnly: false,
    });
    expect(await rpc('H2OEngineService.GetH2OEngine', { name: h2o })).toMatchObject({
      h2oEngine: { name: h2o },
    });
    expect(
      await rpc('H2OEngineService.ListH2OEngines', {
        parent: 'workspaces/grpc-more',
        pageSize: 0,
        pageToken: '',
        filter: '',
        orderBy: '',
      }),
    ).toMatchObject({ totalSize: 1 });
    expect(
      await rpc('H2OEngineService.UpdateH2OEngine', {
        h2oEngine: { ...h2oEngine, name: h2o, displayName: 'H' },
        updateMask: ['display_name'],
      }),
    ).toMatchObject({ h2oEngine: { displayName: 'H' } });
    await rpc('H2OEngineService.DownloadLogs', { h2oEngine: h2o });
    await rpc('H2OEngineService.TerminateH2OEngine', { name: h2o });
    expect(
      await rpc('H2OEngineService.CalculateH2OEngineSizeRawDataset', {
        datasetSizeBytes: String(GIB),
        limits: { memoryBytesPerNodeMin: String(GIB), nodeCountMin: '1' },
      }),
    ).toEqual({ h2oEngineSize: { nodeCount: '1', memoryBytes: String(4 * GIB) } });
    await rpc('H2OEngineService.DeleteH2OEngine', { name: h2o, allowMissing: false, validateOnly: false });

    const nb = 'workspaces/grpc-more/notebookEngines/n1';
    const notebookEngine = {
      profile: 'workspaces/global/notebookEngineProfiles/standard',
      notebookImage: 'workspaces/global/notebookEngineImages/jupyter',
      name: '',
      displayName: '',
      state: 0,
      reconciling: false,
      uid: '',
      creator: '',
      updater: '',
      creatorDisplayName: '',
      updaterDisplayName: '',
      storageClassName: '',
      shared: false,
      failureReason: 0,
      storageResizing: false,
    };
    await rpc('NotebookEngineService.CreateNotebookEngine', {
      parent: 'workspaces/grpc-more',
      notebookEngineId: 'n1',
      notebookEngine,
    });
    expect(await rpc('NotebookEngineService.GetNotebookEngine', { name: nb })).toMatchObject({
      notebookEngine: { name: nb },
    });
    expect(
      await rpc('NotebookEngineService.ListNotebookEngines', {
        parent: 'workspaces/grpc-more',
        pageSize: 0,
        pageToken: '',
      }),
    ).toMatchObject({
      nextPageToken: '',
    });
    await rpc('NotebookEngineService.UpdateNotebookEngine', {
      notebookEngine: { ...notebookEngine, name: nb, displayName: 'N' },
      updateMask: ['display_name'],
    });
    await rpc('NotebookEngineService.PauseNotebookEngine', { name: nb });
    await rpc('NotebookEngineService.ResumeNotebookEngine', { name: nb });
    await rpc('NotebookEngineService.ResizeNotebookEngineStorage', {
      name: nb,
      newStorageBytes: String(20 * GIB),
    });
    expect((await rpc('NotebookEngineService.AccessNotebookEngine', { notebookEngine: nb }))['uri']).toMatch(
      /notebookEngines\/n1\/$/,
    );
    await rpc('NotebookEngineService.DeleteNotebookEngine', { name: nb });
    await cleanedUp('notebookengines', 'grpc-more', 'n1');
    await expect(rpc('NotebookEngineService.GetNotebookEngine', { name: nb })).rejects.toMatchObject({
      code: status.NOT_FOUND,
    });
  });
});
