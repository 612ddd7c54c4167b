/**
 * Who reaches which engine, under the default policy and real tokens: users their own engines,
 * administrators every engine, every user a shared notebook to see and open; profiles by role
 * and per-user caps; audit fields from the identity; per-workspace grants and policy reloads.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { DEFAULT_POLICY_FILE } from '../../gateway/src/auth/policy-authorizer.ts';
import { Code } from '../../gateway/src/errors/code.ts';
import { waitFor } from '../cluster/wait.ts';
import { useApiServer, type RestResponse } from '../helpers/api-server.ts';
import { withoutLiveDurations } from '../helpers/live-durations.ts';
import { useIdentity } from '../helpers/use-identity.ts';
import { defineCatalogue, engineBodies, GIB, ok, profile } from './catalogue.ts';
import type { Message } from './calls.ts';

const DEFAULT_POLICY = readFileSync(DEFAULT_POLICY_FILE, 'utf8');
const { identity, authenticate, authorizer } = useIdentity({
  accounts: [
    { id: 'admin', name: 'Ada Admin', roles: ['admin'] },
    { id: 'alice', name: 'Alice Smith', roles: ['data-scientist'] },
    { id: 'bob', name: 'Bob Jones', roles: ['analyst'] },
    { id: 'carol', name: 'Carol Lead', roles: ['team-lead'] },
  ],
  // A copy of the default policy, which the last tests rewrite.
  policy: DEFAULT_POLICY,
});
const api = useApiServer({ namespace: 'ownership-test', authenticate, authorizer });

const W = 'team';
const WS = `workspaces/${W}`;
const bodies = engineBodies(W);
const enc = encodeURIComponent;
type Who = 'admin' | 'alice' | 'bob' | 'carol';

async function call(who: Who, method: string, path: string, body?: unknown): Promise<RestResponse> {
  return api().rest(method, path, body, await identity().headers(who));
}

async function create(
  who: Who,
  collection: string,
  id: string,
  body: Message,
): Promise<Record<string, unknown>> {
  const field = collection.replace(/s$/, '');
  const created = await ok(api(), {
    method: 'POST',
    path: `/v1/${WS}/${collection}?${field}Id=${id}`,
    body,
    headers: await identity().headers(who),
  });
  return created[field] as Record<string, unknown>;
}

const names = (response: RestResponse, field: string): string[] =>
  ((response.json[field] ?? []) as { name: string }[]).map((e) => e.name);

/** What a missing engine answers: the answer to another user's engine must be the same. */
const notFound = (name: string): { status: number; json: unknown } => ({
  status: 404,
  json: {
    code: Code.NOT_FOUND,
    message: `"${name}" was not found`,
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'RESOURCE_NOT_FOUND',
        domain: 'engine.h2o.ai',
        metadata: {},
      },
    ],
  },
});

const DAI = `${WS}/daiEngines/alice-dai`;
const H2O = `${WS}/h2oEngines/alice-h2o`;
const NOTEBOOK = `${WS}/notebookEngines/alice-notebook`;
const SHARED = `${WS}/notebookEngines/alice-shared`;

beforeAll(async () => {
  await defineCatalogue(api(), { workspace: W, headers: await identity().headers('admin') });
  await create('alice', 'daiEngines', 'alice-dai', bodies.dai);
  await create('alice', 'h2oEngines', 'alice-h2o', bodies.h2o);
  await create('alice', 'notebookEngines', 'alice-notebook', bodies.notebook);
  await create('alice', 'notebookEngines', 'alice-shared', { ...bodies.notebook, shared: true });
  await create('bob', 'daiEngines', 'bob-dai', bodies.dai);
});

