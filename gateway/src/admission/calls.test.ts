import { ENGINE_FINALIZER, ID_LABEL, RESOURCE_KINDS, WORKSPACE_LABEL } from '../../../shared/resources.ts';
import { RECORDED_ANNOTATION } from '../../../shared/recorded.ts';
import { ApiError } from '../errors/api-error.ts';
import type { CustomResource } from '../store/objects.ts';
import { callOf } from './calls.ts';
import { callerOf, patchTo } from './review.ts';

const DAI = RESOURCE_KINDS.DAIEngine;
const H2O = RESOURCE_KINDS.H2OEngine;
const VERSION = RESOURCE_KINDS.DAIEngineVersion;
const SERVICE = 'ai.h2o.engine.v1.DAIEngineService';
const WS = 'workspaces/team';

/** An object as the apiserver sends it; `admitted` adds what the API writes (labels, snapshot). */
function object(kind: string, name: string, spec: Record<string, unknown>, admitted = true): CustomResource {
  const [workspace = '', id = ''] = name.split(/\.(.*)/);
  return {
    apiVersion: 'engine.h2o.ai/v1',
    kind,
    metadata: {
      name,
      resourceVersion: '7',
      ...(admitted
        ? {
            labels: { [WORKSPACE_LABEL]: workspace, [ID_LABEL]: id },
            annotations: {
              [RECORDED_ANNOTATION]: JSON.stringify({ daiEngineVersionInfo: { aliases: ['latest'] } }),
            },
          }
        : {}),
    },
    spec: spec as CustomResource['spec'],
  };
}

const engine = (spec: Record<string, unknown> = {}, admitted = true): CustomResource =>
  object(
    'DAIEngine',
    'team.e1',
    {
      profile: `${WS}/daiEngineProfiles/p`,
      daiEngineVersion: `${WS}/daiEngineVersions/1.10.6`,
      cpu: 1,
      paused: false,
      ...spec,
    },
    admitted,
  );

const update = (before: CustomResource, after: CustomResource): ReturnType<typeof callOf> =>
  callOf({ operation: 'UPDATE', kind: DAI, object: after, oldObject: before });

/** The API's error of a write, or a failure when the write maps to a call. */
function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error: unknown) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('no refusal');
}

describe('callOf()', () => {
  test('a create is the kind’s Create, in the workspace and with the id that metadata.name names', () => {
    const call = callOf({ operation: 'CREATE', kind: DAI, object: engine({}, false) });
    expect(call?.rpc).toBe(`${SERVICE}.CreateDAIEngine`);
    expect(call?.request).toMatchObject({ parent: WS, daiEngineId: 'e1', daiEngine: { cpu: 1 } });
  });

  test('a name that is not <workspace>.<id>, or labels that disagree with it, are refused by field', () => {
    const bare = object('DAIEngine', 'e1', {}, false);
    expect(refusal(() => callOf({ operation: 'CREATE', kind: DAI, object: bare })).message).toMatch(
      /^Invalid metadata\.name: "e1" is not <workspace>\.<id>/,
    );
    const lying = engine({}, false);
    lying.metadata.labels = { [WORKSPACE_LABEL]: 'other' };
    expect(refusal(() => callOf({ operation: 'CREATE', kind: DAI, object: lying })).message).toContain(
      `Invalid metadata.labels["${WORKSPACE_LABEL}"]: must be "team"`,
    );
  });

  test('an engine is created running: a create asking for it paused is refused', () => {
    const paused = engine({ paused: true }, false);
    expect(refusal(() => callOf({ operation: 'CREATE', kind: DAI, object: paused })).message).toContain(
      'Invalid spec.paused',
    );
  });

  test('the first change of an object stored without admission admits it whole, as a create', () => {
    expect(update(engine({}, false), engine({}, false))?.rpc).toBe(`${SERVICE}.CreateDAIEngine`);
  });

  test('the intent alone is the lifecycle call; with other fields it is refused', () => {
    expect(update(engine(), engine({ paused: true }))?.rpc).toBe(`${SERVICE}.PauseDAIEngine`);
    expect(update(engine({ paused: true }), engine({ paused: false }))?.rpc).toBe(
      `${SERVICE}.ResumeDAIEngine`,
    );
    expect(refusal(() => update(engine(), engine({ paused: true, cpu: 2 }))).message).toContain(
      'Invalid spec.paused: change it alone',
    );
  });

  test('a terminated H2O engine stays terminated', () => {
    const h2o = (terminated: boolean): CustomResource => object('H2OEngine', 'team.h1', { terminated });
    expect(callOf({ operation: 'UPDATE', kind: H2O, oldObject: h2o(false), object: h2o(true) })?.rpc).toBe(
      'ai.h2o.engine.v1.H2OEngineService.TerminateH2OEngine',
    );
    const undo = refusal(() =>
      callOf({ operation: 'UPDATE', kind: H2O, oldObject: h2o(true), object: h2o(false) }),
    );
    expect(undo.reason).toBe('INVALID_STATE');
  });

  test('one field with a call of its own is that call: resize, upgrade', () => {
    const resize = update(engine(), engine({ storageBytes: '2000' }));
    expect(resize).toMatchObject({
      rpc: `${SERVICE}.ResizeStorage`,
      request: { daiEngine: `${WS}/daiEngines/e1`, newStorageBytes: '2000' },
    });
    const upgrade = update(engine(), engine({ daiEngineVersion: `${WS}/daiEngineVersions/1.11.0` }));
    expect(upgrade?.rpc).toBe(`${SERVICE}.UpgradeDAIEngineVersion`);
  });

  test('other changes are an Update masked to the changed fields; fixed fields are refused by name', () => {
    const changed = update(engine(), engine({ cpu: 2, displayName: 'Mine' }));
    expect(changed?.rpc).toBe(`${SERVICE}.UpdateDAIEngine`);
    expect(changed?.request['updateMask']).toEqual(['cpu', 'display_name']);
    const h2o = (version: string): CustomResource =>
      object('H2OEngine', 'team.h1', { h2oEngineVersion: `${WS}/h2oEngineVersions/${version}` });
    const fixed = refusal(() =>
      callOf({ operation: 'UPDATE', kind: H2O, oldObject: h2o('3.46.0.1'), object: h2o('3.46.0.2') }),
    );
    expect(fixed.message).toBe('Invalid spec.h2oEngineVersion: cannot be changed after creation');
  });

  test('the alias the engine’s version held is no change; another alias is an upgrade', () => {
    expect(update(engine(), engine({ daiEngineVersion: `${WS}/daiEngineVersions/latest` }))).toBeUndefined();
    expect(update(engine(), engine({ daiEngineVersion: `${WS}/daiEngineVersions/next` }))?.rpc).toBe(
      `${SERVICE}.UpgradeDAIEngineVersion`,
    );
  });

  test('metadata only AI Engine Manager sets cannot change; other metadata is no API call', () => {
    const relabelled = engine();
    relabelled.metadata.labels = { ...relabelled.metadata.labels, [ID_LABEL]: 'e2' };
    expect(refusal(() => update(engine(), relabelled)).message).toContain(
      `Invalid metadata.labels["${ID_LABEL}"]`,
    );
    const annotated = engine();
    annotated.metadata.annotations = { ...annotated.metadata.annotations, 'team/owner': 'data' };
    expect(update(engine(), annotated)).toBeUndefined();
  });

  test('a version’s aliases are the assignment call; a delete is Delete, unless never admitted', () => {
    const version = (aliases: string[]): CustomResource =>
      object('DAIEngineVersion', 'team.1.10.6', { aliases });
    expect(
      callOf({ operation: 'UPDATE', kind: VERSION, oldObject: version([]), object: version(['latest']) })
        ?.rpc,
    ).toBe('ai.h2o.engine.v1.DAIEngineVersionService.AssignDAIEngineVersionAliases');
    expect(callOf({ operation: 'DELETE', kind: DAI, oldObject: engine() })).toMatchObject({
      rpc: `${SERVICE}.DeleteDAIEngine`,
      request: { name: `${WS}/daiEngines/e1` },
    });
    expect(callOf({ operation: 'DELETE', kind: DAI, oldObject: engine({}, false) })).toBeUndefined();
  });
});

