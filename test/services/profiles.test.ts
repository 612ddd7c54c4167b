import { Metadata, status } from '@grpc/grpc-js';
import type { Authenticate } from '../../gateway/src/call/handler.ts';
import { CreateDAIEngineProfileRequest } from '../../gateway/src/gen/ai/h2o/engine/v1/dai_engine_profile_service.pb.ts';
import { CreateH2OEngineProfileRequest } from '../../gateway/src/gen/ai/h2o/engine/v1/h2o_engine_profile_service.pb.ts';
import { CreateNotebookEngineProfileRequest } from '../../gateway/src/gen/ai/h2o/engine/v1/notebook_engine_profile_service.pb.ts';
import { useApiServer } from '../helpers/api-server.ts';

/** `Bearer <subject>[:<role>,<role>…]` names the caller and its roles. */
const authenticate: Authenticate = (headers) => {
  const [subject = '', roles = ''] = (headers['authorization'] ?? 'Bearer users/developer')
    .replace(/^Bearer /, '')
    .split(':');
  return Promise.resolve({
    subject,
    displayName: `Name of ${subject}`,
    roles: roles.split(',').filter(Boolean),
  });
};
const api = useApiServer({ namespace: 'profiles-test', authenticate });

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
const durations = { min: '0s', default: '3600s', max: '86400s' };
const COMMON = {
  displayName: 'Standard',
  priority: 5,
  enabled: true,
  assignedOidcRolesEnabled: false,
  assignedOidcRoles: [],
  maxRunningEngines: null,
  cpuConstraint: numeric('1', '2', '8'),
  gpuConstraint: numeric('0', '0', '2'),
  memoryBytesConstraint: numeric('1073741824', '8589934592', null, '68719476736'),
  maxIdleDurationConstraint: durations,
  maxRunningDurationConstraint: durations,
  yamlPodTemplateSpec: '',
  yamlGpuTolerations: '',
  gpuResourceName: null,
};

/** What differs between the three profile kinds. */
interface Kind {
  service: string;
  kind: string;
  collection: string;
  field: string;
  snake: string;
  body: Record<string, unknown>;
  /** The same profile as the gRPC request message wants it. */
  grpcCreate(parent: string, id: string): object;
}

const grpcConstraints = {
  cpuConstraint: { min: '1', default: '2', max: '8' },
  gpuConstraint: { min: '0', default: '0' },
  memoryBytesConstraint: { min: '1', default: '1024' },
  maxIdleDurationConstraint: { min: { seconds: '0' }, default: { seconds: '3600' } },
  maxRunningDurationConstraint: { min: { seconds: '0' }, default: { seconds: '3600' } },
};

const KINDS: Kind[] = [
  {
    service: 'DAIEngineProfileService',
    kind: 'DAIEngineProfile',
    collection: 'daiEngineProfiles',
    field: 'daiEngineProfile',
    snake: 'dai_engine_profile',
    body: {
      ...COMMON,
      storageBytesConstraint: numeric('1073741824', '10737418240'),
      maxNonInteractionDuration: null,
      maxUnusedDuration: null,
      configurationOverride: { disk_limit_gb: '100' },
      baseConfiguration: {},
      configEditability: null,
      tritonEnabled: false,
      dataDirectoryStorageClass: '',
    },
    grpcCreate: (parent, id) =>
      CreateDAIEngineProfileRequest.fromPartial({
        parent,
        daiEngineProfileId: id,
        daiEngineProfile: {
          enabled: true,
          ...grpcConstraints,
          storageBytesConstraint: { min: '1', default: '1' },
        },
      }),
  },
  {
    service: 'H2OEngineProfileService',
    kind: 'H2OEngineProfile',
    collection: 'h2oEngineProfiles',
    field: 'h2oEngineProfile',
    snake: 'h2o_engine_profile',
    body: {
      ...COMMON,
      nodeCountConstraint: numeric('1', '1', '4'),
      javaClasspath: '',
      javaOptions: '-XX:+UseG1GC',
      h2oOptions: '',
    },
    grpcCreate: (parent, id) =>
      CreateH2OEngineProfileRequest.fromPartial({
        parent,
        h2oEngineProfileId: id,
        h2oEngineProfile: {
          enabled: true,
          ...grpcConstraints,
          nodeCountConstraint: { min: '1', default: '1' },
        },
      }),
  },
  {
    service: 'NotebookEngineProfileService',
    kind: 'NotebookEngineProfile',
    collection: 'notebookEngineProfiles',
    field: 'notebookEngineProfile',
    snake: 'notebook_engine_profile',
    body: {
      ...COMMON,
      storageBytesConstraint: numeric('1073741824', '10737418240'),
      storageClassName: '',
      syncGitRepositoryEnabled: false,
      gitRepository: '',
      gitRef: null,
      gitDirectoryName: null,
    },
    grpcCreate: (parent, id) =>
      CreateNotebookEngineProfileRequest.fromPartial({
        parent,
        notebookEngineProfileId: id,
        notebookEngineProfile: {
          enabled: true,
          ...grpcConstraints,
          storageBytesConstraint: { min: '1', default: '1' },
        },
      }),
  },
];

