/**
 * What every Store does, as one suite run against each: the Kubernetes store on a real control
 * plane (test/store/store-contract.test.ts) and the in-memory one
 * (gateway/src/store/memory-store.test.ts). A rule the in-memory store would break here is one
 * that unit tests of the services could not be trusted on.
 *
 * Each test works in workspaces of its own, so that one store may serve every test.
 */
import { randomBytes } from 'node:crypto';
import { ApiError } from '../../gateway/src/errors/api-error.ts';
import { Code } from '../../gateway/src/errors/code.ts';
import { fromJson, toJson } from '../../gateway/src/json/canonical.ts';
import type { IndexSpec } from '../../gateway/src/list/ordered-index.ts';
import type { Store, Stored } from '../../gateway/src/store/store-interface.ts';
import { MAX_RECORDED_BYTES } from '../../shared/recorded.ts';
import { LAST_ACTIVITY_ANNOTATION, RESOURCE_KINDS, type ResourceKind } from '../../shared/resources.ts';

const PROFILE = RESOURCE_KINDS.DAIEngineProfile;
const H2O_PROFILE = RESOURCE_KINDS.H2OEngineProfile;
const ENGINE = RESOURCE_KINDS.DAIEngine;

/** A workspace no other test (nor an earlier run on the same cluster) uses. */
function freshWorkspace(): string {
  return `c-${randomBytes(5).toString('hex')}`;
}

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

function engine(workspace: string, id: string, extra: Record<string, unknown> = {}): { name: string } {
  return fromJson(ENGINE.message, {
    name: `workspaces/${workspace}/daiEngines/${id}`,
    displayName: `Engine ${id}`,
    creator: 'users/alice',
    ...extra,
  }) as { name: string };
}

const profileName = (workspace: string, id: string): string =>
  `workspaces/${workspace}/daiEngineProfiles/${id}`;
const engineName = (workspace: string, id: string): string => `workspaces/${workspace}/daiEngines/${id}`;
const json = (kind: ResourceKind, stored: Stored): Record<string, unknown> =>
  toJson(kind.message, stored.message);
const names = (listed: readonly Stored[]): unknown[] => listed.map((stored) => stored.message['name']);

/** The code and reason a call failed with; it must fail with an ApiError. */
async function failure(promise: Promise<unknown>): Promise<{ code: Code; reason: string }> {
  try {
    await promise;
  } catch (error: unknown) {
    if (error instanceof ApiError) return { code: error.code, reason: error.reason };
    throw error;
  }
  throw new Error('the call succeeded');
}

/** Whether resourceVersion `a` is newer than `b`. */
const newer = (a: string, b: string): boolean => BigInt(a) > BigInt(b);

/**
 * Runs the contract against the store `makeStore` gives; it is called once per test, and may
 * answer the same store each time.
 */
