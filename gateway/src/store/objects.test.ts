import { ID_LABEL, RESOURCE_KINDS, WORKSPACE_LABEL } from '../../../shared/resources.ts';
import { fromJson, toJson } from '../json/canonical.ts';
import { fromCustomResource, splitName, toCustomResource } from './objects.ts';

const VERSION = RESOURCE_KINDS.DAIEngineVersion;
const ENGINE = RESOURCE_KINDS.DAIEngine;

describe('splitName()', () => {
  test('splits names of the kind and rejects others', () => {
    expect(splitName(ENGINE, 'workspaces/w/daiEngines/e1')).toEqual({ workspace: 'w', id: 'e1' });
    expect(() => splitName(ENGINE, 'workspaces/w/h2oEngines/e1')).toThrow(TypeError);
    expect(() => splitName(ENGINE, 'workspaces/w/daiEngines')).toThrow(TypeError);
  });
});

describe('toCustomResource() and fromCustomResource()', () => {
  const engineJson = {
    name: 'workspaces/w/daiEngines/e1',
    uid: 'ignored-uid',
    profile: 'workspaces/global/daiEngineProfiles/p1',
    daiEngineVersion: 'workspaces/global/daiEngineVersions/1.10.6',
    cpu: 4,
    memoryBytes: '8589934592',
    maxIdleDuration: '3600s',
    state: 'STATE_RUNNING',
    reconciling: true,
    createTime: '2026-01-02T03:04:05Z',
    annotations: { team: 'a' },
  };

  test('puts settable fields in spec, output-only ones in status, and names in labels', () => {
    const resource = toCustomResource(ENGINE, fromJson(ENGINE.message, engineJson) as { name: string }, 'ns');
    expect(resource.metadata).toEqual({
      name: 'w.e1',
      namespace: 'ns',
      labels: { [WORKSPACE_LABEL]: 'w', [ID_LABEL]: 'e1' },
    });
    expect(resource.spec).toMatchObject({
      profile: engineJson.profile,
      cpu: 4,
      memoryBytes: '8589934592',
      maxIdleDuration: '3600s',
      annotations: { team: 'a' },
    });
    expect(resource.status).toMatchObject({ state: 'STATE_RUNNING', reconciling: true });
    for (const key of ['name', 'uid', 'createTime', 'state']) expect(resource.spec).not.toHaveProperty(key);
    for (const key of ['name', 'uid', 'createTime', 'profile'])
      expect(resource.status).not.toHaveProperty(key);
  });

  test('reads the message back, with name, uid and create time from the metadata', () => {
    const resource = toCustomResource(ENGINE, fromJson(ENGINE.message, engineJson) as { name: string }, 'ns');
    resource.metadata.uid = 'uid-1';
    resource.metadata.creationTimestamp = new Date('2026-01-02T03:04:05Z');
    const { currentRunningDuration, currentIdleDuration, ...read } = toJson(
      ENGINE.message,
      fromCustomResource(ENGINE, resource),
    );
    expect(read).toEqual(toJson(ENGINE.message, fromJson(ENGINE.message, { ...engineJson, uid: 'uid-1' })));
    // Computed when read, from when the run became RUNNING (checked below).
    expect(currentRunningDuration).toMatch(/^\d+s$/);
    expect(currentIdleDuration).toMatch(/^\d+s$/);
  });

  test('computes an engine’s durations whenever they are read, from when its run became RUNNING and its activity', () => {
    const resource = toCustomResource(ENGINE, fromJson(ENGINE.message, engineJson) as { name: string }, 'ns');
    const hourAgo = Date.now() - 3_600_000;
    resource.metadata.creationTimestamp = new Date(hourAgo - 900_000);
    // Resumed 61 minutes ago, RUNNING a minute later: the minute spent starting does not count.
    resource.status = {
      ...resource.status,
      resumeTime: new Date(hourAgo - 60_000).toISOString(),
      runningSince: new Date(hourAgo).toISOString(),
    };
    resource.metadata.annotations = {
      'engine.h2o.ai/last-activity-time': new Date(hourAgo + 3_000_000).toISOString(),
    };
    const message = fromCustomResource(ENGINE, resource);
    const seconds = (field: string): number =>
      Number((toJson(ENGINE.message, message)[field] as string).replace(/s$/, ''));
    // From running-since, not the creation or the resume; idle from the latest activity, 600 s ago.
    expect(seconds('currentRunningDuration')).toBeGreaterThanOrEqual(3600);
    expect(seconds('currentRunningDuration')).toBeLessThan(3660);
    expect(seconds('currentIdleDuration')).toBeGreaterThanOrEqual(600);
    expect(seconds('currentIdleDuration')).toBeLessThan(660);
    // Stored durations (an earlier release wrote them) are not what is read.
    resource.status = { ...resource.status, currentRunningDuration: '5s' };
    expect(seconds('currentRunningDuration')).toBeGreaterThanOrEqual(3600);
    // Resumed again and starting: the earlier run's running-since is not this run's.
    resource.status = { ...resource.status, resumeTime: new Date().toISOString(), state: 'STATE_STARTING' };
    expect(toJson(ENGINE.message, fromCustomResource(ENGINE, resource))).toMatchObject({
      currentRunningDuration: '0s',
      currentIdleDuration: '0s',
    });
  });

  test('a stopped engine’s durations read 0s', () => {
    const paused = { ...engineJson, state: 'STATE_PAUSED', currentRunningDuration: '300s' };
    const resource = toCustomResource(ENGINE, fromJson(ENGINE.message, paused) as { name: string }, 'ns');
    resource.metadata.creationTimestamp = new Date('2026-01-02T03:04:05Z');
    expect(toJson(ENGINE.message, fromCustomResource(ENGINE, resource))).toMatchObject({
      currentRunningDuration: '0s',
      currentIdleDuration: '0s',
    });
  });

  test('reads an engine being deleted as DELETING, with its delete time, whatever was last reported', () => {
    const resource = toCustomResource(ENGINE, fromJson(ENGINE.message, engineJson) as { name: string }, 'ns');
    resource.metadata.deletionTimestamp = '2026-01-02T03:04:05Z';
    const json = toJson(ENGINE.message, fromCustomResource(ENGINE, resource));
    expect(json).toMatchObject({
      state: 'STATE_DELETING',
      reconciling: true,
      deleteTime: '2026-01-02T03:04:05Z',
    });
  });

  test('refuses a custom resource without its labels', () => {
    const resource = toCustomResource(VERSION, { name: 'workspaces/w/daiEngineVersions/1.10.6' }, 'ns');
    resource.metadata.labels = {};
    expect(() => fromCustomResource(VERSION, resource)).toThrow(TypeError);
  });
});