const enc = encodeURIComponent;

describe.each(KINDS)('$service over REST', (k) => {
  const ws = `rest-${k.collection.toLowerCase()}`;
  const create = (id: string, body: unknown, workspace = ws) =>
    api().rest('POST', `/v1/${enc(`workspaces/${workspace}`)}/${k.collection}?${k.field}Id=${id}`, body);
  const names = async (workspace = ws): Promise<string[]> => {
    const list = await api().rest('GET', `/v1/workspaces/${workspace}/${k.collection}`);
    return (list.json[k.collection] as { name: string }[]).map((p) => p.name);
  };

  test('creates with server defaults and the caller as creator, then gets, updates and deletes', async () => {
    const created = await create('standard', k.body);
    expect(created.status).toBe(200);
    const profile = created.json[k.field] as Record<string, unknown>;
    expect(profile).toMatchObject({
      name: `workspaces/${ws}/${k.collection}/standard`,
      gpuResourceName: 'nvidia.com/gpu',
      creator: 'users/developer',
      creatorDisplayName: 'Name of users/developer',
      updater: '',
      cpuConstraint: { min: '1', default: '2', max: '8' },
      memoryBytesConstraint: { cumulativeMax: '68719476736' },
      maxIdleDurationConstraint: { min: '0s', default: '3600s', max: '86400s' },
    });
    expect(profile['updateTime']).toBeUndefined();
    if (k.kind === 'NotebookEngineProfile')
      expect(profile).toMatchObject({ gitRef: 'HEAD', gitDirectoryName: 'Example' });
    if (k.kind === 'DAIEngineProfile') expect(profile['configEditability']).toBe('CONFIG_EDITABILITY_FULL');

    const path = `/v1/${enc(`workspaces/${ws}/${k.collection}/standard`)}`;
    expect((await api().rest('GET', path)).json).toEqual(created.json);

    const updated = await api().rest(
      'PATCH',
      `${path}?updateMask=display_name,cpu_constraint`,
      { ...k.body, displayName: 'Bigger', cpuConstraint: numeric('2', '4', null), priority: 99 },
      { Authorization: 'Bearer users/admin' },
    );
    expect(updated.status).toBe(200);
    expect(updated.json[k.field]).toMatchObject({
      displayName: 'Bigger',
      cpuConstraint: { min: '2', default: '4' },
      priority: 5,
      updater: 'users/admin',
      creator: 'users/developer',
    });
    expect((updated.json[k.field] as Record<string, unknown>)['cpuConstraint']).not.toHaveProperty('max');

    expect((await api().rest('DELETE', path)).status).toBe(200);
    expect((await api().rest('GET', path)).status).toBe(404);
    expect((await api().rest('DELETE', path)).status).toBe(404);
  });

  test('lists by priority, then name, in pages', async () => {
    const workspace = `${ws}-order`;
    for (const [id, priority] of [
      ['c', 1],
      ['a', 2],
      ['b', 1],
      ['d', 0],
    ] as const) {
      expect((await create(id, { ...k.body, priority }, workspace)).status).toBe(200);
    }
    const first = await api().rest('GET', `/v1/workspaces/${workspace}/${k.collection}?pageSize=3`);
    const second = await api().rest(
      'GET',
      `/v1/workspaces/${workspace}/${k.collection}?pageSize=3&pageToken=${String(first.json['nextPageToken'])}`,
    );
    const ids = [first, second].flatMap((r) =>
      (r.json[k.collection] as { name: string }[]).map((p) => p.name.split('/').pop()),
    );
    expect(ids).toEqual(['d', 'b', 'c', 'a']);
    expect(second.json['nextPageToken']).toBe('');
  });

  test('lists as assigned only the enabled profiles that the caller’s roles reach', async () => {
    const workspace = `${ws}-assigned`;
    await create('open', k.body, workspace);
    await create('disabled', { ...k.body, enabled: false }, workspace);
    await create(
      'gpu-team',
      { ...k.body, assignedOidcRolesEnabled: true, assignedOidcRoles: ['gpu', 'admin'] },
      workspace,
    );
    await create('nobody', { ...k.body, assignedOidcRolesEnabled: true, assignedOidcRoles: [] }, workspace);
    const assigned = async (auth: string): Promise<string[]> => {
      const r = await api().rest(
        'GET',
        `/v1/workspaces/${workspace}/${k.collection}:listAssigned`,
        undefined,
        {
          Authorization: auth,
        },
      );
      expect(r.status).toBe(200);
      return (r.json[k.collection] as { name: string }[]).map((p) => p.name.split('/').pop() ?? '');
    };
    expect(await assigned('Bearer users/ann:gpu')).toEqual(['gpu-team', 'open']);
    expect(await assigned('Bearer users/bob:cpu,other')).toEqual(['open']);
    expect((await names(workspace)).length).toBe(4);
  });

  test('copies a profile into another workspace as the caller, and refuses a taken id', async () => {
    await create('source', { ...k.body, displayName: 'Source' });
    const source = `/v1/${enc(`workspaces/${ws}/${k.collection}/source`)}`;
    const copy = await api().rest(
      'POST',
      `${source}:copy`,
      { parent: `workspaces/${ws}-copy`, [`${k.field}Id`]: 'copied' },
      { Authorization: 'Bearer users/carol' },
    );
    expect(copy.status).toBe(200);
    expect(copy.json[k.field]).toMatchObject({
      name: `workspaces/${ws}-copy/${k.collection}/copied`,
      displayName: 'Source',
      creator: 'users/carol',
      cpuConstraint: { min: '1', default: '2', max: '8' },
    });
    const again = await api().rest('POST', `${source}:copy`, {
      parent: `workspaces/${ws}-copy`,
      [`${k.field}Id`]: 'copied',
    });
    expect(again.status).toBe(409);
    const missing = await api().rest('POST', `/v1/${enc(`workspaces/${ws}/${k.collection}/missing`)}:copy`, {
      parent: `workspaces/${ws}-copy`,
      [`${k.field}Id`]: 'other',
    });
    expect(missing.status).toBe(404);
    expect(await names(`${ws}-copy`)).toEqual([`workspaces/${ws}-copy/${k.collection}/copied`]);
  });

  test.each<[string, Record<string, unknown>, string]>([
    ['a missing cpu constraint', { cpuConstraint: null }, 'cpu_constraint'],
    ['a default below min', { cpuConstraint: numeric('2', '1') }, 'cpu_constraint.default'],
    ['a max below the default', { gpuConstraint: numeric('0', '2', '1') }, 'gpu_constraint.max'],
    [
      'a cumulative max below the default',
      { memoryBytesConstraint: numeric('1', '10', null, '5') },
      'memory_bytes_constraint.cumulative_max',
    ],
    ['a cpu minimum of zero', { cpuConstraint: numeric('0', '1') }, 'cpu_constraint.min'],
    [
      'a duration default above max',
      { maxIdleDurationConstraint: { min: '0s', default: '7200s', max: '3600s' } },
      'max_idle_duration_constraint.max',
    ],
    [
      'a duration default below min',
      { maxRunningDurationConstraint: { min: '60s', default: '30s', max: null } },
      'max_running_duration_constraint.default',
    ],
    ['a pod template that is not YAML', { yamlPodTemplateSpec: 'spec: [unclosed' }, 'yaml_pod_template_spec'],
    [
      'tolerations that are not a list',
      { yamlGpuTolerations: 'key: nvidia.com/gpu' },
      'yaml_gpu_tolerations',
    ],
    ['a GPU resource without a domain', { gpuResourceName: 'gpu' }, 'gpu_resource_name'],
    ['a display name over 63 characters', { displayName: 'x'.repeat(64) }, 'display_name'],
    ['a negative running-engine limit', { maxRunningEngines: -1 }, 'max_running_engines'],
    ['an int64 that is not a number', { cpuConstraint: numeric('one', '2') }, 'cpu_constraint.min'],
  ])('refuses %s with 400 naming the field, and stores nothing', async (_what, change, field) => {
    const response = await create('rejected', { ...k.body, ...change });
    expect(response.status).toBe(400);
    expect(String(response.json['message'])).toContain(field);
    expect(JSON.stringify(response.json['details'])).toContain(field);
    expect(await names()).not.toContain(`workspaces/${ws}/${k.collection}/rejected`);
  });

  test('accepts inclusive bounds, an unlimited max and no cumulative max', async () => {
    const response = await create('edges', {
      ...k.body,
      cpuConstraint: numeric('4', '4', '4'),
      gpuConstraint: numeric('0', '0'),
      maxIdleDurationConstraint: { min: '1800s', default: '1800s', max: null },
      yamlPodTemplateSpec: 'spec:\n  nodeSelector:\n    pool: engines\n',
      yamlGpuTolerations: '- key: nvidia.com/gpu\n  operator: Exists\n  effect: NoSchedule\n',
      gpuResourceName: 'amd.com/gpu',
      maxRunningEngines: 0,
    });
    expect(response.status).toBe(200);
    expect(response.json[k.field]).toMatchObject({ gpuResourceName: 'amd.com/gpu', maxRunningEngines: 0 });
    expect(
      (response.json[k.field] as Record<string, Record<string, unknown>>)['gpuConstraint'],
    ).not.toHaveProperty('max');
  });

  test.each<[string, string, number, string]>([
    ['a bad id', `/v1/workspaces/w/${k.collection}?${k.field}Id=Bad_Id`, 400, `${k.snake}_id`],
    ['a missing id', `/v1/workspaces/w/${k.collection}`, 400, `${k.snake}_id`],
    ['a parent of all workspaces', `/v1/workspaces/-/${k.collection}?${k.field}Id=p`, 400, 'parent'],
  ])('refuses a create with %s', async (_what, path, code, field) => {
    const response = await api().rest('POST', path, k.body);
    expect(response.status).toBe(code);
    expect(String(response.json['message'])).toContain(field);
  });

  test.each<[string, string, number, string]>([
    ['no mask', '', 400, 'update_mask'],
    ['a camelCase path (paths are case sensitive)', 'displayName', 400, 'unknown path "displayName"'],
    ['"*" beside other paths', '*,display_name', 400, '"*" must be the only path'],
    ['an output-only path', 'creator', 400, 'unknown path "creator"'],
  ])('refuses an update with %s and changes nothing', async (_what, mask, code, message) => {
    await create('masked', k.body);
    const path = `/v1/${enc(`workspaces/${ws}/${k.collection}/masked`)}?updateMask=${enc(mask)}`;
    const response = await api().rest('PATCH', path, { ...k.body, displayName: 'Changed' });
    expect(response.status).toBe(code);
    expect(String(response.json['message'])).toContain(message);
    const current = await api().rest('GET', `/v1/${enc(`workspaces/${ws}/${k.collection}/masked`)}`);
    expect(current.json[k.field]).toMatchObject({ displayName: 'Standard', updater: '' });
  });

  test('keeps a queue priority apart from the list priority: set, changed alone by its path, copied', async () => {
    const created = await create('queued', { ...k.body, queuePriority: -5 });
    expect(created.json[k.field]).toMatchObject({ priority: 5, queuePriority: -5 });
    const path = `/v1/${enc(`workspaces/${ws}/${k.collection}/queued`)}`;
    const raised = await api().rest('PATCH', `${path}?updateMask=queue_priority`, {
      ...k.body,
      queuePriority: 100,
      priority: 1,
    });
    expect(raised.status).toBe(200);
    expect(raised.json[k.field]).toMatchObject({ priority: 5, queuePriority: 100 });
    // As the official Python client updates: "*" with a body that has no queue priority.
    const { queuePriority: _left, ...withoutQueue } = raised.json[k.field] as Record<string, unknown>;
    const renamed = await api().rest('PATCH', `${path}?updateMask=*`, {
      ...withoutQueue,
      displayName: 'Renamed',
    });
    expect(renamed.json[k.field]).toMatchObject({ displayName: 'Renamed', queuePriority: 100 });
    const copy = await api().rest('POST', `${path}:copy`, {
      parent: `workspaces/${ws}-queue`,
      [`${k.field}Id`]: 'copied',
    });
    expect(copy.json[k.field]).toMatchObject({ queuePriority: 100 });
    // Unset means 0, the same as every profile made before queueing existed.
    const plain = await create('unqueued', k.body);
    expect(plain.json[k.field]).toMatchObject({ queuePriority: 0 });
    const tooHigh = await api().rest('PATCH', `${path}?updateMask=queue_priority`, {
      ...k.body,
      queuePriority: 2 ** 31,
    });
    expect(tooHigh.status).toBe(400);
    expect(String(tooHigh.json['message'])).toContain('queue_priority');
    expect((await api().rest('GET', path)).json[k.field]).toMatchObject({ queuePriority: 100 });
  });

  test('refuses an update that would break a constraint, and keeps the stored one', async () => {
    await create('guarded', k.body);
    const path = `/v1/${enc(`workspaces/${ws}/${k.collection}/guarded`)}`;
    const response = await api().rest('PATCH', `${path}?updateMask=cpu_constraint`, {
      ...k.body,
      cpuConstraint: numeric('4', '2'),
    });
    expect(response.status).toBe(400);
    expect((await api().rest('GET', path)).json[k.field]).toMatchObject({
      cpuConstraint: { min: '1', default: '2' },
    });
  });
});

