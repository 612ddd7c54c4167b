import { ENGINE_FINALIZER, RESOURCE_KINDS } from '../../../shared/resources.ts';
import type { CustomResource } from './objects.ts';
import { creation } from './object-writes.ts';

const object = (kind: string, finalizers?: string[]): CustomResource => ({
  apiVersion: 'engine.h2o.ai/v1',
  kind,
  metadata: { name: 'w.x', ...(finalizers === undefined ? {} : { finalizers }) },
  spec: {},
});

describe('creation()', () => {
  test('writes an engine with the operator’s finalizer, after any it has', () => {
    expect(creation(object(RESOURCE_KINDS.DAIEngine.kind)).body.metadata.finalizers).toEqual([
      ENGINE_FINALIZER,
    ]);
    expect(
      creation(object(RESOURCE_KINDS.SandboxEngine.kind, ['example.com/backup'])).body.metadata.finalizers,
    ).toEqual(['example.com/backup', ENGINE_FINALIZER]);
    expect(
      creation(object(RESOURCE_KINDS.H2OEngine.kind, [ENGINE_FINALIZER])).body.metadata.finalizers,
    ).toEqual([ENGINE_FINALIZER]);
  });

  test('writes other kinds without it: nothing cleans up after a profile or a version', () => {
    expect(creation(object(RESOURCE_KINDS.DAIEngineProfile.kind)).body.metadata.finalizers).toBeUndefined();
  });
});
