/**
 * Engines and their catalogue declared with kubectl: the apiserver sends every write of the nine
 * kinds to the gateway's admission webhooks (registered from the chart's own configurations, on
 * loopback with a certificate of the cluster's CA), which apply the API's checks, defaults and
 * ownership. Users are Kubernetes users (`kubectl --as`), bound to the chart's ClusterRoles. The
 * catalogue and the engines are the documentation's manifests.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { dump, loadAll } from 'js-yaml';
import { waitFor } from '../cluster/wait.ts';
import { find, MINIMAL_VALUES, render, type Rendered } from '../charts/helm.ts';
import { useApiServer, type RestResponse } from '../helpers/api-server.ts';
import { webhookConfigurations as chartWebhooks, type WebhookConfiguration } from '../cluster/webhooks.ts';
import { useIdentity } from '../helpers/use-identity.ts';
import { GIB, profile } from '../auth/catalogue.ts';
import type { Message } from '../auth/calls.ts';
import { ENGINE_FINALIZER } from '../../shared/resources.ts';

const NS = 'kubectl-test';
const CACHE = process.env['AIEM_CACHE'] ?? join(homedir(), '.cache', 'ai-engine-manager');
const { identity, authenticate, authorizer } = useIdentity({
  accounts: [
    { id: 'ops', name: 'Olga Ops', roles: ['admin'] },
    { id: 'alice', name: 'Alice Smith', roles: ['data-scientist'] },
    { id: 'bob', name: 'Bob Jones', roles: ['analyst'] },
  ],
});
const api = useApiServer({
  namespace: NS,
  operator: true,
  authenticate,
  authorizer,
  admission: { usernamePrefix: '', groupsPrefix: '' },
});

/** Kubernetes users, as `kubectl --as` makes them: the API's users of the same names. */
const OPS = ['--as=ops', '--as-group=admin'];
const ALICE = ['--as=alice', '--as-group=data-scientist'];
const BOB = ['--as=bob', '--as-group=analyst'];
/** Let through by Kubernetes RBAC as an administrator, but not one under the API's policy. */
const CARL = ['--as=carl', '--as-group=analyst'];
const VIEWER = ['--as=victor'];

const folder = mkdtempSync(join(tmpdir(), 'aiem-kubectl-'));
let chart: Rendered[] = [];

/** A manifest of one of the nine kinds in the test namespace. */
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: Record<string, unknown>;
}

function manifest(kind: string, name: string, spec: Record<string, unknown>): Manifest {
  return { apiVersion: 'engine.h2o.ai/v1', kind, metadata: { name, namespace: NS }, spec };
}

