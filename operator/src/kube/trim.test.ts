import type {
  V1ObjectMeta,
  V1PersistentVolumeClaim,
  V1Pod,
  V1Service,
  V1StatefulSet,
} from '@kubernetes/client-node';
import { APPLIED_DIGEST_ANNOTATION, ownedWrite, withDigests } from '../desired/digest.ts';
import { ENGINE_ANNOTATION } from '../desired/workload.ts';
import { ENGINE_KIND_LABEL, ENGINE_UID_LABEL } from '../../../shared/resources.ts';
import { ownedMetadata, trimClaim, trimPod, trimStatefulSet, trimToMetadata } from './trim.ts';

const UID = '5f0c3a8e-2b1d-4c6e-9a7f-0e1d2c3b4a59';

/** Metadata of an owned object as the apiserver sends it. */
function served(name: string, extra: Partial<V1ObjectMeta> = {}): V1ObjectMeta {
  return {
    name,
    namespace: 'engines',
    uid: '0a1b2c3d-0000-4000-8000-000000000001',
    resourceVersion: '4711',
    generation: 2,
    creationTimestamp: new Date('2026-03-02T09:00:00Z'),
    labels: {
      [ENGINE_KIND_LABEL]: 'DAIEngine',
      [ENGINE_UID_LABEL]: UID,
      'engine.h2o.ai/workspace': 'w',
      'app.kubernetes.io/managed-by': 'ai-engine-manager',
    },
    annotations: {
      [ENGINE_ANNOTATION]: 'w.e1',
      [APPLIED_DIGEST_ANNOTATION]: 'd1g3st',
      'kubectl.kubernetes.io/last-applied-configuration': '{"a":"long text"}',
    },
    ownerReferences: [
      { apiVersion: 'engine.h2o.ai/v1', kind: 'DAIEngine', name: 'w.e1', uid: UID, controller: true },
    ],
    managedFields: [
      { manager: 'ai-engine-manager-operator', operation: 'Apply', fieldsV1: { 'f:spec': {} } },
    ],
    ...extra,
  };
}

/** What every owned object keeps of that metadata. */
const KEPT = {
  name: 'dai-e1',
  resourceVersion: '4711',
  labels: { [ENGINE_KIND_LABEL]: 'DAIEngine', [ENGINE_UID_LABEL]: UID },
  annotations: { [ENGINE_ANNOTATION]: 'w.e1', [APPLIED_DIGEST_ANNOTATION]: 'd1g3st' },
};

describe('ownedMetadata()', () => {
  test('keeps the name, version, engine labels and annotations the reconciler reads; not managedFields, owners or other labels', () => {
    expect(ownedMetadata(served('dai-e1'))).toEqual(KEPT);
  });

  test('keeps the start of a deletion, and the creation time only when asked', () => {
    const deleting = new Date('2026-03-02T10:00:00Z');
    expect(ownedMetadata(served('dai-e1', { deletionTimestamp: deleting }))).toEqual({
      ...KEPT,
      deletionTimestamp: deleting,
    });
    expect(ownedMetadata(served('dai-e1'), true).creationTimestamp).toEqual(new Date('2026-03-02T09:00:00Z'));
  });

  test('leaves out labels and annotations when none of the read ones is there', () => {
    expect(ownedMetadata({ name: 'x', labels: { a: 'b' }, annotations: { c: 'd' } })).toEqual({ name: 'x' });
    expect(ownedMetadata(undefined)).toEqual({});
  });
});

describe('trimStatefulSet()', () => {
  const template: V1PersistentVolumeClaim = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: 'data',
      labels: { [ENGINE_UID_LABEL]: UID },
      annotations: { [ENGINE_ANNOTATION]: 'w.e1' },
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1073741824' } },
      volumeMode: 'Filesystem',
    },
    status: { phase: 'Pending' },
  };
  const set: V1StatefulSet = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: served('dai-e1'),
    spec: {
      replicas: 0,
      serviceName: 'dai-e1',
      selector: { matchLabels: { [ENGINE_UID_LABEL]: UID } },
      template: {
        metadata: { labels: { [ENGINE_UID_LABEL]: UID } },
        spec: { containers: [{ name: 'dai', image: 'dai' }] },
      },
      volumeClaimTemplates: [template],
    },
    status: { replicas: 0, availableReplicas: 0, currentRevision: 'dai-e1-7d9f', observedGeneration: 2 },
  };

  test('keeps the wanted replicas and the claim templates as an apply sends them back, and its uid (its queue Workload names it); not the pod template or status', () => {
    const trimmed = trimStatefulSet(set);
    expect(trimmed).toEqual({
      metadata: { ...KEPT, uid: '0a1b2c3d-0000-4000-8000-000000000001' },
      spec: {
        replicas: 0,
        selector: {},
        template: {},
        volumeClaimTemplates: [{ metadata: template.metadata, spec: template.spec }],
      },
    });
  });

  test('keeps what the operator compares: nothing to write for a set as wanted, only replicas when they differ', () => {
    const wanted: V1StatefulSet = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'dai-e1' },
      spec: set.spec,
    };
    const kept = trimStatefulSet(withDigests(set, wanted));
    expect(ownedWrite(wanted, kept)).toBeUndefined();
    // Resumed: the same set, one replica; the copy carries the digests of its other parts.
    const resumed: V1StatefulSet = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'dai-e1' },
      spec: Object.assign({}, set.spec, { replicas: 1 }),
    };
    expect(ownedWrite(resumed, trimStatefulSet(withDigests(set, resumed)))).toEqual({
      patch: {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'dai-e1' },
        spec: { replicas: 1 },
      },
      replace: [],
    });
  });

  test('reads an unset replica count as the default, one', () => {
    expect(trimStatefulSet({ metadata: { name: 'x' } }).spec?.replicas).toBe(1);
  });
});

describe('trimPod()', () => {
  test('keeps the status and the creation time', () => {
    const status: V1Pod['status'] = {
      phase: 'Running',
      podIP: '10.0.0.7',
      conditions: [{ type: 'Ready', status: 'True' }],
    };
    const pod: V1Pod = {
      metadata: served('dai-e1-0'),
      spec: { containers: [{ name: 'dai', image: 'dai', env: [{ name: 'A', value: 'b' }] }] },
      status,
    };
    expect(trimPod(pod)).toEqual({
      metadata: { ...KEPT, name: 'dai-e1-0', creationTimestamp: new Date('2026-03-02T09:00:00Z') },
      status,
    });
  });
});

describe('trimClaim()', () => {
  test('keeps the requested storage, the phase and the capacity', () => {
    const claim: V1PersistentVolumeClaim = {
      metadata: served('data-dai-e1-0'),
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
        volumeName: 'pv-1',
        storageClassName: 'standard',
      },
      status: { phase: 'Bound', capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] },
    };
    expect(trimClaim(claim)).toEqual({
      metadata: { ...KEPT, name: 'data-dai-e1-0' },
      spec: { resources: { requests: { storage: '1Gi' } } },
      status: { phase: 'Bound', capacity: { storage: '1Gi' } },
    });
  });
});

describe('trimToMetadata()', () => {
  test('keeps a Service, ConfigMap or NetworkPolicy as its metadata alone', () => {
    const service: V1Service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: served('dai-e1'),
      spec: { clusterIP: 'None', ports: [{ port: 12345 }] },
    };
    expect(trimToMetadata(service)).toEqual({ metadata: KEPT });
  });
});