describe("another user's engines", () => {
  test('are NOT_FOUND to get, exactly as missing engines are', async () => {
    for (const name of [DAI, H2O, NOTEBOOK]) {
      const answer = await call('bob', 'GET', `/v1/${enc(name)}`);
      expect({ status: answer.status, json: answer.json }).toEqual(notFound(name));
      const missing = `${name}-missing`;
      const absent = await call('bob', 'GET', `/v1/${enc(missing)}`);
      expect({ status: absent.status, json: absent.json }).toEqual(notFound(missing));
    }
  });

  test('are left out of lists, the generic list included', async () => {
    expect(names(await call('bob', 'GET', `/v1/${WS}/daiEngines`), 'daiEngines')).toEqual([
      `${WS}/daiEngines/bob-dai`,
    ]);
    expect(names(await call('bob', 'GET', `/v1/${WS}/h2oEngines`), 'h2oEngines')).toEqual([]);
    expect(names(await call('bob', 'GET', `/v1/${WS}/notebookEngines`), 'notebookEngines')).toEqual([SHARED]);
    const all = await call('bob', 'GET', `/v1/${WS}/engines`);
    expect(names(all, 'engines').sort()).toEqual([`${WS}/daiEngines/bob-dai`, SHARED].sort());
    expect(all.json['totalSize']).toBe(2);
    const alices = await call('alice', 'GET', `/v1/${WS}/engines`);
    expect(names(alices, 'engines').sort()).toEqual([DAI, H2O, NOTEBOOK, SHARED].sort());
  });

  test.each([
    ['update', 'PATCH', `/v1/${enc(DAI)}?updateMask=display_name`, { displayName: 'Mine now' }, DAI],
    ['pause', 'POST', `/v1/${enc(DAI)}:pause`, {}, DAI],
    ['resume', 'POST', `/v1/${enc(DAI)}:resume`, {}, DAI],
    ['resize', 'POST', `/v1/${enc(DAI)}:resizeStorage`, { newStorageBytes: String(20 * GIB) }, DAI],
    [
      'upgrade',
      'POST',
      `/v1/${enc(DAI)}:upgradeDAIEngineVersion`,
      { newDaiEngineVersion: `${WS}/daiEngineVersions/1.11.0` },
      DAI,
    ],
    ['download the logs of', 'POST', `/v1/${enc(DAI)}:downloadLogs`, {}, DAI],
    ['delete', 'DELETE', `/v1/${enc(DAI)}`, undefined, DAI],
    ['update an H2O engine', 'PATCH', `/v1/${enc(H2O)}?updateMask=display_name`, { displayName: 'x' }, H2O],
    ['terminate', 'POST', `/v1/${enc(H2O)}:terminate`, {}, H2O],
    ['download the logs of an H2O engine', 'POST', `/v1/${enc(H2O)}:downloadLogs`, {}, H2O],
    ['delete an H2O engine', 'DELETE', `/v1/${enc(H2O)}`, undefined, H2O],
    ['access', 'GET', `/v1/${enc(NOTEBOOK)}:access`, undefined, NOTEBOOK],
    ['pause a notebook', 'POST', `/v1/${enc(NOTEBOOK)}:pause`, {}, NOTEBOOK],
    [
      'resize a notebook',
      'POST',
      `/v1/${enc(NOTEBOOK)}:resizeStorage`,
      { newStorageBytes: String(20 * GIB) },
      NOTEBOOK,
    ],
    ['delete a notebook', 'DELETE', `/v1/${enc(NOTEBOOK)}`, undefined, NOTEBOOK],
  ])('cannot be reached to %s: NOT_FOUND, and nothing changes', async (_what, method, path, body, name) => {
    const before = await call('alice', 'GET', `/v1/${enc(name)}`);
    const answer = await call('bob', method, path, body);
    expect({ status: answer.status, json: answer.json }).toEqual(notFound(name));
    expect(withoutLiveDurations(await call('alice', 'GET', `/v1/${enc(name)}`))).toEqual(
      withoutLiveDurations(before),
    );
  });

  test('a delete with allowMissing changes nothing, as for a missing engine', async () => {
    const answer = await call('bob', 'DELETE', `/v1/${enc(DAI)}?allowMissing=true`);
    expect(answer.status).toBe(200);
    expect((await call('alice', 'GET', `/v1/${enc(DAI)}`)).status).toBe(200);
  });
});