/** A custom resource as kubectl reads it. */
interface Stored {
  metadata: {
    generation: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: Record<string, unknown>;
  status?: { conditions?: { type: string; status: string; reason: string }[] };
}

/** An API resource as REST answers it. */
type Resource = Record<string, unknown>;

/** `kubectl <verb> -f` of the objects as `as`; kubectl's output, or the error with its stderr. */
async function kubectl(
  as: readonly string[],
  args: readonly string[],
  objects?: readonly object[],
): Promise<string> {
  const file = join(folder, `${Math.random().toString(36).slice(2)}.yaml`);
  if (objects !== undefined) writeFileSync(file, objects.map((o) => dump(o)).join('---\n'));
  return api().cluster.kubectl([...as, '-n', NS, ...args, ...(objects === undefined ? [] : ['-f', file])]);
}

const apply = (as: readonly string[], ...objects: object[]): Promise<string> =>
  kubectl(as, ['apply'], objects);

/** The message kubectl prints for a refused write. */
async function refusal(write: Promise<string>): Promise<string> {
  try {
    await write;
  } catch (error: unknown) {
    return String(error instanceof Error ? error.message : error);
  }
  throw new Error('the write was admitted');
}

async function getObject(plural: string, name: string): Promise<Stored> {
  return JSON.parse(await api().cluster.kubectl(['-n', NS, 'get', plural, name, '-o', 'json'])) as Stored;
}

async function rest(who: string, path: string): Promise<RestResponse> {
  return api().rest('GET', path, undefined, await identity().headers(who));
}

/** Waits until the engine reads as `state` through the API, as its creator sees it. */
async function stateOf(who: string, path: string, field: string, state: string): Promise<Resource> {
  return waitFor(
    async () => {
      const { status, json } = await rest(who, `/v1/${path}`);
      if (status !== 200) throw new Error(`${status} ${JSON.stringify(json)}`);
      const engine = json[field] as Resource | undefined;
      return engine?.['state'] === state ? engine : undefined;
    },
    { what: `${path} ${state}`, timeoutMs: 60_000 },
  );
}

/** The chart's webhook configurations, registered to call the test's gateway on loopback. */
let configurations: WebhookConfiguration[] = [];

/** The configurations, calling `url` instead (an address where nothing answers). */
function webhookConfigurations(url?: string): WebhookConfiguration[] {
  if (url === undefined) return configurations;
  return configurations.map((configuration) => ({
    ...configuration,
    webhooks: configuration.webhooks.map((webhook) => ({
      ...webhook,
      clientConfig: {
        ...webhook.clientConfig,
        url: `${url}/admission/${configuration.kind.startsWith('Mutating') ? 'mutate' : 'validate'}`,
      },
    })),
  }));
}

/** A profile of the kind, without the constraints the kind does not have. */
function profileOf(kind: string, fields: Message = {}): Message {
  const { nodeCountConstraint = null, storageBytesConstraint = null, ...common } = profile(fields);
  return kind === 'H2OEngineProfile'
    ? { ...common, nodeCountConstraint }
    : { ...common, storageBytesConstraint };
}

/** The documentation's manifests (docs-site/examples/kubectl), as the site shows them. */
const EXAMPLES = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'docs-site',
  'examples',
  'kubectl',
);
const catalogue = loadAll(readFileSync(join(EXAMPLES, 'catalogue.yaml'), 'utf8')) as Manifest[];
/** The one engine a documented manifest declares. */
function engineManifest(file: string): Manifest {
  const [manifest, ...more] = loadAll(readFileSync(join(EXAMPLES, file), 'utf8')) as Manifest[];
  if (manifest === undefined || more.length > 0) throw new Error(`${file} holds one engine`);
  return manifest;
}
const engines = {
  dai: engineManifest('dai-engine.yaml'),
  h2o: engineManifest('h2o-engine.yaml'),
  notebook: engineManifest('notebook-engine.yaml'),
};
const WS = 'workspaces/default';

beforeAll(async () => {
  // The test's own clients (the gateway, the operator, this file's kubectl) act as cluster-admin,
  // as the chart exempts the gateway's and the operator's ServiceAccounts.
  chart = await render(MINIMAL_VALUES, { namespace: NS });
  const webhook = api().webhook;
  if (webhook === undefined) throw new Error('The gateway serves no webhooks');
  configurations = await chartWebhooks(api().cluster, {
    namespace: NS,
    url: webhook.url,
    caBundle: webhook.caBundle,
    exemptUsers: ['cluster-admin'],
  });
  const roles = chart.filter(
    (o) => o.kind === 'ClusterRole' && /-(viewer|engine-editor|administrator)$/.test(o.metadata?.name ?? ''),
  );
  const binding = (user: string, role: string): object => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: `${user}-${role}`, namespace: NS },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: `aiem-ai-engine-manager-${role}`,
    },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
  await kubectl(
    [],
    ['apply'],
    [
      ...roles,
      ...webhookConfigurations(),
      binding('ops', 'administrator'),
      binding('alice', 'engine-editor'),
      binding('bob', 'engine-editor'),
      binding('carl', 'administrator'),
      binding('victor', 'viewer'),
    ],
  );
  await apply(OPS, ...catalogue);
});

