import { ENGINE_FINALIZER, ID_LABEL, WORKSPACE_LABEL } from '../../../shared/resources.ts';
import { RECORDED_ANNOTATION } from '../../../shared/recorded.ts';
import type { Handlers } from '../call/handler.ts';
import { ApiError, invalidArgument } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { currentAdmission } from '../store/admission.ts';
import type { CustomResource } from '../store/objects.ts';
import { AdmittedWrites, applyPatch } from './admitted-writes.ts';
import { decide, type DecideDeps } from './decide.ts';
import type { AdmissionRequest, PatchOperation } from './review.ts';

const NAMESPACE = 'aiem';
const CREATE = 'ai.h2o.engine.v1.DAIEngineService.CreateDAIEngine';
const PROFILE = 'workspaces/team/daiEngineProfiles/p';
const VERSION = 'workspaces/team/daiEngineVersions/1.10.6';

/** The cpu of a create request, if it names one. */
function cpuOf(request: Record<string, unknown>): number {
  const engine: unknown = request['daiEngine'];
  if (typeof engine !== 'object' || engine === null || !('cpu' in engine)) return 1;
  return Number(engine.cpu);
}

/**
 * A create handler as the API's behaves inside a review: it refuses a caller without the right to
 * create and a cpu over the profile's 4, and records the engine it would write (version and
 * default memory filled in, identity labels, recorded fields, the finalizer). Counts its runs.
 */
function creating(): { handlers: Handlers; runs: () => number } {
  let runs = 0;
  const handlers: Handlers = {
    [CREATE]: (request, context) => {
      runs += 1;
      if (context.caller.subject === 'users/mallory')
        return Promise.reject(new ApiError(Code.PERMISSION_DENIED, 'not allowed'));
      const cpu = cpuOf(request);
      if (cpu > 4) return Promise.reject(invalidArgument('dai_engine.cpu', 'must be at most 4'));
      const admission = currentAdmission();
      admission?.write(
        {
          apiVersion: 'engine.h2o.ai/v1',
          kind: 'DAIEngine',
          metadata: {
            name: 'team.e1',
            namespace: NAMESPACE,
            labels: { [WORKSPACE_LABEL]: 'team', [ID_LABEL]: 'e1' },
            annotations: { [RECORDED_ANNOTATION]: '{"creator":"users/alice"}' },
            finalizers: [ENGINE_FINALIZER],
          },
          spec: { profile: PROFILE, daiEngineVersion: VERSION, cpu, memoryBytes: '4096', paused: false },
        },
        {},
      );
      return Promise.resolve({});
    },
  };
  return { handlers, runs: () => runs };
}

/** kubectl's manifest: the version by alias, no memory, none of the API's metadata. */
const submitted = (): CustomResource => ({
  apiVersion: 'engine.h2o.ai/v1',
  kind: 'DAIEngine',
  metadata: { name: 'team.e1', namespace: NAMESPACE, labels: { team: 'data' } },
  spec: { profile: PROFILE, daiEngineVersion: 'workspaces/team/daiEngineVersions/latest', cpu: 2 },
});

let uids = 0;
/**
 * A review as the apiserver sends it, every call with its own uid: a create, or with `old` the
 * update of an object stored without admission (which the API admits as a create).
 */
function reviewOf(object: CustomResource, user = 'alice', old?: CustomResource): AdmissionRequest {
  uids += 1;
  return {
    uid: `uid-${String(uids)}`,
    kind: { group: 'engine.h2o.ai', version: 'v1', kind: 'DAIEngine' },
    name: object.metadata.name,
    namespace: NAMESPACE,
    operation: old === undefined ? 'CREATE' : 'UPDATE',
    userInfo: { username: user, groups: ['system:authenticated'] },
    object,
    oldObject: old ?? null,
  };
}

/** The object as stored without admission, at `resourceVersion`. */
const unadmitted = (resourceVersion: string): CustomResource => ({
  ...submitted(),
  metadata: { ...submitted().metadata, uid: '6f1c', resourceVersion },
});

