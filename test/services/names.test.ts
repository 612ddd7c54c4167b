/**
 * Names cannot reach across workspaces, and nobody learns more of another user's engine than
 * that its id is taken — over REST and gRPC alike, with real tokens and the default policy.
 */
import { CustomObjectsApi } from '@kubernetes/client-node';
import { Code } from '../../gateway/src/errors/code.ts';
import {
  API_VERSION,
  GROUP,
  ID_LABEL,
  RESOURCE_KINDS,
  VERSION,
  WORKSPACE_LABEL,
} from '../../shared/resources.ts';
import { overGrpc, overRest, type Message, type Outcome } from '../auth/calls.ts';
import { defineCatalogue, engineBodies, ok } from '../auth/catalogue.ts';
import { useApiServer } from '../helpers/api-server.ts';
import { useIdentity } from '../helpers/use-identity.ts';

const NAMESPACE = 'names-test';
const { identity, authenticate, authorizer } = useIdentity({
  accounts: [
    { id: 'admin', name: 'Ada Admin', roles: ['admin'] },
    { id: 'alice', name: 'Alice Smith', roles: ['data-scientist'] },
    { id: 'bob', name: 'Bob Jones', roles: ['data-scientist'] },
  ],
});
const api = useApiServer({ namespace: NAMESPACE, authenticate, authorizer });
type Who = 'admin' | 'alice' | 'bob';

/** The call over REST and over gRPC: both answers, which must agree in code. */
async function both(who: Who, rpc: string, message: Message): Promise<{ rest: Outcome; grpc: Outcome }> {
  const rest = await overRest(api(), { rpc, message, headers: await identity().headers(who) });
  const grpc = await overGrpc(api(), { rpc, message, metadata: await identity().metadata(who) });
  return { rest, grpc };
}

beforeAll(async () => {
  await defineCatalogue(api(), { workspace: 'team', headers: await identity().headers('admin') });
});

describe('workspace ids', () => {
  test.each([
    ['a dot', 'w.sub'],
    ['capitals', 'Team'],
    ['an underscore', 'my_ws'],
    ['64 characters', 'w'.repeat(64)],
  ])('with %s are refused with INVALID_ARGUMENT naming the field, before any lookup', async (_what, ws) => {
    const create = await both('alice', 'DAIEngineService.CreateDAIEngine', {
      parent: `workspaces/${ws}`,
      daiEngineId: 'e1',
      daiEngine: engineBodies('team').dai,
    });
    const get = await both('alice', 'DAIEngineService.GetDAIEngine', {
      name: `workspaces/${ws}/daiEngines/e1`,
    });
    for (const outcome of [create.rest, create.grpc, get.rest, get.grpc]) {
      expect(outcome.code).toBe(Code.INVALID_ARGUMENT);
    }
    expect(create.rest.message).toMatchObject({
      httpStatus: 400,
      message: expect.stringContaining('workspace id') as unknown,
    });
    expect(JSON.stringify(create.rest.message)).toContain('"field":"parent"');
    expect(JSON.stringify(get.rest.message)).toContain('"field":"name"');
  });

  test('UUIDs, "default" and "global" are workspace ids', async () => {
    for (const ws of ['default', 'global', '5f0c2c1e-9d2b-4b1a-8f0e-3c9a7d2e1b40']) {
      const { rest, grpc } = await both('alice', 'DAIEngineService.ListDAIEngines', {
        parent: `workspaces/${ws}`,
      });
      expect([rest.code, grpc.code]).toEqual([0, 0]);
    }
  });
});

