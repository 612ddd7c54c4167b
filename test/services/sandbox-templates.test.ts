/**
 * SandboxEngineTemplateService and the engines made from templates, over REST: defaults, every
 * problem named at once, what older clients leave out of updates, and snapshots.
 */
import { useApiServer } from '../helpers/api-server.ts';

const api = useApiServer({ namespace: 'sandbox-templates-test' });
const call = (method: string, path: string, body?: unknown) => api().rest(method, path, body);

const TEMPLATE = {
  memoryBytesLimit: String(2 * 1024 ** 3),
  maxIdleDuration: '3600s',
  maxRunningDuration: '7200s',
  milliCpuLimit: 1000,
  environmentalVariables: { GREETING: 'hello' },
  enabled: true,
};

describe('SandboxEngineTemplateService over REST', () => {
  test('fills unset requests from the limits', async () => {
    const created = await call(
      'POST',
      '/v1/workspaces%2Fw/sandboxEngineTemplates?sandboxEngineTemplateId=t1',
      TEMPLATE,
    );
    expect(created.status).toBe(200);
    expect(created.json['sandboxEngineTemplate']).toMatchObject({
      name: 'workspaces/w/sandboxEngineTemplates/t1',
      milliCpuRequest: 1000,
      memoryBytesRequest: String(2 * 1024 ** 3),
      maxRunningDuration: '7200s',
      creator: 'users/developer',
    });
  });

  test('names every problem of a template at once, and stores nothing', async () => {
    const bad = await call('POST', '/v1/workspaces%2Fw/sandboxEngineTemplates?sandboxEngineTemplateId=bad', {
      memoryBytesLimit: '0',
      milliCpuLimit: 100,
      milliCpuRequest: 200,
      environmentalVariables: { '1st': 'x' },
      yamlPodTemplateSpec: '- not a mapping',
      maxRunningDuration: '-1s',
    });
    expect(bad.status).toBe(400);
    const fields = (
      (bad.json['details'] as { fieldViolations?: { field: string }[] }[]).find((d) => d.fieldViolations)
        ?.fieldViolations ?? []
    ).map((v) => v.field);
    expect(fields.sort()).toEqual(
      [
        'sandbox_engine_template.environmental_variables["1st"]',
        'sandbox_engine_template.max_idle_duration',
        'sandbox_engine_template.max_running_duration',
        'sandbox_engine_template.memory_bytes_limit',
        'sandbox_engine_template.milli_cpu_request',
        'sandbox_engine_template.yaml_pod_template_spec',
      ].sort(),
    );
    expect((await call('GET', '/v1/workspaces%2Fw%2FsandboxEngineTemplates%2Fbad')).status).toBe(404);
  });

  test('an update with every field from a client without max_running_duration keeps the stored one', async () => {
    await call('POST', '/v1/workspaces%2Fw/sandboxEngineTemplates?sandboxEngineTemplateId=t2', TEMPLATE);
    // What a 1.4 client sends: all its fields, with `*`, and no maxRunningDuration.
    const { maxRunningDuration: _left, ...older } = TEMPLATE;
    const updated = await call('PATCH', '/v1/workspaces%2Fw%2FsandboxEngineTemplates%2Ft2?updateMask=*', {
      ...older,
      displayName: 'Renamed',
    });
    expect(updated.status).toBe(200);
    expect(updated.json['sandboxEngineTemplate']).toMatchObject({
      displayName: 'Renamed',
      maxRunningDuration: '7200s',
    });
    // A 1.4 client's create has no running limit: none.
    const created = await call(
      'POST',
      '/v1/workspaces%2Fw/sandboxEngineTemplates?sandboxEngineTemplateId=t3',
      older,
    );
    expect(created.json['sandboxEngineTemplate']).toMatchObject({ maxRunningDuration: '0s' });
  });

  test('an engine keeps the template as it was when the engine was created', async () => {
    await call('POST', '/v1/workspaces%2Fw/sandboxEngineImages?sandboxEngineImageId=py', {
      image: 'python:3.12',
      enabled: true,
    });
    await call('POST', '/v1/workspaces%2Fw/sandboxEngineTemplates?sandboxEngineTemplateId=t4', TEMPLATE);
    const created = await call('POST', '/v1/workspaces%2Fw/sandboxEngines?sandboxEngineId=e1', {
      sandboxEngineImage: 'workspaces/w/sandboxEngineImages/py',
      sandboxEngineTemplate: 'workspaces/w/sandboxEngineTemplates/t4',
    });
    expect(created.status).toBe(200);
    expect(created.json['sandboxEngine']).toMatchObject({
      state: 'STATE_STARTING',
      pendingReason: 'PENDING_REASON_CREATING_RESOURCES',
      sandboxEngineTemplateInfo: { milliCpuLimit: 1000, storageClassName: '' },
      sandboxEngineImageInfo: { image: 'python:3.12', imagePullPolicy: 'IMAGE_PULL_POLICY_UNSPECIFIED' },
    });
    await call('PATCH', '/v1/workspaces%2Fw%2FsandboxEngineTemplates%2Ft4?updateMask=milli_cpu_limit', {
      ...TEMPLATE,
      milliCpuLimit: 4000,
    });
    const engine = await call('GET', '/v1/workspaces%2Fw%2FsandboxEngines%2Fe1');
    expect(engine.json['sandboxEngine']).toMatchObject({
      sandboxEngineTemplateInfo: { milliCpuLimit: 1000 },
    });
  });

  test('an engine from a template of another workspace is refused, naming the field', async () => {
    await call('POST', '/v1/workspaces%2Fother/sandboxEngineTemplates?sandboxEngineTemplateId=t5', TEMPLATE);
    const refused = await call('POST', '/v1/workspaces%2Fw/sandboxEngines?sandboxEngineId=e2', {
      sandboxEngineImage: 'workspaces/w/sandboxEngineImages/py',
      sandboxEngineTemplate: 'workspaces/other/sandboxEngineTemplates/t5',
    });
    expect(refused.status).toBe(400);
    expect(refused.json['message']).toContain('sandbox_engine.sandbox_engine_template');
  });
});
