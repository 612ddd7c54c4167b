import diagnostics from 'node:diagnostics_channel';
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { ApiError } from '../../gateway/src/errors/api-error.ts';
import { Code } from '../../gateway/src/errors/code.ts';
import { fromJson, toJson } from '../../gateway/src/json/canonical.ts';
import { toCustomResource, type CustomResource } from '../../gateway/src/store/objects.ts';
import { ResourceStore } from '../../gateway/src/store/store.ts';
import { MAX_RECORDED_BYTES, RECORDED_ANNOTATION } from '../../shared/recorded.ts';
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
import { waitFor } from '../cluster/wait.ts';

const NAMESPACE = 'store-test';
const PROFILE = RESOURCE_KINDS.DAIEngineProfile;
// The product's kinds from the cluster's start: a kind made moments before the store starts may
// have its watches ended by the apiserver as it settles the new kind, and the store then reads
// as catching up.
const cluster = useCluster({ crds: true });
/** The gateway's store: reads from watch-fed caches. */
let store: ResourceStore;
/** A store without caches: every read goes to the apiserver. */
let direct: ResourceStore;

beforeAll(async () => {
  await cluster()
    .kubeConfig.makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NAMESPACE } } });
  store = new ResourceStore(cluster().kubeConfig, NAMESPACE);
  await store.startCaches();
  direct = new ResourceStore(cluster().kubeConfig, NAMESPACE);
});

