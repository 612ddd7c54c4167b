import type { V1ConfigMap, V1ObjectMeta, V1StatefulSet, V1StatefulSetSpec } from '@kubernetes/client-node';
import { APPLIED_DIGEST_ANNOTATION, digestsText, ownedWrite, withDigests } from './digest.ts';

const META: V1ObjectMeta = { name: 'dai-1', labels: { a: '1' }, ownerReferences: [] };
const spec = (replicas: number, image = 'dai:1'): V1StatefulSetSpec => ({
  replicas,
  serviceName: 'dai-1',
  selector: {},
  template: { spec: { containers: [{ name: 'engine', image }] } },
});
const set = (replicas: number, image = 'dai:1', metadata: V1ObjectMeta = META): V1StatefulSet => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata,
  spec: spec(replicas, image),
});
/** The object as the apiserver holds it after the operator wrote `wanted`. */
const written = (wanted: V1StatefulSet, observed = wanted): V1StatefulSet => withDigests(observed, wanted);

describe('ownedWrite()', () => {
  test('creates what is missing, carrying the digests of each part', () => {
    const wanted = set(1);
    const write = ownedWrite(wanted, undefined);
    expect(write).toEqual({ create: withDigests(wanted, wanted) });
    expect(digestsText(wanted)).toMatch(/^metadata=[0-9a-f]{16},spec=[0-9a-f]{16}$/);
  });

  test('writes nothing when every part is as last written and the replicas are those wanted', () => {
    expect(ownedWrite(set(1), written(set(1)))).toBeUndefined();
  });

  test('patches the replicas alone when only they differ (a pause, or a scale by hand)', () => {
    expect(ownedWrite(set(0), written(set(1)))).toEqual({
      patch: {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'dai-1' },
        spec: { replicas: 0 },
      },
      replace: [],
    });
    expect(ownedWrite(set(1), written(set(1), set(3)))).toMatchObject({ patch: { spec: { replicas: 1 } } });
  });

  test('replaces a changed part whole and records the new digests; the metadata only when it changed', () => {
    const wanted = set(1, 'dai:2');
    expect(ownedWrite(wanted, written(set(1)))).toEqual({
      patch: {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'dai-1', annotations: { [APPLIED_DIGEST_ANNOTATION]: digestsText(wanted) } },
        spec: wanted.spec,
      },
      replace: ['spec'],
    });
    const relabelled = set(1, 'dai:1', { name: 'dai-1', labels: { a: '2' }, ownerReferences: [] });
    expect(ownedWrite(relabelled, written(set(1)))).toMatchObject({
      patch: { metadata: { labels: { a: '2' } } },
      replace: [],
    });
  });

  test('sends what `sent` makes of the object, with the digests of what is wanted', () => {
    const wanted = set(1, 'dai:2');
    const sent: V1StatefulSet = Object.assign(set(1, 'dai:2'), {
      spec: Object.assign(spec(1, 'dai:2'), { serviceName: 'kept' }),
    });
    expect(ownedWrite(wanted, written(set(1)), sent)).toMatchObject({
      patch: { spec: { serviceName: 'kept' } },
    });
  });

  test('rewrites every part of an object written without part digests (an earlier release)', () => {
    const old = set(
      1,
      'dai:1',
      Object.assign({}, META, { annotations: { [APPLIED_DIGEST_ANNOTATION]: 'abc' } }),
    );
    expect(ownedWrite(set(1), old)).toMatchObject({ replace: ['spec'] });
    const map: V1ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: META, data: { f: '1' } };
    expect(ownedWrite(map, map)).toMatchObject({ replace: ['data'] });
  });

  test('leaves an object being deleted alone', () => {
    const deleting = set(1, 'dai:1', Object.assign({}, META, { deletionTimestamp: new Date() }));
    expect(ownedWrite(set(1), deleting)).toBeUndefined();
  });
});