describe('the catalogue applied by an administrator', () => {
  it('is stored with the API defaults and its creator, and reads through the API', async () => {
    const { status, json } = await rest('ops', `/v1/${WS}/daiEngineProfiles/standard`);
    expect(status).toBe(200);
    expect(json['daiEngineProfile']).toMatchObject({
      name: `${WS}/daiEngineProfiles/standard`,
      creator: 'users/ops',
      cpuConstraint: { min: '1', default: '1', max: '8' },
    });
    const version = await rest('ops', `/v1/${WS}/daiEngineVersions/latest`);
    expect(version.json['daiEngineVersion']).toMatchObject({
      name: `${WS}/daiEngineVersions/1.10.6`,
      aliases: ['latest'],
    });
    const stored = await getObject('daiengineversions', 'default.1.10.6');
    expect(stored.metadata.labels).toMatchObject({
      'engine.h2o.ai/workspace': 'default',
      'engine.h2o.ai/id': '1.10.6',
    });
  });

  it('refuses a user who may not define profiles: by RBAC, and by the API policy', async () => {
    const rbac = await refusal(
      apply(ALICE, manifest('DAIEngineProfile', 'default.mine', profileOf('DAIEngineProfile'))),
    );
    expect(rbac).toMatch(/forbidden/i);
    // RBAC lets carl through; the API's policy (admin role only) still refuses him.
    const policy = await refusal(
      apply(CARL, manifest('DAIEngineProfile', 'default.mine', profileOf('DAIEngineProfile'))),
    );
    expect(policy).toContain('denied the request');
    expect(policy).toContain('actions/enginemanager/daiEngineProfiles/CREATE');
    await expect(getObject('daiengineprofiles', 'default.mine')).rejects.toThrow(/NotFound/);
  });

  it('refuses a second holder of an alias, naming the holder', async () => {
    const message = await refusal(
      apply(
        OPS,
        manifest('DAIEngineVersion', 'default.1.11.0', { image: 'dai:1.11.0', aliases: ['latest'] }),
      ),
    );
    expect(message).toContain('denied the request');
    expect(message).toContain('"default.1.10.6"');
    await expect(getObject('daiengineversions', 'default.1.11.0')).rejects.toThrow(/NotFound/);
  });

  it('refuses a bad id and a profile whose default exceeds its maximum', async () => {
    const badId = await refusal(apply(OPS, manifest('H2OEngineVersion', 'default.0xzz', { image: 'h2o:x' })));
    expect(badId).toContain('metadata.name');
    const constraint = await refusal(
      apply(
        OPS,
        manifest(
          'DAIEngineProfile',
          'default.broken',
          profileOf('DAIEngineProfile', {
            cpuConstraint: { min: '1', default: '9', max: '8', cumulativeMax: null },
          }),
        ),
      ),
    );
    expect(constraint).toMatch(/Invalid dai_engine_profile\.cpu_constraint/);
  });
});

