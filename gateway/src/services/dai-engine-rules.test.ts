/**
 * The DAI engine service's rules on the in-memory store: creation from a profile and its
 * refusals, who reaches whose engine, the caps of a profile, and the lifecycle's state rules.
 * The same rules run over REST on a real control plane in test/services/engines.test.ts; here they
 * run in milliseconds, with the operator's reports played through the store.
 */
import { Code } from '../errors/code.ts';
import type { Json } from '../json/canonical.ts';
import { RESOURCE_KINDS } from '../../../shared/resources.ts';
import type { Caller } from '../auth/authorizer.ts';
import { caller, InMemoryApi } from '../../../test/helpers/in-memory-api.ts';

const ENGINE = RESOURCE_KINDS.DAIEngine;
const GIB = 1024 ** 3;

const ALICE = caller('users/alice');
const BOB = caller('users/bob');
const GPU_USER = caller('users/gil', ['gpu']);
const ADMIN = caller('users/admin', ['admin']);

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
const DAI = {
  profile: 'workspaces/global/daiEngineProfiles/standard',
  daiEngineVersion: 'workspaces/global/daiEngineVersions/latest',
};

let api: InMemoryApi;
const createEngine = (who: Caller, workspace: string, id: string, engine: Json, validateOnly = false) =>
  api.call(who, 'DAIEngineService', 'CreateDAIEngine', {
    parent: `workspaces/${workspace}`,
    daiEngineId: id,
    daiEngine: engine,
    validateOnly,
  });
/** Plays the operator: reports the engine's state. */
const report = (workspace: string, id: string, state: string): Promise<void> =>
  api.report(ENGINE, name(workspace, id), state);
const engineOf = (response: Record<string, Json>): Record<string, Json> =>
  response['daiEngine'] as Record<string, Json>;
const name = (workspace: string, id: string): string => `workspaces/${workspace}/daiEngines/${id}`;
const get = (who: Caller, workspace: string, id: string) =>
  api.call(who, 'DAIEngineService', 'GetDAIEngine', { name: name(workspace, id) });
const getFails = (who: Caller, workspace: string, id: string) =>
  api.fails(who, 'DAIEngineService', 'GetDAIEngine', { name: name(workspace, id) });
const act = (who: Caller, rpc: 'PauseDAIEngine' | 'ResumeDAIEngine', workspace: string, id: string) =>
  api.call(who, 'DAIEngineService', rpc, { name: name(workspace, id) });
const actFails = (who: Caller, rpc: string, workspace: string, id: string) =>
  api.fails(who, 'DAIEngineService', rpc, { name: name(workspace, id) });

async function profile(id: string, changes: Record<string, Json> = {}): Promise<void> {
  await api.call(ADMIN, 'DAIEngineProfileService', 'CreateDAIEngineProfile', {
    parent: 'workspaces/global',
    daiEngineProfileId: id,
    daiEngineProfile: { ...PROFILE, ...changes },
  });
}

beforeEach(async () => {
  api = new InMemoryApi();
  await profile('standard');
  await profile('limited', { maxRunningEngines: 2, cpuConstraint: numeric('1', '1', '8', '3') });
  await profile('off', { enabled: false });
  await profile('gpu-team', { assignedOidcRolesEnabled: true, assignedOidcRoles: ['gpu'] });
  await profile('no-config', { configEditability: 'CONFIG_EDITABILITY_BASE_CONFIG_ONLY' });
  for (const id of ['1.10.5', '1.10.6']) {
    await api.call(ADMIN, 'DAIEngineVersionService', 'CreateDAIEngineVersion', {
      parent: 'workspaces/global',
      daiEngineVersionId: id,
      daiEngineVersion: { image: `dai:${id}`, aliases: id === '1.10.6' ? ['latest'] : [] },
    });
  }
});

