import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { isReclaimable, pendingExpansion, PROVISIONER, volumeFor } from './storage-simulator.ts';

const CLASS = 'standard';

function claim(overrides: {
  className?: string;
  request?: string;
  capacity?: string;
  phase?: string;
  volumeName?: string;
  deleting?: boolean;
}): V1PersistentVolumeClaim {
  return {
    metadata: {
      name: 'data',
      namespace: 'ns',
      uid: '1234',
      ...(overrides.deleting ? { deletionTimestamp: new Date() } : {}),
    },
    spec: {
      storageClassName: overrides.className ?? CLASS,
      accessModes: ['ReadWriteOnce'],
      resources: overrides.request === undefined ? {} : { requests: { storage: overrides.request } },
      ...(overrides.volumeName ? { volumeName: overrides.volumeName } : {}),
    },
    status: {
      phase: overrides.phase ?? 'Pending',
      ...(overrides.capacity ? { capacity: { storage: overrides.capacity } } : {}),
    },
  };
}

describe('volumeFor()', () => {
  test('provisions a volume of the requested size, pre-bound to the claim', () => {
    const volume = volumeFor(claim({ request: '5Gi' }), CLASS);
    expect(volume?.metadata?.name).toBe('pvc-1234');
    expect(volume?.spec?.capacity).toEqual({ storage: '5Gi' });
    expect(volume?.spec?.claimRef).toMatchObject({ namespace: 'ns', name: 'data', uid: '1234' });
    expect(volume?.spec?.storageClassName).toBe(CLASS);
    expect(volume?.spec?.persistentVolumeReclaimPolicy).toBe('Delete');
    expect(volume?.spec?.csi?.driver).toBe(PROVISIONER);
  });

  test.each([
    ['another class', { className: 'other', request: '1Gi' }],
    ['a claim that has a volume', { request: '1Gi', volumeName: 'pv-1' }],
    ['a claim being deleted', { request: '1Gi', deleting: true }],
    ['a claim without a storage request', {}],
  ])('ignores %s', (_what, overrides) => {
    expect(volumeFor(claim(overrides), CLASS)).toBeUndefined();
  });
});

describe('pendingExpansion()', () => {
  test('returns the requested size in bytes when a bound claim asks for more than it has', () => {
    expect(pendingExpansion(claim({ phase: 'Bound', request: '3Gi', capacity: '1Gi' }), CLASS)).toBe(
      3221225472n,
    );
  });

  test.each([
    ['the same size in other units', { phase: 'Bound', request: '1024Mi', capacity: '1Gi' }],
    ['a smaller request', { phase: 'Bound', request: '1Gi', capacity: '2Gi' }],
    ['an unbound claim', { phase: 'Pending', request: '3Gi', capacity: '1Gi' }],
    ['another class', { phase: 'Bound', request: '3Gi', capacity: '1Gi', className: 'other' }],
    ['a claim without capacity yet', { phase: 'Bound', request: '3Gi' }],
  ])('returns nothing for %s', (_what, overrides) => {
    expect(pendingExpansion(claim(overrides), CLASS)).toBeUndefined();
  });
});

describe('isReclaimable()', () => {
  function volume(phase: string, provisioner = PROVISIONER, policy = 'Delete'): V1PersistentVolume {
    return {
      metadata: { name: 'pv', annotations: { 'pv.kubernetes.io/provisioned-by': provisioner } },
      spec: { persistentVolumeReclaimPolicy: policy },
      status: { phase },
    };
  }

  test('a released volume of ours with reclaim policy Delete is deleted', () => {
    expect(isReclaimable(volume('Released'))).toBe(true);
  });

  test.each([
    ['a bound volume', volume('Bound')],
    ['another provisioner', volume('Released', 'example.com/other')],
    ['reclaim policy Retain', volume('Released', PROVISIONER, 'Retain')],
  ])('keeps %s', (_what, pv) => {
    expect(isReclaimable(pv)).toBe(false);
  });
});