describe('engines applied by a user', () => {
  beforeAll(async () => {
    await apply(ALICE, engines.dai, engines.h2o, engines.notebook);
  });

  it.each([
    ['dai', 'daiEngines/alice-dai', 'daiEngine'],
    ['h2o', 'h2oEngines/alice-h2o', 'h2oEngine'],
    ['notebook', 'notebookEngines/alice-notebook', 'notebookEngine'],
  ])(
    'a %s engine reaches RUNNING with the profile defaults, owned by its creator',
    async (_, path, field) => {
      const engine = await stateOf('alice', `${WS}/${path}`, field, 'STATE_RUNNING');
      expect(engine['creator']).toBe('users/alice');
      expect(engine['cpu']).toBe(1);
      expect(engine['memoryBytes']).toBe(String(4 * GIB));
      // Another user does not see it, as with engines made through the API.
      expect((await rest('bob', `/v1/${WS}/${path}`)).status).toBe(404);
    },
  );

  it('lists the engine for its creator and shows its columns in kubectl', async () => {
    const listed = await rest('alice', `/v1/${WS}/daiEngines`);
    expect((listed.json['daiEngines'] as { name: string }[]).map((e) => e.name)).toContain(
      `${WS}/daiEngines/alice-dai`,
    );
    const table = await api().cluster.kubectl(['-n', NS, 'get', 'daie', 'default.alice-dai', '--no-headers']);
    expect(table.split(/\s+/).slice(0, 6)).toEqual([
      'default.alice-dai',
      'default',
      'alice-dai',
      'STATE_RUNNING',
      `${WS}/daiEngineVersions/1.10.6`,
      `${WS}/daiEngineProfiles/standard`,
    ]);
  });

  it('changes nothing when the same manifest is applied again', async () => {
    const before = await getObject('daiengines', 'default.alice-dai');
    // The manifest names the version by its alias: kubectl sends it again, and nothing changes.
    await apply(ALICE, engines.dai);
    await kubectl(ALICE, ['apply', '--server-side', '--force-conflicts'], [engines.dai]);
    const after = await getObject('daiengines', 'default.alice-dai');
    expect(after.metadata.generation).toBe(before.metadata.generation);
    expect(after.spec).toEqual(before.spec);
    expect(after.spec['daiEngineVersion']).toBe(`${WS}/daiEngineVersions/1.10.6`);
  });

  it('refuses what the API refuses, with its messages', async () => {
    const unknown = await refusal(
      apply(
        ALICE,
        manifest('DAIEngine', 'default.ghost', {
          ...engines.dai.spec,
          profile: `${WS}/daiEngineProfiles/none`,
        }),
      ),
    );
    expect(unknown).toContain(`Invalid dai_engine.profile: "${WS}/daiEngineProfiles/none" does not exist`);
    const big = await refusal(
      apply(ALICE, manifest('DAIEngine', 'default.big', { ...engines.dai.spec, cpu: 9 })),
    );
    expect(big).toContain("Invalid dai_engine.cpu: must be between 1 and 8 (the profile's limits), got 9");
    const immutable = await refusal(
      kubectl(ALICE, [
        'patch',
        'h2oengine',
        'default.alice-h2o',
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { h2oEngineVersion: `${WS}/h2oEngineVersions/3.46.0.2` } }),
      ]),
    );
    expect(immutable).toContain('Invalid spec.h2oEngineVersion: cannot be changed after creation');
    const badName = await refusal(apply(ALICE, manifest('DAIEngine', 'no-workspace', engines.dai.spec)));
    expect(badName).toContain('Invalid metadata.name');
    for (const name of ['default.ghost', 'default.big', 'no-workspace'])
      await expect(getObject('daiengines', name)).rejects.toThrow(/NotFound/);
  });

  it('refuses another user changing or deleting the engine', async () => {
    const patch = JSON.stringify({ spec: { paused: true } });
    const other = await refusal(
      kubectl(BOB, ['patch', 'daiengine', 'default.alice-dai', '--type=merge', '-p', patch]),
    );
    expect(other).toContain('denied the request');
    const deletion = await refusal(kubectl(BOB, ['delete', 'daiengine', 'default.alice-dai']));
    expect(deletion).toContain('denied the request');
    expect((await getObject('daiengines', 'default.alice-dai')).spec['paused']).not.toBe(true);
  });

  it('pauses by kubectl patch and resumes through the API', async () => {
    const path = `${WS}/daiEngines/alice-dai`;
    await kubectl(ALICE, [
      'patch',
      'daiengine',
      'default.alice-dai',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { paused: true } }),
    ]);
    const paused = await stateOf('alice', path, 'daiEngine', 'STATE_PAUSED');
    expect(paused['creator']).toBe('users/alice');
    const resumed = await api().rest('POST', `/v1/${path}:resume`, {}, await identity().headers('alice'));
    expect(resumed.status).toBe(200);
    await stateOf('alice', path, 'daiEngine', 'STATE_RUNNING');
    expect((await getObject('daiengines', 'default.alice-dai')).spec['paused']).toBe(false);
  });

  it('is the same engine for its creator in the published Python client: listed, read, paused, resumed', async () => {
    const python = join(CACHE, 'python-client-1.10.2', 'bin', 'python');
    const { provider } = identity();
    const env = {
      ...process.env,
      AIEM_ISSUER_URL: provider.issuer,
      AIEM_CLIENT_ID: provider.clientId,
      AIEM_USER_REFRESH_TOKEN: await provider.refreshToken('alice'),
    };
    const script = join(dirname(fileURLToPath(import.meta.url)), '..', 'compat', 'kubectl_engines.py');
    const { stdout } = await promisify(execFile)(
      python,
      [script, api().gateway.restUrl, 'default', 'alice-dai'],
      {
        env,
      },
    );
    expect(stdout.split('\n')).toEqual([
      'listed: alice-dai',
      'creator: users/alice state: STATE_RUNNING cpu: 1',
      'paused: STATE_PAUSED',
      'resumed: STATE_RUNNING',
      '',
    ]);
  });

  it('writes nothing on a server-side dry run', async () => {
    const output = await kubectl(
      ALICE,
      ['apply', '--dry-run=server'],
      [manifest('H2OEngine', 'default.dry', engines.h2o.spec)],
    );
    expect(output).toContain('created (server dry run)');
    await expect(getObject('h2oengines', 'default.dry')).rejects.toThrow(/NotFound/);
  });

  it('writes an engine with the operator’s finalizer, as the API does', async () => {
    const output = await kubectl(
      ALICE,
      ['apply', '--dry-run=server', '-o', 'json'],
      [manifest('H2OEngine', 'default.dry-finalized', engines.h2o.spec)],
    );
    const admitted = JSON.parse(output) as { metadata: { finalizers?: string[] } };
    expect(admitted.metadata.finalizers).toEqual([ENGINE_FINALIZER]);
  });

  it('deletes by kubectl delete, as the API deletes', async () => {
    await kubectl(ALICE, ['delete', 'notebookengine', 'default.alice-notebook', '--wait=true']);
    expect((await rest('alice', `/v1/${WS}/notebookEngines/alice-notebook`)).status).toBe(404);
  });
});