describe('profile rules of one kind', () => {
  const create = (collection: string, id: string, body: unknown) =>
    api().rest(
      'POST',
      `/v1/workspaces/kind-rules/${collection}?${collection.replace(/s$/, '')}Id=${id}`,
      body,
    );
  const [dai, h2o, notebook] = KINDS as [Kind, Kind, Kind];

  test('an H2O profile needs a node count constraint of at least one node', async () => {
    expect(
      (await create('h2oEngineProfiles', 'no-nodes', { ...h2o.body, nodeCountConstraint: null })).status,
    ).toBe(400);
    const zero = await create('h2oEngineProfiles', 'zero', {
      ...h2o.body,
      nodeCountConstraint: numeric('0', '1'),
    });
    expect(String(zero.json['message'])).toContain('node_count_constraint.min');
  });

  test('a DAI profile keeps its configuration maps and editability, and refuses blank keys', async () => {
    const ok = await create('daiEngineProfiles', 'configured', {
      ...dai.body,
      baseConfiguration: { max_cores: '8' },
      configEditability: 'CONFIG_EDITABILITY_BASE_CONFIG_ONLY',
      maxUnusedDuration: '7200s',
    });
    expect(ok.json['daiEngineProfile']).toMatchObject({
      baseConfiguration: { max_cores: '8' },
      configurationOverride: { disk_limit_gb: '100' },
      configEditability: 'CONFIG_EDITABILITY_BASE_CONFIG_ONLY',
      maxUnusedDuration: '7200s',
    });
    const blank = await create('daiEngineProfiles', 'blank', {
      ...dai.body,
      baseConfiguration: { 'two words': 'x' },
    });
    expect(String(blank.json['message'])).toContain('base_configuration');
    const badEnum = await create('daiEngineProfiles', 'bad-enum', {
      ...dai.body,
      configEditability: 'SOMETIMES',
    });
    expect(badEnum.status).toBe(400);
    expect(String(badEnum.json['message'])).toContain('config_editability');
  });

  test('a notebook profile that syncs a repository needs its URL and a plain folder name', async () => {
    const noRepo = await create('notebookEngineProfiles', 'no-repo', {
      ...notebook.body,
      syncGitRepositoryEnabled: true,
    });
    expect(String(noRepo.json['message'])).toContain('git_repository');
    const nested = await create('notebookEngineProfiles', 'nested', {
      ...notebook.body,
      gitDirectoryName: 'a/b',
    });
    expect(String(nested.json['message'])).toContain('git_directory_name');
    const synced = await create('notebookEngineProfiles', 'synced', {
      ...notebook.body,
      syncGitRepositoryEnabled: true,
      gitRepository: 'https://git.example.com/team/notebooks.git',
      gitRef: 'main',
      gitDirectoryName: 'Team',
    });
    expect(synced.json['notebookEngineProfile']).toMatchObject({ gitRef: 'main', gitDirectoryName: 'Team' });
  });
});