describe('a shared notebook engine', () => {
  test('can be seen and opened by every user of the workspace', async () => {
    expect((await call('bob', 'GET', `/v1/${enc(SHARED)}`)).json['notebookEngine']).toMatchObject({
      name: SHARED,
      creator: 'users/alice',
      shared: true,
    });
    expect((await call('bob', 'GET', `/v1/${enc(SHARED)}:access`)).json['uri']).toMatch(/alice-shared\/$/);
  });

  test.each([
    ['update', 'PATCH', `/v1/${enc(SHARED)}?updateMask=display_name`, { displayName: 'x' }],
    ['pause', 'POST', `/v1/${enc(SHARED)}:pause`, {}],
    ['resume', 'POST', `/v1/${enc(SHARED)}:resume`, {}],
    ['resize', 'POST', `/v1/${enc(SHARED)}:resizeStorage`, { newStorageBytes: String(20 * GIB) }],
    ['delete', 'DELETE', `/v1/${enc(SHARED)}`, undefined],
  ])('cannot be changed by another user (%s): PERMISSION_DENIED', async (_what, method, path, body) => {
    const answer = await call('bob', method, path, body);
    expect(answer.status).toBe(403);
    expect(answer.json).toMatchObject({
      code: Code.PERMISSION_DENIED,
      message: `Only the creator of "${SHARED}" or an administrator may change it; it is shared to see and open only`,
    });
  });

  test('can be changed by its creator', async () => {
    const answer = await call('alice', 'PATCH', `/v1/${enc(SHARED)}?updateMask=display_name`, {
      displayName: 'Ours',
    });
    expect(answer.json['notebookEngine']).toMatchObject({ displayName: 'Ours', updater: 'users/alice' });
  });
});

describe('administrators', () => {
  test('see every engine and act on them', async () => {
    expect(names(await call('admin', 'GET', `/v1/${WS}/daiEngines`), 'daiEngines').sort()).toEqual(
      [DAI, `${WS}/daiEngines/bob-dai`].sort(),
    );
    const renamed = await call('admin', 'PATCH', `/v1/${enc(NOTEBOOK)}?updateMask=display_name`, {
      displayName: 'Checked',
    });
    expect(renamed.json['notebookEngine']).toMatchObject({
      displayName: 'Checked',
      creator: 'users/alice',
      updater: 'users/admin',
      updaterDisplayName: 'Ada Admin',
    });
    expect((await call('admin', 'POST', `/v1/${enc(H2O)}:terminate`, {})).status).toBe(200);
    expect((await call('admin', 'GET', `/v1/${enc(NOTEBOOK)}:access`)).status).toBe(200);
  });

  test('alone list engines of every workspace (LIST_ALL)', async () => {
    const all = await call('admin', 'GET', '/v1/workspaces%2F-/engines');
    expect(all.json['totalSize']).toBe(5);
    const denied = await call('alice', 'GET', '/v1/workspaces%2F-/engines');
    expect(denied.status).toBe(403);
    expect(denied.json['message']).toBe(
      'The permission "actions/enginemanager/engines/LIST_ALL" on all workspaces is required',
    );
  });

  test('alone hand an engine to another user, who then owns it', async () => {
    const engine = await create('alice', 'daiEngines', 'handed-over', bodies.dai);
    const name = engine['name'] as string;
    const path = `/v1/${enc(name)}:migrateCreator`;
    expect((await call('alice', 'POST', path, { newCreator: 'users/bob' })).status).toBe(403);
    const moved = await call('admin', 'POST', path, { newCreator: 'users/bob' });
    expect(moved.json['daiEngine']).toMatchObject({ creator: 'users/bob' });
    expect((await call('bob', 'GET', `/v1/${enc(name)}`)).status).toBe(200);
    expect((await call('alice', 'GET', `/v1/${enc(name)}`)).status).toBe(404);
    expect((await call('bob', 'DELETE', `/v1/${enc(name)}`)).status).toBe(200);
  });
});