describe('without the gateway', () => {
  it('refuses writes while no webhook answers (failurePolicy Fail)', async () => {
    expect(find(chart, 'MutatingWebhookConfiguration')['webhooks']).toMatchObject([
      { failurePolicy: 'Fail' },
    ]);
    await kubectl([], ['apply'], webhookConfigurations('https://127.0.0.1:1'));
    try {
      const message = await refusal(
        apply(ALICE, manifest('H2OEngine', 'default.while-down', engines.h2o.spec)),
      );
      expect(message).toContain('failed calling webhook');
      await expect(getObject('h2oengines', 'default.while-down')).rejects.toThrow(/NotFound/);
    } finally {
      await kubectl([], ['apply'], webhookConfigurations());
    }
  });

  it('holds an engine stored without admission until it is written again through the webhooks', async () => {
    await kubectl([], ['delete'], webhookConfigurations());
    const held = manifest('H2OEngine', 'default.unadmitted', engines.h2o.spec);
    try {
      await apply(ALICE, held);
      const condition = await waitFor(
        async () => {
          const object = await getObject('h2oengines', 'default.unadmitted');
          return object.status?.conditions?.find((c) => c.type === 'Admitted');
        },
        { what: 'the Admitted condition' },
      );
      expect(condition).toMatchObject({ status: 'False', reason: 'NotAdmitted' });
      expect(await api().cluster.kubectl(['-n', NS, 'get', 'statefulsets', '-o', 'name'])).not.toContain(
        'unadmitted',
      );
      expect((await rest('alice', `/v1/${WS}/h2oEngines/unadmitted`)).status).toBe(404);
    } finally {
      await kubectl([], ['apply'], webhookConfigurations());
    }
    await kubectl(ALICE, ['replace'], [held]);
    const engine = await stateOf('alice', `${WS}/h2oEngines/unadmitted`, 'h2oEngine', 'STATE_RUNNING');
    expect(engine['creator']).toBe('users/alice');
  });
});

describe('the ClusterRoles', () => {
  const can = async (
    as: readonly string[],
    verb: string,
    resource: string,
    ...more: string[]
  ): Promise<boolean> => {
    try {
      await api().cluster.kubectl([...as, '-n', NS, 'auth', 'can-i', '--quiet', verb, resource, ...more]);
      return true;
    } catch (error: unknown) {
      // `can-i` exits 1 when the answer is no.
      const cause = error instanceof Error ? error.cause : undefined;
      if (typeof cause === 'object' && cause !== null && 'code' in cause && cause.code === 1) return false;
      throw error;
    }
  };

  it.each([
    ['viewer', VIEWER, { read: true, engines: false, catalogue: false }],
    ['engine editor', ALICE, { read: true, engines: true, catalogue: false }],
    ['administrator', OPS, { read: true, engines: true, catalogue: true }],
  ])('the %s grants exactly what it says', async (_, as, grants) => {
    for (const resource of ['daiengines', 'notebookengineimages', 'h2oengineprofiles'])
      for (const verb of ['get', 'list', 'watch']) expect(await can(as, verb, resource)).toBe(grants.read);
    for (const resource of ['daiengines', 'h2oengines', 'notebookengines'])
      for (const verb of ['create', 'update', 'patch', 'delete'])
        expect(await can(as, verb, resource)).toBe(grants.engines);
    for (const resource of ['daiengineprofiles', 'daiengineversions', 'notebookengineimages'])
      for (const verb of ['create', 'update', 'patch', 'delete'])
        expect(await can(as, verb, resource)).toBe(grants.catalogue);
    // Status is the product's to write.
    expect(await can(as, 'patch', 'daiengines', '--subresource=status')).toBe(false);
    expect(await can(as, 'get', 'secrets')).toBe(false);
  });

  it('aggregate into the built-in view, edit and admin roles', async () => {
    for (const [builtin, role] of [
      ['view', 'viewer'],
      ['edit', 'engine-editor'],
      ['admin', 'administrator'],
    ] as const) {
      expect(find(chart, 'ClusterRole', `-${role}`).metadata?.labels).toMatchObject({
        [`rbac.authorization.k8s.io/aggregate-to-${builtin}`]: 'true',
      });
    }
    await api().cluster.kubectl([
      '-n',
      NS,
      'create',
      'rolebinding',
      'wendy-view',
      '--clusterrole=view',
      '--user=wendy',
    ]);
    await waitFor(async () => ((await can(['--as=wendy'], 'list', 'daiengines')) ? true : undefined), {
      what: 'the view role to include the viewer role',
    });
    expect(await can(['--as=wendy'], 'create', 'daiengines')).toBe(false);
  });
});