/** The JSON Patch of a mutating answer. */
function patchOf(answer: { patch?: string | undefined }): PatchOperation[] {
  if (answer.patch === undefined) return [];
  return JSON.parse(Buffer.from(answer.patch, 'base64').toString('utf8')) as PatchOperation[];
}

/**
 * The object the validating review sees: the mutating review's patch applied, then what the
 * apiserver sets on a create (uid, creation time, generation), re-encoded with its own key order.
 */
async function mutated(deps: DecideDeps, old?: CustomResource): Promise<CustomResource> {
  const object = submitted();
  const { response } = await decide('mutate', reviewOf(object, 'alice', old), deps);
  expect(response.allowed).toBe(true);
  const after = structuredClone(object);
  applyPatch(after, patchOf(response));
  const { labels, annotations, finalizers, name, namespace } = after.metadata;
  return {
    spec: Object.fromEntries(Object.entries(after.spec).reverse()),
    metadata: {
      uid: '6f1c',
      creationTimestamp: '2026-11-28T05:00:00Z',
      finalizers,
      annotations,
      labels,
      namespace,
      name,
    },
    kind: after.kind,
    apiVersion: after.apiVersion,
  };
}

describe('the validating review after this gateway’s mutating review of the same write', () => {
  let handler: ReturnType<typeof creating>;
  let deps: DecideDeps;

  beforeEach(() => {
    handler = creating();
    deps = {
      handlers: handler.handlers,
      namespace: NAMESPACE,
      mapping: { usernamePrefix: '', groupsPrefix: '' },
      admitted: new AdmittedWrites(),
    };
  });

  test('admits the object the mutating review produced without running the handler again', async () => {
    const object = await mutated(deps);
    expect(object.metadata.finalizers).toEqual([ENGINE_FINALIZER]);
    expect(object.spec['memoryBytes']).toBe('4096');
    const { response } = await decide('validate', reviewOf(object), deps);
    expect(response.allowed).toBe(true);
    expect(handler.runs()).toBe(1);
  });

  test('checks an object changed after the mutating review in full, and refuses it when invalid', async () => {
    const object = await mutated(deps);
    object.spec['cpu'] = 8;
    const { response } = await decide('validate', reviewOf(object), deps);
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toContain('dai_engine.cpu');
    expect(handler.runs()).toBe(2);
  });

  test('checks in full an object whose finalizer another webhook took off, and refuses it', async () => {
    const object = await mutated(deps);
    object.metadata.finalizers = [];
    const { response } = await decide('validate', reviewOf(object), deps);
    expect(response).toMatchObject({ allowed: false, status: { reason: 'CHANGED_AFTER_ADMISSION' } });
    expect(handler.runs()).toBe(2);
  });

  test('on a replica that did not answer the mutating review, checks in full', async () => {
    const object = await mutated(deps);
    const replica = { ...deps, admitted: new AdmittedWrites() };
    const { response } = await decide('validate', reviewOf(object), replica);
    expect(response.allowed).toBe(true);
    expect(handler.runs()).toBe(2);
  });

  test('does not admit the same object for another caller: the caller is the apiserver’s, not the client’s', async () => {
    const object = await mutated(deps);
    const { response } = await decide('validate', reviewOf(object, 'mallory'), deps);
    expect(response).toMatchObject({ allowed: false, status: { message: 'not allowed' } });
    expect(handler.runs()).toBe(2);
  });

  test('does not admit the same object over another stored version of it', async () => {
    const object = await mutated(deps, unadmitted('9'));
    await decide('validate', reviewOf(object, 'alice', unadmitted('10')), deps);
    expect(handler.runs()).toBe(2);
    // Over the version the mutating review saw, the record stands.
    await decide('validate', reviewOf(object, 'alice', unadmitted('9')), deps);
    expect(handler.runs()).toBe(2);
  });

  test('a record serves one validating review, and only for a short while', async () => {
    let now = 0;
    deps.admitted = new AdmittedWrites(() => now);
    const object = await mutated(deps);
    await decide('validate', reviewOf(object), deps);
    await decide('validate', reviewOf(object), deps);
    expect(handler.runs()).toBe(2);
    await mutated(deps);
    now += 60_000;
    await decide('validate', reviewOf(object), deps);
    expect(handler.runs()).toBe(4);
  });
});
