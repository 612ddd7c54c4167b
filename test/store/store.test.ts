import diagnostics from 'node:diagnostics_channel';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { ApiError } from '../../gateway/src/errors/api-error.ts';
import { Code } from '../../gateway/src/errors/code.ts';
import { fromJson, toJson } from '../../gateway/src/json/canonical.ts';
import { ResourceStore } from '../../gateway/src/store/store.ts';
import { earlierObjectNames, objectName } from '../../gateway/src/store/names.ts';
import {
  API_VERSION,
  GROUP,
  ID_LABEL,
  RESOURCE_KINDS,
  VERSION as VERSION_NAME,
  WORKSPACE_LABEL,
} from '../../shared/resources.ts';
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

  describe('object names', () => {
    const VERSION = RESOURCE_KINDS.DAIEngineVersion;
    const custom = () => cluster().kubeConfig.makeApiClient(CustomObjectsApi);
    const target = (plural: string) => ({
      group: GROUP,
      version: VERSION_NAME,
      namespace: NAMESPACE,
      plural,
    });

    /** Writes an object directly, as an earlier release, kubectl or another writer would. */
    async function plant(
      plural: string,
      kind: string,
      name: string,
      labels: Record<string, string>,
      spec: object,
    ) {
      const body = { apiVersion: API_VERSION, kind, metadata: { name, labels }, spec };
      await custom().createNamespacedCustomObject({ ...target(plural), body });
    }
    const exists = async (plural: string, name: string) =>
      custom()
        .getNamespacedCustomObject({ ...target(plural), name })
        .then(() => true)
        .catch(() => false);

    test('an object whose labels name another resource is never reached under its name', async () => {
      // Release 1 stored workspace "n.sub", id "e1" as n.sub.e1, the name "n/sub.e1" has today.
      await plant(
        PROFILE.plural,
        PROFILE.kind,
        'n.sub.p1',
        { [WORKSPACE_LABEL]: 'n.sub', [ID_LABEL]: 'p1' },
        {
          displayName: 'Theirs',
          priority: 1,
        },
      );
      const lookalike = 'workspaces/n/daiEngineProfiles/sub.p1';
      expect(await code(store.get(PROFILE, lookalike))).toBe(Code.NOT_FOUND);
      expect(await code(store.delete(PROFILE, lookalike))).toBe(Code.NOT_FOUND);
      expect(await code(store.update(PROFILE, profile('n', 'sub.p1'), '1'))).toBe(Code.NOT_FOUND);
      expect(await exists(PROFILE.plural, 'n.sub.p1')).toBe(true);
      // Lists skip what no API name can reach, rather than failing.
      expect((await store.list(PROFILE, '-')).map((s) => s.message['name'])).not.toContain(
        'workspaces/n.sub/daiEngineProfiles/p1',
      );
    });

    test('an object written by release 1 under a hashed name still reads, updates and deletes', async () => {
      const name = 'workspaces/global/daiEngineVersions/1.10.6-RC1';
      const [release1] = earlierObjectNames('global', '1.10.6-RC1');
      expect(release1).toMatch(/^global\.0[0-9a-f]{24}$/);
      await plant(
        VERSION.plural,
        VERSION.kind,
        release1 ?? '',
        { [WORKSPACE_LABEL]: 'global', [ID_LABEL]: '1.10.6-RC1' },
        {
          image: 'dai:1.10.6-rc1',
        },
      );
      const read = await store.get(VERSION, name);
      expect(read.message).toMatchObject({ name, image: 'dai:1.10.6-rc1' });
      // A create of the same resource under today's name would make a second copy: refused.
      const again = fromJson(VERSION.message, { name, image: 'other' }) as { name: string };
      expect(await code(store.create(VERSION, again))).toBe(Code.ALREADY_EXISTS);
      const changed = fromJson(VERSION.message, {
        ...toJson(VERSION.message, read.message),
        image: 'dai:2',
      }) as {
        name: string;
      };
      const updated = await store.update(VERSION, changed, read.resourceVersion);
      expect(updated.message).toMatchObject({ name, image: 'dai:2' });
      expect(await exists(VERSION.plural, release1 ?? '')).toBe(true);
      await store.delete(VERSION, name);
      expect(await code(store.get(VERSION, name))).toBe(Code.NOT_FOUND);
    });

    test('a new version with an id that is no valid name part is stored under an encoded name', async () => {
      const name = 'workspaces/global/daiEngineVersions/2.0.0-RC1';
      await store.create(VERSION, fromJson(VERSION.message, { name, image: 'dai:2' }) as { name: string });
      expect(await exists(VERSION.plural, objectName('global', '2.0.0-RC1') ?? '')).toBe(true);
      expect((await store.get(VERSION, name)).message).toMatchObject({ name });
    });
  });

  test('a burst of calls reuses pooled connections instead of one TLS handshake each', async () => {
    // undici announces every new connection on this channel, whichever copy of it connects.
    const connects: unknown[] = [];
    const onConnect = (message: unknown): void => {
      connects.push(message);
    };
    diagnostics.subscribe('undici:client:connected', onConnect);
    try {
      await store.create(PROFILE, profile('pool', 'p1'));
      connects.length = 0;
      for (let i = 0; i < 50; i++) await store.get(PROFILE, 'workspaces/pool/daiEngineProfiles/p1');
      const sequential = connects.length;
      await Promise.all(
        Array.from({ length: 200 }, () => store.get(PROFILE, 'workspaces/pool/daiEngineProfiles/p1')),
      );
      // 200 calls at once may open parallel connections, but far fewer than one per call, and
      // later calls find them open.
      expect({ sequential, burst: connects.length - sequential }).toEqual({
        sequential: 0,
        burst: expect.any(Number) as unknown,
      });
      expect(connects.length - sequential).toBeLessThan(100);
      connects.length = 0;
      await Promise.all(
        Array.from({ length: 50 }, () => store.get(PROFILE, 'workspaces/pool/daiEngineProfiles/p1')),
      );
      expect(connects.length).toBeLessThanOrEqual(5);
    } finally {
      diagnostics.unsubscribe('undici:client:connected', onConnect);
    }
  });
});
