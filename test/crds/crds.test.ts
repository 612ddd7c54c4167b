import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { GROUP, KINDS, VERSION, WORKSPACE_LABEL, ID_LABEL } from '../../proto/tools/crds.ts';
import { loadApi } from '../../proto/tools/load-api.ts';
import { ENUMS, MESSAGES } from '../../gateway/src/gen/messages.ts';
import { fromJson, toJson, type Json } from '../../gateway/src/json/canonical.ts';
import {
  fromCustomResource,
  toCustomResource,
  type CustomResource,
} from '../../gateway/src/store/objects.ts';
import { RESOURCE_KINDS } from '../../shared/resources.ts';
import { useCluster } from '../helpers/use-cluster.ts';
import { withoutLiveDurations } from '../helpers/live-durations.ts';

const CRDS = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'crds');
const NAMESPACE = 'crds-test';
const cluster = useCluster();
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

function custom(): CustomObjectsApi {
  return cluster().kubeConfig.makeApiClient(CustomObjectsApi);
}

function object(kind: string, name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind,
    metadata: { name, labels: { [WORKSPACE_LABEL]: 'default', [ID_LABEL]: name } },
    spec,
  };
}

function create(plural: string, body: Record<string, unknown>): Promise<unknown> {
  return custom().createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: NAMESPACE,
    plural,
    body,
  });
}

beforeAll(async () => {
  await cluster().kubectl(['apply', '-f', CRDS]);
  await cluster().kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd',
    '-l',
    '!nonexistent',
  ]);
  await cluster()
    .kubeConfig.makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NAMESPACE } } });
});

describe('the CRDs in crds/', () => {
  test('are one file per kind, fourteen kinds, all served by the apiserver', async () => {
    expect(readdirSync(CRDS).filter((f) => f.endsWith('.yaml'))).toHaveLength(14);
    const names = (await cluster().kubectl(['get', 'crd', '-o', 'name'])).trim().split('\n');
    for (const kind of KINDS) {
      expect(names).toContain(
        `customresourcedefinition.apiextensions.k8s.io/${kind.plural ?? `${kind.kind.toLowerCase()}s`}.${GROUP}`,
      );
    }
  });

  test('kubectl get aiem lists resources of every kind by category', async () => {
    await create(
      'notebookengineimages',
      object('NotebookEngineImage', 'jupyter', { image: 'example.invalid/jupyter:1' }),
    );
    await create(
      'daiengineversions',
      object('DAIEngineVersion', 'v1-10-6', { image: 'example.invalid/dai:1.10.6' }),
    );
    // A fresh discovery cache, as a user's kubectl has after the CRDs were installed.
    const cache = join(cluster().runDir, 'fresh-kubectl-cache');
    const listed = await cluster().kubectl([
      'get',
      'aiem',
      '-n',
      NAMESPACE,
      '-o',
      'name',
      '--cache-dir',
      cache,
    ]);
    expect(listed).toContain(`notebookengineimage.${GROUP}/jupyter`);
    expect(listed).toContain(`daiengineversion.${GROUP}/v1-10-6`);
  });

  test('kubectl get shows state, version and profile columns, state from the status subresource', async () => {
    await create(
      'h2oengines',
      object('H2OEngine', 'cluster-a', {
        profile: 'workspaces/global/h2oEngineProfiles/default',
        h2oEngineVersion: 'workspaces/global/h2oEngineVersions/3.46.0.1',
        cpu: 4,
        nodeCount: 2,
        memoryBytes: '8589934592',
      }),
    );
    await custom().patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        namespace: NAMESPACE,
        plural: 'h2oengines',
        name: 'cluster-a',
        body: { status: { state: 'STATE_RUNNING' } },
      },
      mergePatch,
    );
    const table = await cluster().kubectl(['get', 'h2oe', '-n', NAMESPACE]);
    const [header = '', row = ''] = table.trim().split('\n');
    expect(header.split(/\s{2,}/)).toEqual(
      expect.arrayContaining(['NAME', 'WORKSPACE', 'ID', 'STATE', 'VERSION', 'PROFILE', 'CPU', 'AGE']),
    );
    expect(row).toContain('STATE_RUNNING');
    expect(row).toContain('workspaces/global/h2oEngineVersions/3.46.0.1');
  });

  test('an immutable field cannot change, while a mutable one can', async () => {
    const target = {
      group: GROUP,
      version: VERSION,
      namespace: NAMESPACE,
      plural: 'h2oengines',
      name: 'cluster-a',
    };
    await expect(
      custom().patchNamespacedCustomObject(
        { ...target, body: { spec: { h2oEngineVersion: 'workspaces/global/h2oEngineVersions/other' } } },
        mergePatch,
      ),
    ).rejects.toMatchObject({
      code: 422,
      body: expect.stringContaining('h2oEngineVersion is immutable') as unknown,
    });
    const patched = (await custom().patchNamespacedCustomObject(
      { ...target, body: { spec: { displayName: 'Renamed' } } },
      mergePatch,
    )) as {
      spec: { displayName: string; h2oEngineVersion: string };
    };
    expect(patched.spec).toMatchObject({
      displayName: 'Renamed',
      h2oEngineVersion: 'workspaces/global/h2oEngineVersions/3.46.0.1',
    });
  });

  test('schemas reject wrong types and unknown enum values and prune unknown fields', async () => {
    await expect(
      create(
        'daiengines',
        object('DAIEngine', 'bad-memory', { profile: 'p', daiEngineVersion: 'v', memoryBytes: 'lots' }),
      ),
    ).rejects.toMatchObject({ code: 422 });
    await expect(
      create(
        'daiengines',
        object('DAIEngine', 'bad-cpu', { profile: 'p', daiEngineVersion: 'v', cpu: 'four' }),
      ),
    ).rejects.toMatchObject({ code: 422 });
    const created = (await create(
      'daiengines',
      object('DAIEngine', 'good', {
        profile: 'p',
        daiEngineVersion: 'v',
        memoryBytes: 1024,
        storageBytes: '10737418240',
        surprise: 'x',
      }),
    )) as { spec: Record<string, unknown> };
    expect(created.spec).toEqual({
      profile: 'p',
      daiEngineVersion: 'v',
      memoryBytes: 1024,
      storageBytes: '10737418240',
    });
    const target = {
      group: GROUP,
      version: VERSION,
      namespace: NAMESPACE,
      plural: 'daiengines',
      name: 'good',
    };
    await expect(
      custom().patchNamespacedCustomObjectStatus(
        { ...target, body: { status: { state: 'STATE_NAPPING' } } },
        mergePatch,
      ),
    ).rejects.toMatchObject({ code: 422 });
  });

  test('schemas enforce the API id, alias, annotation-key and display-name rules', async () => {
    const version = (name: string, spec: Record<string, unknown>): Promise<unknown> =>
      create(
        'daiengineversions',
        object('DAIEngineVersion', name, { image: 'example.invalid/dai:1', ...spec }),
      );
    await expect(version('bad-alias', { aliases: ['Not_Valid'] })).rejects.toMatchObject({ code: 422 });
    await expect(version('twice', { aliases: ['latest', 'latest'] })).rejects.toMatchObject({ code: 422 });
    await version('good-alias', { aliases: ['latest', 'stable'] });
    const engine = (name: string, spec: Record<string, unknown>): Promise<unknown> =>
      create('daiengines', object('DAIEngine', name, { profile: 'p', daiEngineVersion: 'v', ...spec }));
    await expect(engine('bad-key', { annotations: { '-bad': 'x' } })).rejects.toMatchObject({
      code: 422,
      body: expect.stringContaining('annotation keys') as unknown,
    });
    await expect(engine('long-name', { displayName: 'x'.repeat(64) })).rejects.toMatchObject({ code: 422 });
    await engine('good-key', { annotations: { 'team.name': 'a' }, displayName: 'x'.repeat(63) });
  });

  test('kubectl explain shows the field documentation written in proto/', async () => {
    const api = loadApi();
    const cpu = api.messages.get('ai.h2o.engine.v1.DAIEngine')?.fields.find((f) => f.name === 'cpu');
    const firstLine = cpu?.comment.split('\n')[0] ?? '';
    expect(firstLine.length).toBeGreaterThan(10);
    const explained = (await cluster().kubectl(['explain', 'daiengines.spec.cpu'])).replace(/\s+/g, ' ');
    expect(explained).toContain(firstLine.replace(/\s+/g, ' '));
  });
});

