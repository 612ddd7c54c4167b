import { status } from '@grpc/grpc-js';
import { useApiServer } from '../helpers/api-server.ts';

const api = useApiServer({ namespace: 'versions-test' });
const enc = encodeURIComponent;

const KINDS = [
  {
    service: 'DAIEngineVersionService',
    kind: 'DAIEngineVersion',
    collection: 'daiEngineVersions',
    field: 'daiEngineVersion',
    snake: 'dai_engine_version',
  },
  {
    service: 'H2OEngineVersionService',
    kind: 'H2OEngineVersion',
    collection: 'h2oEngineVersions',
    field: 'h2oEngineVersion',
    snake: 'h2o_engine_version',
  },
] as const;

const VERSION = {
  deprecated: false,
  aliases: [] as string[],
  image: 'registry.example.com/engine:1.0',
  imagePullPolicy: 'IMAGE_PULL_POLICY_IF_NOT_PRESENT',
  imagePullSecrets: ['regcred'],
};

describe.each(KINDS)('$service over REST', (k) => {
  const create = (workspace: string, id: string, body: unknown = VERSION) =>
    api().rest('POST', `/v1/${enc(`workspaces/${workspace}`)}/${k.collection}?${k.field}Id=${id}`, body);
  const path = (workspace: string, id: string) =>
    `/v1/${enc(`workspaces/${workspace}/${k.collection}/${id}`)}`;
  /** Each version's aliases, by id. */
  const aliasesIn = async (workspace: string): Promise<Record<string, string[]>> => {
    const list = await api().rest('GET', `/v1/workspaces/${workspace}/${k.collection}`);
    return Object.fromEntries(
      (list.json[k.collection] as { name: string; aliases: string[] }[]).map((v) => [
        v.name.split('/').pop() ?? '',
        v.aliases,
      ]),
    );
  };

  test('creates, gets, lists newest first, updates and deletes', async () => {
    const ws = `${k.collection.toLowerCase()}-crud`;
    for (const id of ['1.10.4', '1.10.10', '1.10.6.1', '1.10.6-alpha', '1.9.0']) {
      expect((await create(ws, id)).status).toBe(200);
    }
    const list = await api().rest('GET', `/v1/workspaces/${ws}/${k.collection}?pageSize=10`);
    expect((list.json[k.collection] as { name: string }[]).map((v) => v.name.split('/').pop())).toEqual([
      '1.10.10',
      '1.10.6.1',
      '1.10.6-alpha',
      '1.10.4',
      '1.9.0',
    ]);
    const got = await api().rest('GET', path(ws, '1.10.4'));
    expect(got.json[k.field]).toMatchObject({
      name: `workspaces/${ws}/${k.collection}/1.10.4`,
      image: VERSION.image,
      imagePullPolicy: 'IMAGE_PULL_POLICY_IF_NOT_PRESENT',
      imagePullSecrets: ['regcred'],
      creator: 'users/developer',
    });
    const updated = await api().rest('PATCH', `${path(ws, '1.10.4')}?updateMask=deprecated,image`, {
      ...VERSION,
      deprecated: true,
      image: 'registry.example.com/engine:1.0.1',
      aliases: ['ignored'],
    });
    expect(updated.status).toBe(200);
    expect(updated.json[k.field]).toMatchObject({
      deprecated: true,
      image: 'registry.example.com/engine:1.0.1',
      aliases: [],
    });
    expect((await api().rest('DELETE', path(ws, '1.10.4'))).status).toBe(200);
    expect((await api().rest('GET', path(ws, '1.10.4'))).status).toBe(404);
  });

  test('moves an alias to the version it is assigned to, within the workspace only', async () => {
    const ws = `${k.collection.toLowerCase()}-alias`;
    await create(ws, '1.0.1', { ...VERSION, aliases: ['latest', 'bar'] });
    await create(ws, '1.0.2', { ...VERSION, aliases: ['baz', 'foo'] });
    await create(`${ws}-other`, '1.0.1', { ...VERSION, aliases: ['latest'] });

    const assigned = await api().rest('POST', `${path(ws, '1.0.1')}:assignAliases`, {
      aliases: ['latest', 'baz'],
    });
    expect(assigned.status).toBe(200);
    // The answer lists every version of the workspace, as they now are.
    expect(
      (assigned.json[k.collection] as { name: string; aliases: string[] }[]).map((v) => [
        v.name.split('/').pop() ?? '',
        v.aliases,
      ]),
    ).toEqual([
      ['1.0.2', ['foo']],
      ['1.0.1', ['latest', 'baz']],
    ]);
    expect(await aliasesIn(`${ws}-other`)).toEqual({ '1.0.1': ['latest'] });

    // An alias names its version wherever a version name is read.
    const latest = await api().rest('GET', path(ws, 'latest'));
    expect(latest.json[k.field]).toMatchObject({ name: `workspaces/${ws}/${k.collection}/1.0.1` });
    expect((await api().rest('GET', path(ws, 'nothing'))).status).toBe(404);

    // A new version given a held alias takes it too.
    const taking = await create(ws, '1.0.3', { ...VERSION, aliases: ['latest'] });
    expect(taking.json[k.field]).toMatchObject({ aliases: ['latest'] });
    expect(await aliasesIn(ws)).toEqual({ '1.0.3': ['latest'], '1.0.2': ['foo'], '1.0.1': ['baz'] });

    // An empty list removes all of a version's aliases.
    await api().rest('POST', `${path(ws, '1.0.2')}:assignAliases`, { aliases: [] });
    expect((await aliasesIn(ws))['1.0.2']).toEqual([]);
  });

  test('keeps aliases unique under concurrent assignments', async () => {
    const ws = `${k.collection.toLowerCase()}-race`;
    const ids = ['2.0.1', '2.0.2', '2.0.3', '2.0.4'];
    for (const id of ids) await create(ws, id);
    const results = await Promise.all(
      ids.map((id) => api().rest('POST', `${path(ws, id)}:assignAliases`, { aliases: ['latest', 'stable'] })),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const holders = Object.entries(await aliasesIn(ws)).filter(([, aliases]) => aliases.length > 0);
    expect(holders).toHaveLength(1);
    expect(holders[0]?.[1]).toEqual(['latest', 'stable']);
  });

  test.each<[string, string, unknown, string]>([
    ['an id that is not a version', 'latest', VERSION, `${k.snake}_id`],
    ['an id over 63 characters', `1.${'1'.repeat(62)}`, VERSION, `${k.snake}_id`],
    ['a missing image', '3.0.0', { ...VERSION, image: '' }, `${k.snake}.image`],
    [
      'an alias that breaks the id pattern',
      '3.0.1',
      { ...VERSION, aliases: ['Latest'] },
      `${k.snake}.aliases[0]`,
    ],
    ['an alias listed twice', '3.0.2', { ...VERSION, aliases: ['a', 'a'] }, `${k.snake}.aliases[1]`],
    [
      'a pull secret that is not a Secret name',
      '3.0.3',
      { ...VERSION, imagePullSecrets: ['Not A Name'] },
      `${k.snake}.image_pull_secrets[0]`,
    ],
    [
      'an unknown pull policy',
      '3.0.4',
      { ...VERSION, imagePullPolicy: 'SOMETIMES' },
      `${k.snake}.image_pull_policy`,
    ],
  ])('refuses %s with 400 naming the field, and stores nothing', async (_what, id, body, field) => {
    const ws = `${k.collection.toLowerCase()}-bad`;
    const response = await create(ws, id, body);
    expect(response.status).toBe(400);
    expect(String(response.json['message'])).toContain(field);
    expect(Object.keys(await aliasesIn(ws))).not.toContain(id);
  });

  test('refuses to change aliases through update, and bad aliases in assignAliases', async () => {
    const ws = `${k.collection.toLowerCase()}-mask`;
    await create(ws, '4.0.0', { ...VERSION, aliases: ['kept'] });
    const masked = await api().rest('PATCH', `${path(ws, '4.0.0')}?updateMask=aliases`, {
      ...VERSION,
      aliases: ['x'],
    });
    expect(masked.status).toBe(400);
    expect(String(masked.json['message'])).toContain('unknown path "aliases"');
    const bad = await api().rest('POST', `${path(ws, '4.0.0')}:assignAliases`, { aliases: ['ok', 'Not_OK'] });
    expect(bad.status).toBe(400);
    expect(String(bad.json['message'])).toContain('aliases[1]');
    const missing = await api().rest('POST', `${path(ws, '9.9.9')}:assignAliases`, { aliases: ['x'] });
    expect(missing.status).toBe(404);
    expect(await aliasesIn(ws)).toEqual({ '4.0.0': ['kept'] });
  });
});

describe.each(KINDS)('$service over gRPC', (k) => {
  const rpc = (method: string, request: object) => api().grpc(`${k.service}.${method}`, request);
  const parent = `workspaces/grpc-${k.collection.toLowerCase()}`;
  const message = {
    deprecated: false,
    aliases: ['latest'],
    image: 'engine:1',
    imagePullPolicy: 0,
    imagePullSecrets: [],
  };

  test('serves create, get (also by alias), list, update, assignAliases and delete', async () => {
    const created = await rpc(`Create${k.kind}`, { parent, [`${k.field}Id`]: '1.0.0', [k.field]: message });
    expect(created[k.field]).toMatchObject({ name: `${parent}/${k.collection}/1.0.0`, aliases: ['latest'] });
    await rpc(`Create${k.kind}`, {
      parent,
      [`${k.field}Id`]: '1.0.1',
      [k.field]: { ...message, aliases: [] },
    });
    expect(await rpc(`Get${k.kind}`, { name: `${parent}/${k.collection}/latest` })).toEqual(created);
    const list = await rpc(`List${k.kind}s`, { parent, pageSize: 1, pageToken: '' });
    expect((list[k.collection] as { name: string }[]).map((v) => v.name)).toEqual([
      `${parent}/${k.collection}/1.0.1`,
    ]);
    expect(list['nextPageToken']).not.toBe('');
    const updated = await rpc(`Update${k.kind}`, {
      [k.field]: { ...message, name: `${parent}/${k.collection}/1.0.0`, deprecated: true },
      updateMask: ['deprecated'],
    });
    expect(updated[k.field]).toMatchObject({ deprecated: true, aliases: ['latest'] });
    const assigned = await rpc(`Assign${k.kind}Aliases`, {
      name: `${parent}/${k.collection}/1.0.1`,
      aliases: ['latest'],
    });
    expect((assigned[k.collection] as { aliases: string[] }[]).map((v) => v.aliases)).toEqual([
      ['latest'],
      [],
    ]);
    expect(await rpc(`Delete${k.kind}`, { name: `${parent}/${k.collection}/1.0.0` })).toEqual({});
    await expect(rpc(`Get${k.kind}`, { name: `${parent}/${k.collection}/1.0.0` })).rejects.toMatchObject({
      code: status.NOT_FOUND,
    });
  });
});