describe('names across workspaces', () => {
  test('an object stored for workspace "w.sub" is not reached as workspaces/w/…/sub.e1', async () => {
    // An object as an earlier release stored alice's engine workspaces/w.sub/daiEngines/e1.
    const custom = api().cluster.kubeConfig.makeApiClient(CustomObjectsApi);
    const target = {
      group: GROUP,
      version: VERSION,
      namespace: NAMESPACE,
      plural: RESOURCE_KINDS.DAIEngine.plural,
    };
    await custom.createNamespacedCustomObject({
      ...target,
      body: {
        apiVersion: API_VERSION,
        kind: 'DAIEngine',
        metadata: { name: 'w.sub.e1', labels: { [WORKSPACE_LABEL]: 'w.sub', [ID_LABEL]: 'e1' } },
        spec: { ...engineBodies('team').dai, creator: 'users/alice' },
      },
    });
    const name = 'workspaces/w/daiEngines/sub.e1';
    for (const who of ['alice', 'admin'] as const) {
      const get = await both(who, 'DAIEngineService.GetDAIEngine', { name });
      const remove = await both(who, 'DAIEngineService.DeleteDAIEngine', { name });
      // "sub.e1" is no engine id (engine ids have no dots): refused as such, naming the name.
      for (const outcome of [get.rest, get.grpc, remove.rest, remove.grpc])
        expect(outcome.code).toBe(Code.INVALID_ARGUMENT);
    }
    await expect(custom.getNamespacedCustomObject({ ...target, name: 'w.sub.e1' })).resolves.toBeDefined();
  });

  test('versions 1.10.7 of workspace w and 10.7 of another workspace are different resources', async () => {
    const headers = await identity().headers('admin');
    const created = await ok(api(), {
      method: 'POST',
      path: '/v1/workspaces/w/daiEngineVersions?daiEngineVersionId=1.10.7',
      body: { image: 'dai:1.10.7' },
      headers,
    });
    expect(created['daiEngineVersion']).toMatchObject({ name: 'workspaces/w/daiEngineVersions/1.10.7' });
    const other = await both('admin', 'DAIEngineVersionService.GetDAIEngineVersion', {
      name: 'workspaces/w-1/daiEngineVersions/10.7',
    });
    expect([other.rest.code, other.grpc.code]).toEqual([Code.NOT_FOUND, Code.NOT_FOUND]);
  });
});

describe("another user's engine", () => {
  const body = engineBodies('team').dai;
  const strip = (outcome: Outcome, name: string) =>
    JSON.parse(JSON.stringify(outcome).replaceAll(name, 'NAME')) as unknown;

  beforeAll(async () => {
    for (const [who, id] of [
      ['alice', 'alices'],
      ['bob', 'bobs'],
    ] as const) {
      await ok(api(), {
        method: 'POST',
        path: `/v1/workspaces/team/daiEngines?daiEngineId=${id}`,
        body,
        headers: await identity().headers(who),
      });
    }
  });

  test('reads, changes and deletes exactly like a missing engine', async () => {
    for (const rpc of [
      'DAIEngineService.GetDAIEngine',
      'DAIEngineService.DeleteDAIEngine',
      'DAIEngineService.PauseDAIEngine',
    ]) {
      const theirs = await both('bob', rpc, { name: 'workspaces/team/daiEngines/alices' });
      const missing = await both('bob', rpc, { name: 'workspaces/team/daiEngines/nobodys' });
      expect(strip(theirs.rest, 'alices')).toEqual(strip(missing.rest, 'nobodys'));
      expect(strip(theirs.grpc, 'alices')).toEqual(strip(missing.grpc, 'nobodys'));
    }
  });

  test("taking its id answers ALREADY_EXISTS word for word as taking one's own engine's id", async () => {
    const create = (id: string) =>
      both('bob', 'DAIEngineService.CreateDAIEngine', {
        parent: 'workspaces/team',
        daiEngineId: id,
        daiEngine: body,
      });
    const upsert = (id: string) =>
      both('bob', 'DAIEngineService.UpdateDAIEngine', {
        daiEngine: { ...body, name: `workspaces/team/daiEngines/${id}`, displayName: 'Mine' },
        updateMask: 'display_name',
        allowMissing: true,
      });
    const theirs = await create('alices');
    const own = await create('bobs');
    expect(theirs.rest.code).toBe(Code.ALREADY_EXISTS);
    expect(strip(theirs.rest, 'alices')).toEqual(strip(own.rest, 'bobs'));
    expect(strip(theirs.grpc, 'alices')).toEqual(strip(own.grpc, 'bobs'));
    // An upsert of an id taken by someone else is a create, refused the same way; nothing changes.
    const upserted = await upsert('alices');
    expect(strip(upserted.rest, 'alices')).toEqual(strip(own.rest, 'bobs'));
    expect(upserted.grpc.code).toBe(Code.ALREADY_EXISTS);
    const still = await both('alice', 'DAIEngineService.GetDAIEngine', {
      name: 'workspaces/team/daiEngines/alices',
    });
    expect(still.rest.message?.['daiEngine']).not.toMatchObject({ displayName: 'Mine' });
  });
});