describe('audit fields', () => {
  test('come from the verified identity, never from the request', async () => {
    const forged = {
      creator: 'users/mallory',
      creatorDisplayName: 'Mallory',
      updater: 'users/mallory',
      updaterDisplayName: 'Mallory',
    };
    const engine = await create('alice', 'notebookEngines', 'audited', { ...bodies.notebook, ...forged });
    expect(engine).toMatchObject({
      creator: 'users/alice',
      creatorDisplayName: 'Alice Smith',
      updater: '',
      updaterDisplayName: '',
    });
    const image = await create('admin', 'notebookEngineImages', 'audited', { image: 'x:1', ...forged });
    expect(image).toMatchObject({ creator: 'users/admin', creatorDisplayName: 'Ada Admin', updater: '' });
    const updated = await call('alice', 'PATCH', `/v1/${enc(engine['name'] as string)}?updateMask=*`, {
      ...engine,
      ...forged,
      displayName: 'Renamed',
    });
    expect(updated.json['notebookEngine']).toMatchObject({
      displayName: 'Renamed',
      creator: 'users/alice',
      updater: 'users/alice',
      updaterDisplayName: 'Alice Smith',
    });
  });
});

describe('profiles by role', () => {
  const dai = (profileId: string): Message => ({
    ...bodies.dai,
    profile: `${WS}/daiEngineProfiles/${profileId}`,
  });

  beforeAll(async () => {
    await create('admin', 'daiEngineProfiles', 'scientists', {
      ...profile(),
      assignedOidcRolesEnabled: true,
      assignedOidcRoles: ['data-scientist'],
    });
    await create('admin', 'daiEngineProfiles', 'nobody', {
      ...profile(),
      assignedOidcRolesEnabled: true,
      assignedOidcRoles: [],
    });
  });

  test('are listed as assigned only to holders of one of their roles', async () => {
    const listed = async (who: Who): Promise<string[]> =>
      names(await call(who, 'GET', `/v1/${WS}/daiEngineProfiles:listAssigned`), 'daiEngineProfiles');
    expect(await listed('alice')).toEqual([
      `${WS}/daiEngineProfiles/scientists`,
      `${WS}/daiEngineProfiles/standard`,
    ]);
    expect(await listed('bob')).toEqual([`${WS}/daiEngineProfiles/standard`]);
  });

  test('cannot be used by a user without their roles, and an empty role list admits nobody', async () => {
    const bob = await call(
      'bob',
      'POST',
      `/v1/${WS}/daiEngines?daiEngineId=bob-scientist`,
      dai('scientists'),
    );
    expect(bob.status).toBe(403);
    expect(bob.json['message']).toBe(
      `The profile "${WS}/daiEngineProfiles/scientists" is not assigned to any of your roles`,
    );
    expect(
      (await call('alice', 'POST', `/v1/${WS}/daiEngines?daiEngineId=alice-nobody`, dai('nobody'))).status,
    ).toBe(403);
    expect(
      (await call('admin', 'POST', `/v1/${WS}/daiEngines?daiEngineId=admin-nobody`, dai('nobody'))).status,
    ).toBe(403);
    expect(
      (await call('alice', 'POST', `/v1/${WS}/daiEngines?daiEngineId=alice-scientist`, dai('scientists')))
        .status,
    ).toBe(200);
  });

  test('are checked again on resume, against the roles the profile has then', async () => {
    const name = `${WS}/daiEngines/alice-scientist`;
    await ok(api(), {
      method: 'POST',
      path: `/v1/${enc(name)}:pause`,
      body: {},
      headers: await identity().headers('alice'),
    });
    const profileName = `${WS}/daiEngineProfiles/scientists`;
    await ok(api(), {
      method: 'PATCH',
      path: `/v1/${enc(profileName)}?updateMask=assigned_oidc_roles`,
      body: { assignedOidcRoles: ['someone-else'] },
      headers: await identity().headers('admin'),
    });
    const resumed = await call('alice', 'POST', `/v1/${enc(name)}:resume`, {});
    expect(resumed.status).toBe(403);
    expect(resumed.json['message']).toMatch(/is not assigned to any of your roles/);
  });
});

