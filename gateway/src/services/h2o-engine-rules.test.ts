/**
 * The H2O engine service's rules on the in-memory store: node counts from the profile, and a
 * termination that happens once. The same rules run over REST on a real control plane in
 * test/services/engines.test.ts.
 */
import { Code } from '../errors/code.ts';
import { RESOURCE_KINDS } from '../../../shared/resources.ts';
import { caller, InMemoryApi } from '../../../test/helpers/in-memory-api.ts';

const ENGINE = RESOURCE_KINDS.H2OEngine;
const GIB = 1024 ** 3;
const ALICE = caller('users/alice');
const ADMIN = caller('users/admin', ['admin']);
const SERVICE = 'H2OEngineService';
const numeric = (min: string, def: string, max: string | null = null) => ({
  min,
  default: def,
  max,
  cumulativeMax: null,
});
const H2O = {
  profile: 'workspaces/global/h2oEngineProfiles/standard',
  h2oEngineVersion: 'workspaces/global/h2oEngineVersions/latest',
};
const name = (id: string): string => `workspaces/w/h2oEngines/${id}`;

let api: InMemoryApi;
const create = (id: string, engine: Record<string, unknown>) =>
  api.call(ALICE, SERVICE, 'CreateH2OEngine', {
    parent: 'workspaces/w',
    h2oEngineId: id,
    h2oEngine: { ...H2O, ...engine },
  });

beforeEach(async () => {
  api = new InMemoryApi();
  await api.call(ADMIN, 'H2OEngineProfileService', 'CreateH2OEngineProfile', {
    parent: 'workspaces/global',
    h2oEngineProfileId: 'standard',
    h2oEngineProfile: {
      displayName: 'Standard',
      priority: 1,
      enabled: true,
      cpuConstraint: numeric('1', '2', '8'),
      gpuConstraint: numeric('0', '0', '2'),
      memoryBytesConstraint: numeric(String(GIB), String(4 * GIB), String(64 * GIB)),
      nodeCountConstraint: numeric('1', '1', '4'),
      maxIdleDurationConstraint: { min: '0s', default: '3600s', max: '86400s' },
      maxRunningDurationConstraint: { min: '0s', default: '14400s', max: null },
    },
  });
  await api.call(ADMIN, 'H2OEngineVersionService', 'CreateH2OEngineVersion', {
    parent: 'workspaces/global',
    h2oEngineVersionId: '3.46.0.1',
    h2oEngineVersion: { image: 'h2o:3.46.0.1', aliases: ['latest'] },
  });
});

test('an engine takes its node count within the profile, with the profile defaults and the version snapshot', async () => {
  const created = (await create('h1', { nodeCount: 2 }))['h2oEngine'];
  expect(created).toMatchObject({
    name: name('h1'),
    nodeCount: 2,
    cpu: 2,
    state: 'STATE_STARTING',
    h2oEngineVersion: 'workspaces/global/h2oEngineVersions/3.46.0.1',
    h2oEngineVersionInfo: { image: 'h2o:3.46.0.1' },
  });
  const tooMany = await api.fails(ALICE, SERVICE, 'CreateH2OEngine', {
    parent: 'workspaces/w',
    h2oEngineId: 'h2',
    h2oEngine: { ...H2O, nodeCount: 5 },
  });
  expect(tooMany.code).toBe(Code.INVALID_ARGUMENT);
  expect(tooMany.message).toContain('h2o_engine.node_count');
  expect((await api.fails(ALICE, SERVICE, 'GetH2OEngine', { name: name('h2') })).code).toBe(Code.NOT_FOUND);
});

test('an engine is terminated once: the wanted lifecycle is recorded, and a second termination is refused', async () => {
  await create('h1', {});
  await api.report(ENGINE, name('h1'), 'STATE_RUNNING');
  const terminated = (await api.call(ALICE, SERVICE, 'TerminateH2OEngine', { name: name('h1') }))[
    'h2oEngine'
  ];
  expect(terminated).toMatchObject({ name: name('h1'), state: 'STATE_TERMINATING', reconciling: true });
  expect((await api.store.get(ENGINE, name('h1'))).intent).toEqual({ terminated: true });
  const again = await api.fails(ALICE, SERVICE, 'TerminateH2OEngine', { name: name('h1') });
  expect(again.code).toBe(Code.FAILED_PRECONDITION);
});