export function describeStoreContract(name: string, makeStore: () => Store | Promise<Store>): void {
  describe(`${name} keeps the Store contract`, () => {
    let store: Store;
    let ws: string;

    beforeEach(async () => {
      store = await makeStore();
      ws = freshWorkspace();
    });

    describe('create and get', () => {
      test('a created resource reads back as written, with a resourceVersion, uid and creation time', async () => {
        const written = await store.create(PROFILE, profile(ws, 'p1'));
        expect(written.resourceVersion).toMatch(/^\d+$/);
        const read = await store.get(PROFILE, profileName(ws, 'p1'));
        expect(read.resourceVersion).toBe(written.resourceVersion);
        expect(read.message).toEqual(written.message);
        expect(json(PROFILE, read)).toMatchObject({
          name: profileName(ws, 'p1'),
          displayName: 'Profile p1',
          creator: 'users/alice',
          priority: 1,
          cpuConstraint: { min: '1', default: '2', max: '8' },
          createTime: expect.any(String) as unknown,
        });
        const created = await store.create(ENGINE, engine(ws, 'e1'));
        expect(json(ENGINE, created)['uid']).toMatch(
          /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
        );
        expect(json(ENGINE, await store.get(ENGINE, engineName(ws, 'e1')))['uid']).toBe(
          json(ENGINE, created)['uid'],
        );
      });

      test('a second resource of the same name is ALREADY_EXISTS and leaves the first as it was', async () => {
        const first = await store.create(PROFILE, profile(ws, 'dup'));
        expect(await failure(store.create(PROFILE, profile(ws, 'dup', { displayName: 'Other' })))).toEqual({
          code: Code.ALREADY_EXISTS,
          reason: 'RESOURCE_EXISTS',
        });
        const read = await store.get(PROFILE, profileName(ws, 'dup'));
        expect(read.resourceVersion).toBe(first.resourceVersion);
        expect(json(PROFILE, read)['displayName']).toBe('Profile dup');
      });

      test('the same id in another workspace or of another kind is another resource', async () => {
        const other = freshWorkspace();
        await store.create(PROFILE, profile(ws, 'same'));
        await store.create(PROFILE, profile(other, 'same'));
        const h2o = fromJson(H2O_PROFILE.message, {
          name: `workspaces/${ws}/h2oEngineProfiles/same`,
          displayName: 'H2O',
          priority: 1,
          creator: 'users/alice',
        }) as { name: string };
        await store.create(H2O_PROFILE, h2o);
        expect((await store.get(H2O_PROFILE, h2o.name)).message['name']).toBe(h2o.name);
        expect(names(await store.list(PROFILE, ws))).toEqual([profileName(ws, 'same')]);
      });

      test('a name no object can hold is INVALID_ARGUMENT, and nothing is stored', async () => {
        const name = 'workspaces/Not_A_Workspace/daiEngineProfiles/p1';
        expect(await failure(store.create(PROFILE, profile('Not_A_Workspace', 'p1')))).toEqual({
          code: Code.INVALID_ARGUMENT,
          reason: 'INVALID_NAME',
        });
        expect((await failure(store.get(PROFILE, name))).code).toBe(Code.NOT_FOUND);
      });

      test('output fields too large to travel with the object read back the same', async () => {
        const large = 'd'.repeat(MAX_RECORDED_BYTES);
        const created = await store.create(PROFILE, profile(ws, 'large', { creatorDisplayName: large }));
        expect(json(PROFILE, created)).toMatchObject({ creator: 'users/alice', creatorDisplayName: large });
        const read = await store.get(PROFILE, profileName(ws, 'large'));
        expect(read.message).toEqual(created.message);
        expect(read.resourceVersion).toBe(created.resourceVersion);
      });

      test("an engine's wanted lifecycle is stored beside its message, unset parts as false", async () => {
        const paused = await store.create(ENGINE, engine(ws, 'paused'), { intent: { paused: true } });
        expect(paused.intent).toEqual({ paused: true });
        expect((await store.get(ENGINE, engineName(ws, 'paused'))).intent).toEqual({ paused: true });
        const plain = await store.create(ENGINE, engine(ws, 'plain'));
        expect(plain.intent).toEqual({ paused: false });
        await store.create(PROFILE, profile(ws, 'p'));
        expect((await store.get(PROFILE, profileName(ws, 'p'))).intent).toEqual({});
      });
    });

    describe('missing resources', () => {
      test('get, update, annotate and delete of a missing resource are NOT_FOUND', async () => {
        const missing = profileName(ws, 'missing');
        const notFound = { code: Code.NOT_FOUND, reason: 'RESOURCE_NOT_FOUND' };
        expect(await failure(store.get(PROFILE, missing))).toEqual(notFound);
        expect(await failure(store.update(PROFILE, profile(ws, 'missing'), '1'))).toEqual(notFound);
        expect(await failure(store.annotate(PROFILE, missing, { a: 'b' }))).toEqual(notFound);
        expect(await failure(store.delete(PROFILE, missing))).toEqual(notFound);
        expect(await failure(store.delete(PROFILE, missing, '1'))).toEqual(notFound);
      });

      test('a resource of one kind is not found as another kind', async () => {
        await store.create(PROFILE, profile(ws, 'p1'));
        expect((await failure(store.get(H2O_PROFILE, `workspaces/${ws}/h2oEngineProfiles/p1`))).code).toBe(
          Code.NOT_FOUND,
        );
      });
    });

    describe('list', () => {
      test("lists a workspace's resources of one kind only", async () => {
        const other = freshWorkspace();
        await store.create(PROFILE, profile(ws, 'a'));
        await store.create(PROFILE, profile(ws, 'b'));
        await store.create(PROFILE, profile(other, 'a'));
        await store.create(ENGINE, engine(ws, 'a'));
        expect(names(await store.list(PROFILE, ws)).sort()).toEqual([
          profileName(ws, 'a'),
          profileName(ws, 'b'),
        ]);
        expect(names(await store.list(ENGINE, ws))).toEqual([engineName(ws, 'a')]);
        expect(await store.list(PROFILE, freshWorkspace())).toEqual([]);
      });

      test('"-" lists every workspace', async () => {
        const other = freshWorkspace();
        await store.create(PROFILE, profile(ws, 'a'));
        await store.create(PROFILE, profile(other, 'b'));
        const all = names(await store.list(PROFILE, '-'));
        expect(all).toEqual(expect.arrayContaining([profileName(ws, 'a'), profileName(other, 'b')]));
        expect(names(await store.list(ENGINE, '-'))).not.toContain(profileName(ws, 'a'));
      });

      test('lists carry the same messages and resourceVersions as gets', async () => {
        await store.create(PROFILE, profile(ws, 'a'));
        const { resourceVersion } = await store.create(PROFILE, profile(ws, 'b'));
        await store.update(PROFILE, profile(ws, 'b', { displayName: 'B' }), resourceVersion);
        for (const listed of await store.list(PROFILE, ws)) {
          const read = await store.get(PROFILE, listed.message['name'] as string);
          expect(listed).toEqual(read);
        }
      });

      test('a workspace lists in the order of the latest writes, all workspaces in the order of creation', async () => {
        // The watch cache's order; callers sort, but the in-memory store keeps it too.
        const a = await store.create(PROFILE, profile(ws, 'a'));
        await store.create(PROFILE, profile(ws, 'b'));
        await store.create(PROFILE, profile(ws, 'c'));
        await store.update(PROFILE, profile(ws, 'a', { displayName: 'A' }), a.resourceVersion);
        expect(names(await store.list(PROFILE, ws))).toEqual([
          profileName(ws, 'b'),
          profileName(ws, 'c'),
          profileName(ws, 'a'),
        ]);
        const mine = names(await store.list(PROFILE, '-')).filter((n) =>
          String(n).startsWith(`workspaces/${ws}/`),
        );
        expect(mine).toEqual([profileName(ws, 'a'), profileName(ws, 'b'), profileName(ws, 'c')]);
      });
    });

    describe('update', () => {
      test('replaces the message under a newer resourceVersion, keeping uid and creation time', async () => {
        const created = await store.create(PROFILE, profile(ws, 'p1'));
        const updated = await store.update(
          PROFILE,
          profile(ws, 'p1', { displayName: 'Renamed', updater: 'users/bob', priority: 2 }),
          created.resourceVersion,
        );
        expect(newer(updated.resourceVersion, created.resourceVersion)).toBe(true);
        expect(json(PROFILE, updated)).toMatchObject({
          displayName: 'Renamed',
          updater: 'users/bob',
          priority: 2,
          creator: 'users/alice',
          createTime: json(PROFILE, created)['createTime'],
        });
        expect(await store.get(PROFILE, profileName(ws, 'p1'))).toEqual(updated);
        const createdEngine = await store.create(ENGINE, engine(ws, 'e1'));
        const renamed = await store.update(
          ENGINE,
          engine(ws, 'e1', { displayName: 'E' }),
          createdEngine.resourceVersion,
        );
        expect(json(ENGINE, renamed)).toMatchObject({
          displayName: 'E',
          uid: json(ENGINE, createdEngine)['uid'],
          createTime: json(ENGINE, createdEngine)['createTime'],
        });
      });

      test('a field left out of the new message is gone', async () => {
        const created = await store.create(
          PROFILE,
          profile(ws, 'p1', { gpuResourceName: 'example.com/gpu' }),
        );
        expect(json(PROFILE, created)['gpuResourceName']).toBe('example.com/gpu');
        const updated = await store.update(PROFILE, profile(ws, 'p1'), created.resourceVersion);
        expect(json(PROFILE, updated)['gpuResourceName'] ?? '').toBe('');
        expect(json(PROFILE, await store.get(PROFILE, profileName(ws, 'p1')))['gpuResourceName'] ?? '').toBe(
          '',
        );
      });

      test('an update that changes nothing keeps the resourceVersion', async () => {
        const created = await store.create(PROFILE, profile(ws, 'p1'));
        const updated = await store.update(
          PROFILE,
          profile(ws, 'p1', { displayName: 'R' }),
          created.resourceVersion,
        );
        const again = await store.update(
          PROFILE,
          profile(ws, 'p1', { displayName: 'R' }),
          updated.resourceVersion,
        );
        expect(again.resourceVersion).toBe(updated.resourceVersion);
        expect(again.message).toEqual(updated.message);
        expect(store.newestWrite(PROFILE)).toBe(updated.resourceVersion);
      });

      test('an update from a stale read is ABORTED and changes nothing', async () => {
        const created = await store.create(PROFILE, profile(ws, 'p1'));
        const first = await store.update(
          PROFILE,
          profile(ws, 'p1', { displayName: 'First' }),
          created.resourceVersion,
        );
        expect(
          await failure(
            store.update(PROFILE, profile(ws, 'p1', { displayName: 'Late' }), created.resourceVersion),
          ),
        ).toEqual({ code: Code.ABORTED, reason: 'CONCURRENT_CHANGE' });
        expect(await store.get(PROFILE, profileName(ws, 'p1'))).toEqual(first);
      });

      test('of two updates from the same read, exactly one wins and the other is ABORTED', async () => {
        const { resourceVersion } = await store.create(PROFILE, profile(ws, 'race'));
        const results = await Promise.allSettled([
          store.update(PROFILE, profile(ws, 'race', { displayName: 'First' }), resourceVersion),
          store.update(PROFILE, profile(ws, 'race', { displayName: 'Second' }), resourceVersion),
        ]);
        const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
        expect(won).toHaveLength(1);
        expect(lost).toEqual([expect.objectContaining({ code: Code.ABORTED })]);
        expect(await store.get(PROFILE, profileName(ws, 'race'))).toEqual(won[0]);
      });

      test('an update without a resourceVersion is INVALID_ARGUMENT and changes nothing', async () => {
        const created = await store.create(PROFILE, profile(ws, 'p1'));
        expect((await failure(store.update(PROFILE, profile(ws, 'p1', { displayName: 'X' }), ''))).code).toBe(
          Code.INVALID_ARGUMENT,
        );
        expect(await store.get(PROFILE, profileName(ws, 'p1'))).toEqual(created);
      });

      test('an update of some status fields keeps the others, and clears a listed one that is unset', async () => {
        const resumeTime = '2026-11-25T00:00:00Z';
        const created = await store.create(ENGINE, engine(ws, 'e1', { state: 'STATE_STARTING', resumeTime }));
        expect(json(ENGINE, created)).toMatchObject({ state: 'STATE_STARTING', resumeTime });
        // A state reported after the creation, as the operator does.
        const running = await store.update(
          ENGINE,
          engine(ws, 'e1', { state: 'STATE_RUNNING', resumeTime }),
          created.resourceVersion,
          { statusFields: ['state'] },
        );
        expect(json(ENGINE, running)).toMatchObject({ state: 'STATE_RUNNING', resumeTime });
        // What the operator reports (state) is not the gateway's to overwrite.
        const updated = await store.update(
          ENGINE,
          engine(ws, 'e1', { state: 'STATE_PAUSED', apiUrl: 'http://example.com', displayName: 'Renamed' }),
          running.resourceVersion,
          { statusFields: ['creator', 'apiUrl', 'resumeTime'] },
        );
        const read = json(ENGINE, await store.get(ENGINE, engineName(ws, 'e1')));
        for (const written of [json(ENGINE, updated), read]) {
          expect(written).toMatchObject({
            state: 'STATE_RUNNING',
            creator: 'users/alice',
            apiUrl: 'http://example.com',
            displayName: 'Renamed',
          });
          expect(written).not.toHaveProperty('resumeTime');
        }
      });

      test('an update without listed status fields writes them all', async () => {
        const created = await store.create(ENGINE, engine(ws, 'e1', { state: 'STATE_RUNNING' }));
        const updated = await store.update(
          ENGINE,
          engine(ws, 'e1', { state: 'STATE_PAUSING' }),
          created.resourceVersion,
        );
        expect(json(ENGINE, updated)['state']).toBe('STATE_PAUSING');
        expect(json(ENGINE, await store.get(ENGINE, engineName(ws, 'e1')))['state']).toBe('STATE_PAUSING');
      });

      test("an update sets the engine's wanted lifecycle it is given", async () => {
        const created = await store.create(ENGINE, engine(ws, 'e1'));
        const paused = await store.update(ENGINE, engine(ws, 'e1'), created.resourceVersion, {
          intent: { paused: true },
        });
        expect(paused.intent).toEqual({ paused: true });
        expect(newer(paused.resourceVersion, created.resourceVersion)).toBe(true);
        expect((await store.get(ENGINE, engineName(ws, 'e1'))).intent).toEqual({ paused: true });
        const resumed = await store.update(ENGINE, engine(ws, 'e1'), paused.resourceVersion);
        expect(resumed.intent).toEqual({ paused: false });
      });
    });

    describe('annotate', () => {
      test('is a write: the message stays, the resourceVersion moves, and an update from before it is ABORTED', async () => {
        const created = await store.create(ENGINE, engine(ws, 'e1'));
        await store.annotate(ENGINE, engineName(ws, 'e1'), {
          [LAST_ACTIVITY_ANNOTATION]: '2026-11-25T00:00:00Z',
        });
        const read = await store.get(ENGINE, engineName(ws, 'e1'));
        expect(newer(read.resourceVersion, created.resourceVersion)).toBe(true);
        expect(store.newestWrite(ENGINE)).toBe(read.resourceVersion);
        expect(json(ENGINE, read)).toMatchObject({ displayName: 'Engine e1', creator: 'users/alice' });
        expect(
          (
            await failure(
              store.update(ENGINE, engine(ws, 'e1', { displayName: 'X' }), created.resourceVersion),
            )
          ).code,
        ).toBe(Code.ABORTED);
        // The annotation survives an update, which replaces the message only.
        await store.update(ENGINE, engine(ws, 'e1', { displayName: 'X' }), read.resourceVersion);
        const again = await store.get(ENGINE, engineName(ws, 'e1'));
        await store.annotate(ENGINE, engineName(ws, 'e1'), {
          [LAST_ACTIVITY_ANNOTATION]: '2026-11-25T00:00:00Z',
        });
        expect((await store.get(ENGINE, engineName(ws, 'e1'))).resourceVersion).toBe(again.resourceVersion);
      });
    });

    describe('delete', () => {
      test('deletes: the resource is gone from gets and lists, and its name is free again', async () => {
        await store.create(PROFILE, profile(ws, 'p1'));
        await store.create(PROFILE, profile(ws, 'p2'));
        await store.delete(PROFILE, profileName(ws, 'p1'));
        expect((await failure(store.get(PROFILE, profileName(ws, 'p1')))).code).toBe(Code.NOT_FOUND);
        expect(names(await store.list(PROFILE, ws))).toEqual([profileName(ws, 'p2')]);
        expect(names(await store.list(PROFILE, '-'))).not.toContain(profileName(ws, 'p1'));
        await store.create(PROFILE, profile(ws, 'p1'));
        expect(names(await store.list(PROFILE, ws))).toEqual([profileName(ws, 'p2'), profileName(ws, 'p1')]);
        const created = await store.create(PROFILE, profile(ws, 'p3'));
        await store.delete(PROFILE, profileName(ws, 'p3'));
        const again = await store.create(PROFILE, profile(ws, 'p3'));
        expect(newer(again.resourceVersion, created.resourceVersion)).toBe(true);
      });

      test('an engine is written with the cleanup finalizer: deleted, it stays, marked, until the operator releases it', async () => {
        const created = await store.create(ENGINE, engine(ws, 'e1'));
        await store.delete(ENGINE, engineName(ws, 'e1'));
        const deleting = await store.get(ENGINE, engineName(ws, 'e1'));
        expect(json(ENGINE, deleting)['state']).toBe('STATE_DELETING');
        expect(json(ENGINE, deleting)['deleteTime']).toEqual(expect.any(String));
        expect(newer(deleting.resourceVersion, created.resourceVersion)).toBe(true);
        expect((await failure(store.create(ENGINE, engine(ws, 'e1')))).code).toBe(Code.ALREADY_EXISTS);
      });

      test('a delete guarded by the current resourceVersion deletes', async () => {
        const created = await store.create(PROFILE, profile(ws, 'p1'));
        await store.delete(PROFILE, profileName(ws, 'p1'), created.resourceVersion);
        expect((await failure(store.get(PROFILE, profileName(ws, 'p1')))).code).toBe(Code.NOT_FOUND);
      });

      test('a delete guarded by a stale resourceVersion is ABORTED and deletes nothing', async () => {
        const created = await store.create(PROFILE, profile(ws, 'p1'));
        const updated = await store.update(
          PROFILE,
          profile(ws, 'p1', { displayName: 'Changed' }),
          created.resourceVersion,
        );
        expect(await failure(store.delete(PROFILE, profileName(ws, 'p1'), created.resourceVersion))).toEqual({
          code: Code.ABORTED,
          reason: 'CONCURRENT_CHANGE',
        });
        expect(await store.get(PROFILE, profileName(ws, 'p1'))).toEqual(updated);
      });

      test('a second delete is NOT_FOUND', async () => {
        await store.create(PROFILE, profile(ws, 'p1'));
        await store.delete(PROFILE, profileName(ws, 'p1'));
        expect((await failure(store.delete(PROFILE, profileName(ws, 'p1')))).code).toBe(Code.NOT_FOUND);
      });
    });

    describe('reads of its own writes', () => {
      test('a caller reads its own creates, updates and deletes at once, in gets and lists', async () => {
        for (let i = 0; i < 10; i++) {
          const name = profileName(ws, `p${i}`);
          const created = await store.create(PROFILE, profile(ws, `p${i}`));
          expect(await store.get(PROFILE, name)).toEqual(created);
          expect(names(await store.list(PROFILE, ws))).toContain(name);
          expect(names(await store.list(PROFILE, '-'))).toContain(name);
          const updated = await store.update(
            PROFILE,
            profile(ws, `p${i}`, { displayName: `R${i}` }),
            created.resourceVersion,
          );
          expect(await store.get(PROFILE, name)).toEqual(updated);
          expect((await store.list(PROFILE, ws)).find((s) => s.message['name'] === name)).toEqual(updated);
          await store.delete(PROFILE, name);
          expect((await failure(store.get(PROFILE, name))).code).toBe(Code.NOT_FOUND);
          expect(names(await store.list(PROFILE, ws))).not.toContain(name);
        }
      });

      test("an ordered run holds a workspace's resources of one group in order, with the caller's writes at once", async () => {
        const other = freshWorkspace();
        const text = (stored: Stored, field: string): string => String(stored.message[field]);
        // Ordered by display name, then name; grouped by the display name's first letter.
        const spec: IndexSpec<Stored> = {
          id: `contract ${ws}`,
          key: (stored) => [text(stored, 'displayName'), text(stored, 'name')],
          compare: (a, b) => String(a).localeCompare(String(b)),
          group: (stored) => text(stored, 'displayName').charAt(0),
        };
        const run = async (workspace: string, group: string): Promise<unknown[]> => {
          const ordered = await store.ordered(ENGINE, workspace, spec, group);
          return Array.from({ length: ordered.size }, (_, i) => ordered.at(i)?.message['name']);
        };
        for (const id of ['e3', 'e1', 'e2']) await store.create(ENGINE, engine(ws, id));
        await store.create(ENGINE, engine(other, 'e0'));
        expect(await run(ws, 'E')).toEqual([
          engineName(ws, 'e1'),
          engineName(ws, 'e2'),
          engineName(ws, 'e3'),
        ]);
        const e2 = await store.get(ENGINE, engineName(ws, 'e2'));
        await store.update(ENGINE, engine(ws, 'e2', { displayName: 'X e2' }), e2.resourceVersion);
        // Deleted, e1 stays until the operator releases its finalizer, marked for deletion.
        await store.delete(ENGINE, engineName(ws, 'e1'));
        expect(await run(ws, 'E')).toEqual([engineName(ws, 'e1'), engineName(ws, 'e3')]);
        expect(await run(ws, 'X')).toEqual([engineName(ws, 'e2')]);
        expect(await run(ws, 'none')).toEqual([]);
        expect(await run('-', 'E')).toEqual(
          expect.arrayContaining([engineName(ws, 'e3'), engineName(other, 'e0')]),
        );
        // A page starts after its token's key, wherever that falls.
        const ordered = await store.ordered(ENGINE, ws, spec, 'E');
        expect([['D'], ['Engine e3', engineName(ws, 'e3')], ['F']].map((key) => ordered.after(key))).toEqual([
          0, 2, 2,
        ]);
      });

      test('each write answers a newer resourceVersion, the newest write of its kind, which reads have caught up with', async () => {
        const created = await store.create(PROFILE, profile(ws, 'p1'));
        expect(store.newestWrite(PROFILE)).toBe(created.resourceVersion);
        const updated = await store.update(
          PROFILE,
          profile(ws, 'p1', { displayName: 'R' }),
          created.resourceVersion,
        );
        expect(newer(updated.resourceVersion, created.resourceVersion)).toBe(true);
        expect(store.newestWrite(PROFILE)).toBe(updated.resourceVersion);
        expect(await store.caughtUp(PROFILE, updated.resourceVersion)).toBe(true);
        const other = await store.create(PROFILE, profile(ws, 'p2'));
        expect(newer(other.resourceVersion, updated.resourceVersion)).toBe(true);
      });

      test('a read is a copy the caller cannot change', async () => {
        await store.create(PROFILE, profile(ws, 'p1'));
        const read = await store.get(PROFILE, profileName(ws, 'p1'));
        expect(() => {
          read.message['displayName'] = 'Changed';
        }).toThrow(TypeError);
        const [listed] = await store.list(PROFILE, ws);
        expect(Object.isFrozen(listed?.message)).toBe(true);
        expect(json(PROFILE, await store.get(PROFILE, profileName(ws, 'p1')))['displayName']).toBe(
          'Profile p1',
        );
      });

      test("what a write answers is the caller's own: changing it changes nothing stored", async () => {
        const created = await store.create(PROFILE, profile(ws, 'p1'));
        created.message['displayName'] = 'Changed';
        expect(json(PROFILE, await store.get(PROFILE, profileName(ws, 'p1')))['displayName']).toBe(
          'Profile p1',
        );
      });
    });

    describe('locks', () => {
      test('callers of one key take turns, each told what the previous one wrote', async () => {
        const key = `contract/${ws}`;
        const events: string[] = [];
        const entered = Promise.withResolvers<undefined>();
        const leave = Promise.withResolvers<undefined>();
        const holding = store.locks.run(key, async (held) => {
          events.push(`first in, told ${String(held.lastWrite)}`);
          entered.resolve(undefined);
          await leave.promise;
          events.push('first out');
          return { result: 1, wrote: '41' };
        });
        await entered.promise;
        const waiting = store.locks.run(key, (held) => {
          events.push(`second in, told ${String(held.lastWrite)}`);
          return Promise.resolve({ result: 2 });
        });
        leave.resolve(undefined);
        expect(await Promise.all([holding, waiting])).toEqual([1, 2]);
        expect(events).toEqual(['first in, told undefined', 'first out', 'second in, told 41']);
        // A holder that wrote nothing passes on what it was told.
        expect(await store.locks.run(key, (held) => Promise.resolve({ result: held.lastWrite }))).toBe('41');
      });

      test('a failing holder gives the lock back, and its caller gets the failure', async () => {
        const key = `contract/${ws}`;
        const failing = store.locks.run(key, () => Promise.reject(new Error('refused')));
        await expect(failing).rejects.toThrow('refused');
        expect(
          await store.locks.run(key, (held) =>
            Promise.resolve({ result: { took: held.tookOver, told: held.lastWrite } }),
          ),
        ).toEqual({ took: false, told: undefined });
      });

      test('callers of other keys do not wait for each other', async () => {
        const release = Promise.withResolvers<undefined>();
        const holding = store.locks.run(`contract/${ws}/a`, async () => {
          await release.promise;
          return { result: 'a' };
        });
        expect(await store.locks.run(`contract/${ws}/b`, () => Promise.resolve({ result: 'b' }))).toBe('b');
        release.resolve(undefined);
        expect(await holding).toBe('a');
      });

      test('a list under a lock holds every write made before it', async () => {
        const key = `contract/${ws}`;
        const created = await store.create(PROFILE, profile(ws, 'p1'));
        await store.locks.run(key, async () => {
          const second = await store.create(PROFILE, profile(ws, 'p2'));
          return { result: undefined, wrote: second.resourceVersion };
        });
        const listed = await store.locks.run(key, async (held) => ({
          result: await store.listHeld(PROFILE, ws, held),
        }));
        expect(names(listed).sort()).toEqual([profileName(ws, 'p1'), profileName(ws, 'p2')]);
        expect(listed.find((s) => s.message['name'] === profileName(ws, 'p1'))).toEqual(created);
      });
    });
  });
}