describe('maxRunningEngines', () => {
  beforeAll(async () => {
    await create('admin', 'daiEngineProfiles', 'one-each', { ...profile(), maxRunningEngines: 1 });
  });

  test('holds per user under concurrent resumes, and other users have their own count', async () => {
    const body = { ...bodies.dai, profile: `${WS}/daiEngineProfiles/one-each` };
    const engines = ['cap-1', 'cap-2', 'cap-3'];
    for (const id of engines) {
      await create('alice', 'daiEngines', id, body);
      await ok(api(), {
        method: 'POST',
        path: `/v1/${enc(`${WS}/daiEngines/${id}`)}:pause`,
        body: {},
        headers: await identity().headers('alice'),
      });
    }
    const resumed = await Promise.all(
      engines.map((id) => call('alice', 'POST', `/v1/${enc(`${WS}/daiEngines/${id}`)}:resume`, {})),
    );
    expect(resumed.map((r) => r.status).sort()).toEqual([200, 429, 429]);
    expect(resumed.find((r) => r.status === 429)?.json).toMatchObject({ code: Code.RESOURCE_EXHAUSTED });
    // Bob's engine of the same profile counts against his own limit only.
    expect((await call('bob', 'POST', `/v1/${WS}/daiEngines?daiEngineId=bob-cap`, body)).status).toBe(200);
    const again = await call('alice', 'POST', `/v1/${WS}/daiEngines?daiEngineId=cap-4`, body);
    expect(again.status).toBe(429);
  });
});

describe('grants per workspace, from a policy file that changes while the gateway runs', () => {
  const TEAM_POLICY = `grants:
  - roles: [admin]
    workspaces: ['*']
    permissions: ['actions/enginemanager/*']
  - description: Team leads administer their team's workspace only.
    roles: [team-lead]
    workspaces: [team]
    permissions: ['actions/enginemanager/*']
  - description: Analysts work in their own workspace only.
    roles: [analyst]
    workspaces: [analysts]
    permissions: ['actions/enginemanager/daiEngines/*']
`;

  /** The gateway reads the file every 2 s; a loaded machine may take several rounds. */
  async function applied(check: () => Promise<boolean>): Promise<void> {
    await waitFor(async () => ((await check()) ? true : undefined), {
      what: 'the changed policy applied',
      timeoutMs: 30_000,
      intervalMs: 50,
    });
  }

  test('a workspace administrator reaches every engine of its workspace, and nothing elsewhere', async () => {
    // Under the default policy, a user like any other.
    expect((await call('carol', 'GET', `/v1/${enc(DAI)}`)).status).toBe(404);
    writeFileSync(identity().policyPath, TEAM_POLICY);
    await applied(async () => (await call('carol', 'GET', `/v1/${enc(DAI)}`)).status === 200);
    expect(names(await call('carol', 'GET', `/v1/${WS}/daiEngines`), 'daiEngines')).toContain(DAI);
    expect((await call('carol', 'POST', `/v1/${enc(DAI)}:pause`, {})).status).toBe(200);
    expect((await call('carol', 'GET', '/v1/workspaces/analysts/daiEngines')).status).toBe(403);
    expect((await call('carol', 'GET', '/v1/workspaces%2F-/engines')).status).toBe(403);
  });

  test('permission is checked before existence: a user without it learns nothing of what exists', async () => {
    const existing = await call('bob', 'GET', `/v1/${enc(`${WS}/daiEngines/bob-dai`)}`);
    const missing = await call('bob', 'GET', `/v1/${enc(`${WS}/daiEngines/none`)}`);
    expect(existing.status).toBe(403);
    expect(missing.status).toBe(403);
    expect(existing.json['message']).toBe(missing.json['message']);
    expect((await call('bob', 'GET', '/v1/workspaces/analysts/daiEngines')).status).toBe(200);
  });

  test('a policy file that is not valid is refused, and the last good policy stays', async () => {
    const reloads = identity().policyReloads;
    const seen = reloads.length;
    writeFileSync(
      identity().policyPath,
      'grants: [{roles: [analyst], workspaces: [team], permissions: [everything]}]',
    );
    await applied(() => Promise.resolve(reloads.length > seen));
    expect(String(reloads.at(-1))).toMatch(/"everything" matches no permission of the API/);
    expect((await call('bob', 'GET', `/v1/${WS}/daiEngines`)).status).toBe(403);
    expect((await call('carol', 'GET', `/v1/${WS}/daiEngines`)).status).toBe(200);
  });
});