/** Canonical JSON of a `type` with every field set to a non-zero value, nested messages included. */
function populated(type: string, depth = 0): { [key: string]: Json } {
  const samples: Record<string, (t: string | undefined) => Json> = {
    string: () => 'sample',
    bool: () => true,
    int32: () => 3,
    int64: () => '1073741824',
    double: () => 1.5,
    bytes: () => 'aGk=',
    enum: (t) => ENUMS[t ?? '']?.at(-1)?.[0] ?? 0,
    message: (t) => {
      if (t === 'google.protobuf.Duration') return '90.500s';
      if (t === 'google.protobuf.Timestamp') return '2026-01-02T03:04:05Z';
      return depth < 3 ? populated(t ?? '', depth + 1) : {};
    },
  };
  const json: { [key: string]: Json } = {};
  for (const field of MESSAGES[type] ?? []) {
    if (['uid', 'createTime', 'deleteTime'].includes(field.json)) continue;
    if (field.kind === 'map') {
      json[field.json] = { key: samples[field.value ?? 'string']?.(field.type) ?? null };
      continue;
    }
    const value = samples[field.kind]?.(field.type) ?? null;
    json[field.json] = field.repeated ? [value] : value;
  }
  return json;
}

describe('custom resources written by the API', () => {
  test.each(Object.values(RESOURCE_KINDS))(
    '$kind keeps every field through the apiserver (spec and status)',
    async (kind) => {
      const json = {
        ...populated(kind.message),
        name: `workspaces/default/${kind.collection}/sample-${kind.plural}`,
      };
      const message = fromJson(kind.message, json) as { name: string };
      const resource = toCustomResource(kind, message, NAMESPACE);
      const target = { group: GROUP, version: VERSION, namespace: NAMESPACE, plural: kind.plural };
      await custom().createNamespacedCustomObject({ ...target, body: resource });
      await custom().patchNamespacedCustomObjectStatus(
        { ...target, name: resource.metadata.name, body: { status: resource.status } },
        mergePatch,
      );
      const stored = (await custom().getNamespacedCustomObject({
        ...target,
        name: resource.metadata.name,
      })) as CustomResource;
      const read = toJson(kind.message, fromCustomResource(kind, stored));
      const expected = toJson(kind.message, message);
      // Identity and creation time come from the apiserver, where the API has those fields.
      if ('uid' in expected) expect(read['uid']).toBe(stored.metadata.uid);
      expect(read['createTime']).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      // An engine's durations are computed when it is read, not stored (shared/durations.ts).
      const without = ({
        uid: _uid,
        createTime: _created,
        ...rest
      }: Record<string, unknown>): Record<string, unknown> => withoutLiveDurations(rest);
      expect(without(read)).toEqual(without(expected));
    },
  );
});
