import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { ApiError } from '../../gateway/src/errors/api-error.ts';
import { Code } from '../../gateway/src/errors/code.ts';
import { fromJson, toJson } from '../../gateway/src/json/canonical.ts';
import { ResourceStore } from '../../gateway/src/store/store.ts';
import { RESOURCE_KINDS } from '../../shared/resources.ts';
import { freePort } from '../cluster/ports.ts';
import { useCluster } from '../helpers/use-cluster.ts';

const NAMESPACE = 'store-test';
const CRDS = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'crds');
const PROFILE = RESOURCE_KINDS.DAIEngineProfile;
const cluster = useCluster();
let store: ResourceStore;

beforeAll(async () => {
  await cluster().kubectl(['apply', '-f', CRDS]);
  await cluster().kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  await cluster()
    .kubeConfig.makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NAMESPACE } } });
  store = new ResourceStore(cluster().kubeConfig, NAMESPACE);
});

function profile(workspace: string, id: string, extra: Record<string, unknown> = {}): { name: string } {
  return fromJson(PROFILE.message, {
    name: `workspaces/${workspace}/daiEngineProfiles/${id}`,
    displayName: `Profile ${id}`,
    priority: 1,
    cpuConstraint: { min: '1', default: '2', max: '8' },
    creator: 'users/alice',
    ...extra,
  }) as { name: string };
}

async function code(promise: Promise<unknown>): Promise<number | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error: unknown) {
    if (error instanceof ApiError) return error.code;
    throw error;
  }
}

describe('ResourceStore', () => {
  test('creates and reads back a resource, spec and status, with a fresh resourceVersion', async () => {
    const created = await store.create(PROFILE, profile('w1', 'p1'));
    expect(created.resourceVersion).toMatch(/^\d+$/);
    const read = await store.get(PROFILE, 'workspaces/w1/daiEngineProfiles/p1');
    expect(read.resourceVersion).toBe(created.resourceVersion);
    expect(toJson(PROFILE.message, read.message)).toMatchObject({
      name: 'workspaces/w1/daiEngineProfiles/p1',
      displayName: 'Profile p1',
      creator: 'users/alice',
      cpuConstraint: { min: '1', default: '2', max: '8' },
    });
  });

  test('refuses a second resource of the same name with ALREADY_EXISTS', async () => {
    await store.create(PROFILE, profile('w1', 'dup'));
    expect(await code(store.create(PROFILE, profile('w1', 'dup')))).toBe(Code.ALREADY_EXISTS);
  });

  test('answers NOT_FOUND for a missing resource', async () => {
    expect(await code(store.get(PROFILE, 'workspaces/w1/daiEngineProfiles/missing'))).toBe(Code.NOT_FOUND);
    expect(await code(store.delete(PROFILE, 'workspaces/w1/daiEngineProfiles/missing'))).toBe(Code.NOT_FOUND);
  });

  test('lists the resources of one workspace only', async () => {
    await store.create(PROFILE, profile('w2', 'a'));
    await store.create(PROFILE, profile('w2', 'b'));
    await store.create(PROFILE, profile('w3', 'a'));
    const names = (await store.list(PROFILE, 'w2')).map((s) => s.message['name']).sort();
    expect(names).toEqual(['workspaces/w2/daiEngineProfiles/a', 'workspaces/w2/daiEngineProfiles/b']);
  });

  test('of two updates from the same read, exactly one wins and the other is ABORTED', async () => {
    const { resourceVersion } = await store.create(PROFILE, profile('w4', 'race'));
    const results = await Promise.allSettled([
      store.update(PROFILE, profile('w4', 'race', { displayName: 'First' }), resourceVersion),
      store.update(PROFILE, profile('w4', 'race', { displayName: 'Second' }), resourceVersion),
    ]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r) => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect((lost[0] as PromiseRejectedResult).reason).toMatchObject({ code: Code.ABORTED });
    const winner = toJson(
      PROFILE.message,
      (won[0] as PromiseFulfilledResult<{ message: object }>).value.message,
    );
    const stored = toJson(
      PROFILE.message,
      (await store.get(PROFILE, 'workspaces/w4/daiEngineProfiles/race')).message,
    );
    expect(stored['displayName']).toBe(winner['displayName']);
  });

  test('a delete guarded by a stale resourceVersion is ABORTED and deletes nothing', async () => {
    const { resourceVersion } = await store.create(PROFILE, profile('w5', 'kept'));
    await store.update(PROFILE, profile('w5', 'kept', { displayName: 'Changed' }), resourceVersion);
    expect(await code(store.delete(PROFILE, 'workspaces/w5/daiEngineProfiles/kept', resourceVersion))).toBe(
      Code.ABORTED,
    );
    await store.get(PROFILE, 'workspaces/w5/daiEngineProfiles/kept');
    await store.delete(PROFILE, 'workspaces/w5/daiEngineProfiles/kept');
    expect(await code(store.get(PROFILE, 'workspaces/w5/daiEngineProfiles/kept'))).toBe(Code.NOT_FOUND);
  });

  test('a value the stored schema refuses is INVALID_ARGUMENT and leaves nothing behind', async () => {
    const bad = profile('w6', 'long', { displayName: 'x'.repeat(64) });
    expect(await code(store.create(PROFILE, bad))).toBe(Code.INVALID_ARGUMENT);
    expect(await code(store.get(PROFILE, 'workspaces/w6/daiEngineProfiles/long'))).toBe(Code.NOT_FOUND);
  });

  test('an unreachable cluster is UNAVAILABLE', async () => {
    const port = await freePort();
    const offline = new KubeConfig();
    offline.loadFromOptions({
      clusters: [{ name: 'offline', server: `https://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'c', cluster: 'offline', user: 'u' }],
      currentContext: 'c',
    });
    const unreachable = new ResourceStore(offline, NAMESPACE);
    expect(await code(unreachable.get(PROFILE, 'workspaces/w1/daiEngineProfiles/p1'))).toBe(Code.UNAVAILABLE);
  });
});