describe('creating a DAI engine from a profile', () => {
  test('fills the profile defaults, resolves the version alias, snapshots both, and records the creator', async () => {
    const created = engineOf(
      await createEngine(ALICE, 'w', 'e1', {
        ...DAI,
        displayName: 'Mine',
        config: { max_cores: '2', port: '1' },
      }),
    );
    expect(created).toMatchObject({
      name: name('w', 'e1'),
      daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6',
      cpu: 2,
      gpu: 0,
      memoryBytes: String(4 * GIB),
      storageBytes: String(10 * GIB),
      maxIdleDuration: '3600s',
      maxRunningDuration: '14400s',
      state: 'STATE_STARTING',
      reconciling: true,
      creator: 'users/alice',
      creatorDisplayName: 'Name of users/alice',
      // Reserved keys are dropped without an error.
      config: { max_cores: '2' },
      profileInfo: { name: 'workspaces/global/daiEngineProfiles/standard', cpuConstraint: { max: '8' } },
      daiEngineVersionInfo: { name: 'workspaces/global/daiEngineVersions/1.10.6', image: 'dai:1.10.6' },
    });
    const read = engineOf(await get(ALICE, 'w', 'e1'));
    expect(read).toMatchObject({
      name: created['name'],
      uid: created['uid'],
      cpu: 2,
      creator: 'users/alice',
    });
  });

  test('accepts values on the inclusive bounds, and a profile assigned to one of the caller’s roles', async () => {
    const edge = engineOf(
      await createEngine(ALICE, 'w', 'e1', {
        ...DAI,
        cpu: 8,
        memoryBytes: String(GIB),
        maxIdleDuration: '86400s',
      }),
    );
    expect(edge).toMatchObject({ cpu: 8, memoryBytes: String(GIB), maxIdleDuration: '86400s' });
    await createEngine(GPU_USER, 'w', 'e2', {
      ...DAI,
      profile: 'workspaces/global/daiEngineProfiles/gpu-team',
    });
  });

  test.each<[string, Record<string, Json>, Code, string]>([
    ['cpu above the profile maximum', { cpu: 9 }, Code.INVALID_ARGUMENT, 'dai_engine.cpu'],
    ['memory below the minimum', { memoryBytes: '1' }, Code.INVALID_ARGUMENT, 'dai_engine.memory_bytes'],
    [
      'an idle limit above the maximum',
      { maxIdleDuration: '90000s' },
      Code.INVALID_ARGUMENT,
      'dai_engine.max_idle_duration',
    ],
    ['a missing profile', { profile: '' }, Code.INVALID_ARGUMENT, 'dai_engine.profile'],
    [
      'a profile that does not exist',
      { profile: 'workspaces/global/daiEngineProfiles/nope' },
      Code.INVALID_ARGUMENT,
      'does not exist',
    ],
    [
      'a profile of another workspace',
      { profile: 'workspaces/other/daiEngineProfiles/standard' },
      Code.INVALID_ARGUMENT,
      "engine's workspace",
    ],
    [
      'a disabled profile',
      { profile: 'workspaces/global/daiEngineProfiles/off' },
      Code.INVALID_ARGUMENT,
      'is disabled',
    ],
    [
      'a version that does not exist',
      { daiEngineVersion: 'workspaces/global/daiEngineVersions/9.9.9' },
      Code.INVALID_ARGUMENT,
      'dai_engine.dai_engine_version',
    ],
    ['a bad annotation key', { annotations: { '-bad': 'x' } }, Code.INVALID_ARGUMENT, 'annotations'],
    [
      'a display name over 63 characters',
      { displayName: 'x'.repeat(64) },
      Code.INVALID_ARGUMENT,
      'display_name',
    ],
    [
      'config keys outside the base configuration',
      { profile: 'workspaces/global/daiEngineProfiles/no-config', config: { other: '1' } },
      Code.INVALID_ARGUMENT,
      'config["other"]',
    ],
    [
      'a profile not assigned to the caller',
      { profile: 'workspaces/global/daiEngineProfiles/gpu-team' },
      Code.PERMISSION_DENIED,
      'not assigned',
    ],
  ])('refuses %s and stores nothing', async (_what, change, code, message) => {
    const failure = await api.fails(ALICE, 'DAIEngineService', 'CreateDAIEngine', {
      parent: 'workspaces/w',
      daiEngineId: 'refused',
      daiEngine: { ...DAI, ...change },
    });
    expect(failure.code).toBe(code);
    expect(failure.message).toContain(message);
    expect((await getFails(ALICE, 'w', 'refused')).code).toBe(Code.NOT_FOUND);
    expect(await api.store.list(ENGINE, '-')).toEqual([]);
  });

  test('an id that is taken is ALREADY_EXISTS, and the engine stays as it was', async () => {
    await createEngine(ALICE, 'w', 'e1', { ...DAI, displayName: 'First' });
    expect(
      (
        await api.fails(ALICE, 'DAIEngineService', 'CreateDAIEngine', {
          parent: 'workspaces/w',
          daiEngineId: 'e1',
          daiEngine: { ...DAI, displayName: 'Second' },
        })
      ).code,
    ).toBe(Code.ALREADY_EXISTS);
    expect(engineOf(await get(ALICE, 'w', 'e1'))['displayName']).toBe('First');
  });

  test('validateOnly answers the engine as it would be created, and stores nothing', async () => {
    const answer = engineOf(await createEngine(ALICE, 'w', 'dry', DAI, true));
    expect(answer).toMatchObject({ name: name('w', 'dry'), cpu: 2, state: 'STATE_STARTING' });
    expect((await getFails(ALICE, 'w', 'dry')).code).toBe(Code.NOT_FOUND);
  });
});