describe('callerOf()', () => {
  test('the user name without the prefix is the API user; prefixed groups are roles, system groups never', () => {
    const mapping = { usernamePrefix: 'oidc:', groupsPrefix: 'oidc:' };
    expect(
      callerOf({ username: 'oidc:alice', groups: ['oidc:admin', 'team', 'system:authenticated'] }, mapping),
    ).toEqual({
      subject: 'users/alice',
      displayName: 'alice',
      roles: ['admin'],
    });
    const open = { usernamePrefix: '', groupsPrefix: '' };
    expect(callerOf({ username: 'bob', groups: ['analyst', 'system:masters'] }, open).roles).toEqual([
      'analyst',
    ]);
  });
});

describe('patchTo()', () => {
  test('replaces the spec and sets the identity labels and the recorded annotation, leaving the rest', () => {
    const submitted = engine({}, false);
    submitted.metadata.labels = { team: 'data' };
    const wanted = engine({ memoryBytes: '4096' });
    const patch = patchTo(submitted, wanted);
    expect(patch).toEqual([
      { op: 'replace', path: '/spec', value: wanted.spec },
      { op: 'add', path: '/metadata/labels/engine.h2o.ai~1workspace', value: 'team' },
      { op: 'add', path: '/metadata/labels/engine.h2o.ai~1id', value: 'e1' },
      {
        op: 'add',
        path: '/metadata/annotations',
        value: { [RECORDED_ANNOTATION]: wanted.metadata.annotations?.[RECORDED_ANNOTATION] },
      },
    ]);
    expect(patchTo(wanted, wanted)).toEqual([]);
  });

  test('adds the engine finalizer the API writes, after the submitter’s finalizers', () => {
    const wanted = engine();
    wanted.metadata.finalizers = [ENGINE_FINALIZER];
    expect(patchTo(engine(), wanted)).toEqual([
      { op: 'add', path: '/metadata/finalizers', value: [ENGINE_FINALIZER] },
    ]);
    const backedUp = engine();
    backedUp.metadata.finalizers = ['example.com/backup'];
    expect(patchTo(backedUp, wanted)).toEqual([
      { op: 'add', path: '/metadata/finalizers/-', value: ENGINE_FINALIZER },
    ]);
    expect(patchTo(wanted, wanted)).toEqual([]);
  });
});