describe.each(KINDS)('$service over gRPC', (k) => {
  const rpc = (method: string, request: object, metadata?: Metadata) =>
    api().grpc(`${k.service}.${method}`, request, metadata);
  const name = `workspaces/grpc/${k.collection}/p1`;

  test('serves create, get, list, listAssigned, update, copy and delete', async () => {
    const created = await rpc(`Create${k.kind}`, k.grpcCreate('workspaces/grpc', 'p1'));
    expect(created[k.field]).toMatchObject({
      name,
      gpuResourceName: 'nvidia.com/gpu',
      creator: 'users/developer',
    });
    expect(await rpc(`Get${k.kind}`, { name })).toEqual(created);
    const list = await rpc(`List${k.kind}s`, { parent: 'workspaces/grpc', pageSize: 0, pageToken: '' });
    expect(list).toEqual({ [k.collection]: [created[k.field]], nextPageToken: '' });
    const assigned = await rpc(`ListAssigned${k.kind}s`, {
      parent: 'workspaces/grpc',
      pageSize: 0,
      pageToken: '',
    });
    expect(assigned[k.collection]).toHaveLength(1);
    const updated = await rpc(`Update${k.kind}`, {
      [k.field]: { ...(created[k.field] as object), displayName: 'Renamed' },
      updateMask: ['display_name'],
    });
    expect(updated[k.field]).toMatchObject({ displayName: 'Renamed', updater: 'users/developer' });
    const copied = await rpc(`Copy${k.kind}`, {
      name,
      parent: 'workspaces/grpc-copy',
      [`${k.field}Id`]: 'p2',
    });
    expect(copied[k.field]).toMatchObject({
      name: `workspaces/grpc-copy/${k.collection}/p2`,
      displayName: 'Renamed',
    });
    expect(await rpc(`Delete${k.kind}`, { name })).toEqual({});
    await expect(rpc(`Get${k.kind}`, { name })).rejects.toMatchObject({ code: status.NOT_FOUND });
  });

  test('answers INVALID_ARGUMENT naming the field', async () => {
    const request = k.grpcCreate('workspaces/grpc', 'bad') as Record<string, Record<string, unknown>>;
    const broken = {
      ...request,
      [k.field]: { ...request[k.field], cpuConstraint: { min: '3', default: '1' } },
    };
    await expect(rpc(`Create${k.kind}`, broken)).rejects.toMatchObject({
      code: status.INVALID_ARGUMENT,
      details: expect.stringContaining(`${k.snake}.cpu_constraint.default`) as unknown,
    });
  });
});