describe('who reaches an engine', () => {
  test("a user reaches only their own engines; another user's is NOT_FOUND, to every call", async () => {
    await createEngine(ALICE, 'w', 'hers', DAI);
    await createEngine(BOB, 'w', 'his', DAI);
    expect((await getFails(BOB, 'w', 'hers')).code).toBe(Code.NOT_FOUND);
    expect((await actFails(BOB, 'PauseDAIEngine', 'w', 'hers')).code).toBe(Code.NOT_FOUND);
    expect((await actFails(BOB, 'DeleteDAIEngine', 'w', 'hers')).code).toBe(Code.NOT_FOUND);
    const listed = await api.call(BOB, 'DAIEngineService', 'ListDAIEngines', { parent: 'workspaces/w' });
    expect((listed['daiEngines'] as { name: string }[]).map((e) => e.name)).toEqual([name('w', 'his')]);
    // Her engine is untouched by his attempts.
    expect(engineOf(await get(ALICE, 'w', 'hers'))).toMatchObject({
      state: 'STATE_STARTING',
      creator: 'users/alice',
    });
  });

  test("an administrator of the workspace reaches every user's engines", async () => {
    await createEngine(ALICE, 'w', 'hers', DAI);
    await createEngine(BOB, 'w', 'his', DAI);
    const listed = await api.call(ADMIN, 'DAIEngineService', 'ListDAIEngines', { parent: 'workspaces/w' });
    expect((listed['daiEngines'] as { name: string }[]).map((e) => e.name).sort()).toEqual([
      name('w', 'hers'),
      name('w', 'his'),
    ]);
    await report('w', 'hers', 'STATE_RUNNING');
    expect(engineOf(await act(ADMIN, 'PauseDAIEngine', 'w', 'hers'))).toMatchObject({
      state: 'STATE_PAUSING',
    });
  });
});