afterAll(async () => {
  await store.stopCaches();
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

const custom = () => cluster().kubeConfig.makeApiClient(CustomObjectsApi);
const target = (plural: string) => ({ group: GROUP, version: VERSION_NAME, namespace: NAMESPACE, plural });

/** The object as the apiserver holds it. */
const raw = (plural: string, name: string): Promise<CustomResource> =>
  custom().getNamespacedCustomObject({ ...target(plural), name }) as Promise<CustomResource>;

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

  describe('storage layout', () => {
    const objectOf = (workspace: string, id: string): string => objectName(workspace, id) ?? '';

    test('a create is one write: the output fields travel with the object in an annotation', async () => {
      const created = await store.create(PROFILE, profile('layout', 'one'));
      const object = await raw(PROFILE.plural, objectOf('layout', 'one'));
      // Nothing wrote the object after its creation: no status, and the create's resourceVersion.
      expect(object.status).toBeUndefined();
      expect(object.metadata.resourceVersion).toBe(created.resourceVersion);
      expect(JSON.parse(object.metadata.annotations?.[RECORDED_ANNOTATION] ?? '')).toMatchObject({
        creator: 'users/alice',
      });
      for (const reader of [store, direct])
        expect((await reader.get(PROFILE, 'workspaces/layout/daiEngineProfiles/one')).message).toMatchObject({
          creator: 'users/alice',
        });
    });

    test('an object of the earlier layout (output fields in status) reads, updates and deletes the same', async () => {
      const name = 'workspaces/layout/daiEngineProfiles/old';
      const resource = toCustomResource(PROFILE, profile('layout', 'old'), NAMESPACE);
      const { status, ...object } = resource;
      await custom().createNamespacedCustomObject({ ...target(PROFILE.plural), body: object });
      const patched = (await custom().patchNamespacedCustomObjectStatus(
        { ...target(PROFILE.plural), name: resource.metadata.name, body: { status } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )) as CustomResource;
      expect(await store.cache(PROFILE)?.seen(patched.metadata.resourceVersion, 5_000)).toBe(true);
      const read = await store.get(PROFILE, name);
      // The same message as one written in today's layout, but for what names the object.
      const fresh = await store.create(PROFILE, profile('layout', 'new', { displayName: 'Profile old' }));
      const content = (message: object) => {
        const { name: _name, uid: _uid, createTime: _time, ...rest } = toJson(PROFILE.message, message);
        return rest;
      };
      expect(content(read.message)).toEqual(content(fresh.message));
      expect(content(read.message)).toMatchObject({ creator: 'users/alice', displayName: 'Profile old' });
      const updated = await store.update(
        PROFILE,
        profile('layout', 'old', { displayName: 'Renamed', updater: 'users/bob' }),
        read.resourceVersion,
      );
      expect(updated.message).toMatchObject({
        displayName: 'Renamed',
        creator: 'users/alice',
        updater: 'users/bob',
      });
      await store.delete(PROFILE, name);
      expect(await code(store.get(PROFILE, name))).toBe(Code.NOT_FOUND);
    });

    test('an update that clears a field recorded at creation reads it cleared, in the cache and at the apiserver', async () => {
      const ENGINE = RESOURCE_KINDS.DAIEngine;
      const name = 'workspaces/layout/daiEngines/cleared';
      const engine = (extra: object) =>
        fromJson(ENGINE.message, { name, displayName: 'E', creator: 'users/alice', ...extra }) as {
          name: string;
        };
      const { resourceVersion } = await store.create(ENGINE, engine({ resumeTime: '2026-11-25T00:00:00Z' }));
      // Engines write the status fields the API owns, unset ones as null.
      await store.update(ENGINE, engine({}), resourceVersion, { statusFields: ['creator', 'resumeTime'] });
      for (const reader of [store, direct]) {
        const { message } = await reader.get(ENGINE, name);
        expect(message).toMatchObject({ creator: 'users/alice' });
        expect(toJson(ENGINE.message, message)).not.toHaveProperty('resumeTime');
      }
    });

    test('output fields too large for an annotation are written to status, and read the same', async () => {
      const large = 'd'.repeat(MAX_RECORDED_BYTES);
      const created = await store.create(PROFILE, profile('layout', 'large', { creatorDisplayName: large }));
      const object = await raw(PROFILE.plural, objectOf('layout', 'large'));
      expect(object.metadata.annotations?.[RECORDED_ANNOTATION]).toBeUndefined();
      expect(object.status).toMatchObject({ creator: 'users/alice', creatorDisplayName: large });
      expect(created.message).toMatchObject({ creatorDisplayName: large });
    });
  });

  describe('object names', () => {
    const VERSION = RESOURCE_KINDS.DAIEngineVersion;

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
      for (let i = 0; i < 50; i++) await direct.get(PROFILE, 'workspaces/pool/daiEngineProfiles/p1');
      const sequential = connects.length;
      await Promise.all(
        Array.from({ length: 200 }, () => direct.get(PROFILE, 'workspaces/pool/daiEngineProfiles/p1')),
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
        Array.from({ length: 50 }, () => direct.get(PROFILE, 'workspaces/pool/daiEngineProfiles/p1')),
      );
      expect(connects.length).toBeLessThanOrEqual(5);
    } finally {
      diagnostics.unsubscribe('undici:client:connected', onConnect);
    }
  });

  describe('reads from the watch cache', () => {
    const custom = () => cluster().kubeConfig.makeApiClient(CustomObjectsApi);
    const names = async (workspace: string): Promise<string[]> =>
      (await store.list(PROFILE, workspace)).map((s) => String(s.message['name'])).sort();
    const displayName = async (name: string): Promise<unknown> =>
      toJson(PROFILE.message, (await store.get(PROFILE, name)).message)['displayName'];

    test('a caller reads its own creates, updates and deletes at once, in gets and lists', async () => {
      for (let i = 0; i < 20; i++) {
        const name = `workspaces/own/daiEngineProfiles/p${i}`;
        const created = await store.create(PROFILE, profile('own', `p${i}`));
        expect(await names('own')).toContain(name);
        await store.update(
          PROFILE,
          profile('own', `p${i}`, { displayName: `Renamed ${i}` }),
          created.resourceVersion,
        );
        expect(await displayName(name)).toBe(`Renamed ${i}`);
        expect(
          (await store.list(PROFILE, 'own')).find((s) => s.message['name'] === name)?.message,
        ).toMatchObject({
          displayName: `Renamed ${i}`,
        });
        await store.delete(PROFILE, name);
        expect(await code(store.get(PROFILE, name))).toBe(Code.NOT_FOUND);
        expect(await names('own')).not.toContain(name);
      }
    });

    test("another writer's change (another replica, kubectl) shows within moments, and a new name at once", async () => {
      const name = 'workspaces/other/daiEngineProfiles/p1';
      // Created behind the cache's back: a get finds it at the apiserver before the watch tells.
      await direct.create(PROFILE, profile('other', 'p1'));
      expect(await displayName(name)).toBe('Profile p1');
      await custom().patchNamespacedCustomObject(
        {
          group: GROUP,
          version: VERSION_NAME,
          namespace: NAMESPACE,
          plural: PROFILE.plural,
          name: 'other.p1',
          body: { spec: { displayName: 'Changed by kubectl' } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await waitFor(async () => ((await displayName(name)) === 'Changed by kubectl' ? true : undefined), {
        what: 'the change in the cache',
        timeoutMs: 5_000,
      });
      expect(await names('other')).toEqual([name]);
    });

    test('a watch resumed from a resourceVersion the apiserver no longer holds lists again (410 Gone)', async () => {
      const cache = store.cache(PROFILE);
      if (cache === undefined) throw new Error('no cache');
      const lists = cache.lists;
      cache.resumeFrom('1');
      await waitFor(() => Promise.resolve(cache.lists > lists && store.ready ? true : undefined), {
        what: 'a relist',
        timeoutMs: 10_000,
      });
      await store.create(PROFILE, profile('gone', 'after'));
      expect(await names('gone')).toEqual(['workspaces/gone/daiEngineProfiles/after']);
    });

    test('while the apiserver restarts reads answer UNAVAILABLE, never stale; after it, all is there once', async () => {
      for (let i = 0; i < 10; i++) await store.create(PROFILE, profile('restart', `p${i}`));
      const before = await names('restart');
      await cluster().restartApiserver(async () => {
        await waitFor(() => Promise.resolve(store.ready ? undefined : true), {
          what: 'the caches to notice',
          timeoutMs: 10_000,
        });
        expect(await code(store.list(PROFILE, 'restart'))).toBe(Code.UNAVAILABLE);
        expect(await code(store.get(PROFILE, 'workspaces/restart/daiEngineProfiles/p1'))).toBe(
          Code.UNAVAILABLE,
        );
      });
      await waitFor(() => Promise.resolve(store.ready ? true : undefined), {
        what: 'the caches in sync again',
        timeoutMs: 30_000,
      });
      expect(await names('restart')).toEqual(before);
      // The watch is live again: a change made now reaches the cache.
      await direct.delete(PROFILE, 'workspaces/restart/daiEngineProfiles/p0');
      await waitFor(async () => ((await names('restart')).length === 9 ? true : undefined), {
        what: 'the delete in the cache',
        timeoutMs: 5_000,
      });
    });
  });
});
