/**
 * The version services' alias rules on the in-memory store: an alias names one version of its
 * workspace, moves to the version it is given to (also under concurrent assignments, which take
 * a lock), and names its version wherever a version name is read. The same rules run over REST
 * on a real control plane in test/services/versions.test.ts.
 */
import { Code } from '../errors/code.ts';
import type { Json } from '../json/canonical.ts';
import { caller, InMemoryApi } from '../../../test/helpers/in-memory-api.ts';

const ADMIN = caller('users/admin', ['admin']);
const SERVICE = 'DAIEngineVersionService';
const VERSION = {
  deprecated: false,
  aliases: [] as string[],
  image: 'registry.example.com/engine:1.0',
  imagePullPolicy: 'IMAGE_PULL_POLICY_IF_NOT_PRESENT',
  imagePullSecrets: ['regcred'],
};
const name = (workspace: string, id: string): string => `workspaces/${workspace}/daiEngineVersions/${id}`;

let api: InMemoryApi;
const create = (workspace: string, id: string, version: Record<string, Json> = {}) =>
  api.call(ADMIN, SERVICE, 'CreateDAIEngineVersion', {
    parent: `workspaces/${workspace}`,
    daiEngineVersionId: id,
    daiEngineVersion: { ...VERSION, ...version },
  });
const assign = (workspace: string, id: string, aliases: string[]) =>
  api.call(ADMIN, SERVICE, 'AssignDAIEngineVersionAliases', { name: name(workspace, id), aliases });

/** Each version's aliases, by id. */
async function aliasesIn(workspace: string): Promise<Record<string, Json>> {
  const listed = await api.call(ADMIN, SERVICE, 'ListDAIEngineVersions', {
    parent: `workspaces/${workspace}`,
  });
  const versions = (listed['daiEngineVersions'] ?? []) as { name: string; aliases?: string[] }[];
  return Object.fromEntries(versions.map((v) => [v.name.split('/').pop() ?? '', v.aliases ?? []]));
}

beforeEach(() => {
  api = new InMemoryApi();
});

test('an alias moves to the version it is assigned to, within the workspace only', async () => {
  await create('w', '1.0.1', { aliases: ['latest', 'bar'] });
  await create('w', '1.0.2', { aliases: ['baz', 'foo'] });
  await create('other', '1.0.1', { aliases: ['latest'] });
  const assigned = await assign('w', '1.0.1', ['latest', 'baz']);
  // The answer lists every version of the workspace, as they now are, newest first.
  expect(
    (assigned['daiEngineVersions'] as { name: string; aliases: string[] }[]).map((v) => [v.name, v.aliases]),
  ).toEqual([
    [name('w', '1.0.2'), ['foo']],
    [name('w', '1.0.1'), ['latest', 'baz']],
  ]);
  expect(await aliasesIn('other')).toEqual({ '1.0.1': ['latest'] });
  // An alias names its version wherever a version name is read.
  const latest = await api.call(ADMIN, SERVICE, 'GetDAIEngineVersion', { name: name('w', 'latest') });
  expect(latest['daiEngineVersion']).toMatchObject({ name: name('w', '1.0.1') });
  expect((await api.fails(ADMIN, SERVICE, 'GetDAIEngineVersion', { name: name('w', 'nothing') })).code).toBe(
    Code.NOT_FOUND,
  );
  // A new version given a held alias takes it too.
  expect((await create('w', '1.0.3', { aliases: ['latest'] }))['daiEngineVersion']).toMatchObject({
    aliases: ['latest'],
  });
  expect(await aliasesIn('w')).toEqual({ '1.0.3': ['latest'], '1.0.2': ['foo'], '1.0.1': ['baz'] });
  // An empty list removes all of a version's aliases.
  await assign('w', '1.0.2', []);
  expect((await aliasesIn('w'))['1.0.2']).toEqual([]);
});

test('concurrent assignments of the same aliases leave them on exactly one version', async () => {
  const ids = ['2.0.1', '2.0.2', '2.0.3', '2.0.4', '2.0.5', '2.0.6'];
  for (const id of ids) await create('w', id);
  await Promise.all(ids.map((id) => assign('w', id, ['latest', 'stable'])));
  const holders = Object.entries(await aliasesIn('w')).filter(
    ([, aliases]) => (aliases as string[]).length > 0,
  );
  expect(holders).toHaveLength(1);
  expect(holders[0]?.[1]).toEqual(['latest', 'stable']);
});

test.each<[string, string, Record<string, Json>, string]>([
  ['an id that is not a version', 'latest', {}, 'dai_engine_version_id'],
  ['a missing image', '3.0.0', { image: '' }, 'dai_engine_version.image'],
  ['an alias that breaks the id pattern', '3.0.1', { aliases: ['Latest'] }, 'dai_engine_version.aliases[0]'],
  ['an alias listed twice', '3.0.2', { aliases: ['a', 'a'] }, 'dai_engine_version.aliases[1]'],
])('refuses %s naming the field, and stores nothing', async (_what, id, version, field) => {
  const failure = await api.fails(ADMIN, SERVICE, 'CreateDAIEngineVersion', {
    parent: 'workspaces/w',
    daiEngineVersionId: id,
    daiEngineVersion: { ...VERSION, ...version },
  });
  expect(failure.code).toBe(Code.INVALID_ARGUMENT);
  expect(failure.message).toContain(field);
  expect(await aliasesIn('w')).toEqual({});
});

test('aliases change only through assignment, and a missing version has none to assign', async () => {
  await create('w', '4.0.0', { aliases: ['kept'] });
  const masked = await api.fails(ADMIN, SERVICE, 'UpdateDAIEngineVersion', {
    daiEngineVersion: { ...VERSION, name: name('w', '4.0.0'), aliases: ['x'] },
    updateMask: 'aliases',
  });
  expect(masked.code).toBe(Code.INVALID_ARGUMENT);
  expect(masked.message).toContain('unknown path "aliases"');
  const bad = await api.fails(ADMIN, SERVICE, 'AssignDAIEngineVersionAliases', {
    name: name('w', '4.0.0'),
    aliases: ['ok', 'Not_OK'],
  });
  expect(bad).toMatchObject({
    code: Code.INVALID_ARGUMENT,
    message: expect.stringContaining('aliases[1]') as unknown,
  });
  const missing = await api.fails(ADMIN, SERVICE, 'AssignDAIEngineVersionAliases', {
    name: name('w', '9.9.9'),
    aliases: ['x'],
  });
  expect(missing.code).toBe(Code.NOT_FOUND);
  expect(await aliasesIn('w')).toEqual({ '4.0.0': ['kept'] });
});