describe("a profile's caps", () => {
  const LIMITED = { ...DAI, profile: 'workspaces/global/daiEngineProfiles/limited' };

  test('a user runs at most maxRunningEngines engines of the profile; a paused one leaves room', async () => {
    await createEngine(ALICE, 'w', 'e1', LIMITED);
    await createEngine(ALICE, 'w', 'e2', LIMITED);
    const third = await api.fails(ALICE, 'DAIEngineService', 'CreateDAIEngine', {
      parent: 'workspaces/w',
      daiEngineId: 'e3',
      daiEngine: LIMITED,
    });
    expect(third).toMatchObject({ code: Code.RESOURCE_EXHAUSTED, reason: 'QUOTA_EXCEEDED' });
    // The caps are per user: another user has room of their own.
    await createEngine(BOB, 'w', 'b1', LIMITED);
    await report('w', 'e1', 'STATE_RUNNING');
    await act(ALICE, 'PauseDAIEngine', 'w', 'e1');
    await createEngine(ALICE, 'w', 'e3', LIMITED);
    // Resuming the paused one would make three.
    await report('w', 'e1', 'STATE_PAUSED');
    expect(await actFails(ALICE, 'ResumeDAIEngine', 'w', 'e1')).toMatchObject({
      code: Code.RESOURCE_EXHAUSTED,
    });
  });

  test('the cumulative cpu of running engines stays within the profile', async () => {
    await createEngine(ALICE, 'w', 'e1', { ...LIMITED, cpu: 2 });
    const over = await api.fails(ALICE, 'DAIEngineService', 'CreateDAIEngine', {
      parent: 'workspaces/w',
      daiEngineId: 'e2',
      daiEngine: { ...LIMITED, cpu: 2 },
    });
    expect(over.code).toBe(Code.RESOURCE_EXHAUSTED);
    await createEngine(ALICE, 'w', 'e2', { ...LIMITED, cpu: 1 });
  });

  test('concurrent creates cannot overrun the caps together', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => createEngine(ALICE, 'w', `c${i}`, LIMITED)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(refused).toHaveLength(18);
    for (const reason of refused) expect(reason).toMatchObject({ code: Code.RESOURCE_EXHAUSTED });
    expect(await api.store.list(ENGINE, 'w')).toHaveLength(2);
  });
});

describe('pause, resume and delete', () => {
  test('pause and resume follow the reported state, refusing calls that make no sense', async () => {
    await createEngine(ALICE, 'w', 'e1', DAI);
    await report('w', 'e1', 'STATE_RUNNING');
    const resumeRunning = await actFails(ALICE, 'ResumeDAIEngine', 'w', 'e1');
    expect(resumeRunning.code).toBe(Code.FAILED_PRECONDITION);
    expect(resumeRunning.message).toContain('STATE_RUNNING');
    const paused = engineOf(await act(ALICE, 'PauseDAIEngine', 'w', 'e1'));
    // The engine reads as on its way until the operator reports the outcome.
    expect(paused).toMatchObject({ state: 'STATE_PAUSING', reconciling: true });
    expect((await api.store.get(ENGINE, name('w', 'e1'))).intent).toEqual({ paused: true });
    expect((await actFails(ALICE, 'PauseDAIEngine', 'w', 'e1')).code).toBe(Code.FAILED_PRECONDITION);
    await report('w', 'e1', 'STATE_PAUSED');
    const resumed = engineOf(await act(ALICE, 'ResumeDAIEngine', 'w', 'e1'));
    expect(resumed['resumeTime']).toMatch(/^\d{4}-/);
    expect((await api.store.get(ENGINE, name('w', 'e1'))).intent).toEqual({ paused: false });
  });

  test('deletes, with validateOnly and allowMissing', async () => {
    await createEngine(ALICE, 'w', 'e1', DAI);
    const dry = await api.call(ALICE, 'DAIEngineService', 'DeleteDAIEngine', {
      name: name('w', 'e1'),
      validateOnly: true,
    });
    expect(engineOf(dry)).toMatchObject({ state: 'STATE_DELETING' });
    await get(ALICE, 'w', 'e1');
    await api.call(ALICE, 'DAIEngineService', 'DeleteDAIEngine', { name: name('w', 'e1') });
    // It reads as DELETING until the operator has cleaned up and released its finalizer.
    expect(engineOf(await get(ALICE, 'w', 'e1'))).toMatchObject({ state: 'STATE_DELETING' });
    api.store.release(ENGINE, name('w', 'e1'));
    expect((await getFails(ALICE, 'w', 'e1')).code).toBe(Code.NOT_FOUND);
    expect((await actFails(ALICE, 'DeleteDAIEngine', 'w', 'e1')).code).toBe(Code.NOT_FOUND);
    await api.call(ALICE, 'DAIEngineService', 'DeleteDAIEngine', {
      name: name('w', 'e1'),
      allowMissing: true,
    });
  });
});
