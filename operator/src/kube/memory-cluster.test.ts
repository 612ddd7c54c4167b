import { daiEngineKind } from '../kinds/dai-engine.ts';
import { MemoryCluster, mergePatch } from './memory-cluster.ts';

describe('mergePatch()', () => {
  test('merges objects key by key, replaces arrays and scalars, and removes what is null (RFC 7386)', () => {
    const target = { a: 'b', c: { d: 'e', f: 'g' }, list: [1, 2], keep: true };
    expect(mergePatch(target, { a: 'z', c: { f: null, h: 1 }, list: [3], added: { x: 1 } })).toEqual({
      a: 'z',
      c: { d: 'e', h: 1 },
      list: [3],
      keep: true,
      added: { x: 1 },
    });
    // The target is left as it was.
    expect(target).toEqual({ a: 'b', c: { d: 'e', f: 'g' }, list: [1, 2], keep: true });
    expect(mergePatch({ a: 1 }, 'text')).toBe('text');
  });
});

describe('MemoryCluster', () => {
  const cluster = (): MemoryCluster => new MemoryCluster(() => new Date('2026-03-02T09:00:00Z'));

  test('refuses a write on a version other than the stored one with 409, and one of what is absent with 404', async () => {
    const memory = cluster();
    const engine = memory.createEngine(daiEngineKind, { metadata: { name: 'w.e' }, spec: {} });
    await memory.kube.patchEngine(daiEngineKind, 'w.e', { metadata: { labels: { a: 'b' } } });
    const stale = { metadata: { resourceVersion: engine.metadata.resourceVersion } };
    await expect(memory.kube.patchEngine(daiEngineKind, 'w.e', stale)).rejects.toMatchObject({ code: 409 });
    await expect(memory.kube.patchEngine(daiEngineKind, 'other', {})).rejects.toMatchObject({ code: 404 });
  });

  test('keeps a deleted engine with finalizers until the last one is removed', async () => {
    const memory = cluster();
    memory.createEngine(daiEngineKind, { metadata: { name: 'w.e', finalizers: ['x'] }, spec: {} });
    memory.deleteEngine(daiEngineKind, 'w.e');
    expect(memory.view.engine(daiEngineKind, 'w.e')?.metadata.deletionTimestamp).toBeDefined();
    await memory.kube.patchEngine(daiEngineKind, 'w.e', { metadata: { finalizers: null } });
    expect(memory.view.engine(daiEngineKind, 'w.e')).toBeUndefined();
  });
});
