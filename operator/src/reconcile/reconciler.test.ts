import { daiEngineKind } from '../kinds/dai-engine.ts';
import type { EngineResource, EngineStatus } from '../kinds/kind.ts';
import { hasSnapshots } from './reconciler.ts';

const engine = (status: EngineStatus<'DAIEngine'>): EngineResource<'DAIEngine'> => ({
  metadata: { name: 'w.e1' },
  spec: {},
  status,
});

describe('hasSnapshots()', () => {
  test('an engine whose status the API has not written yet is not ready to run', () => {
    expect(hasSnapshots(daiEngineKind, engine({}))).toBe(false);
    expect(hasSnapshots(daiEngineKind, engine({ profileInfo: { name: 'p' } }))).toBe(false);
  });

  test('an engine with its profile and version snapshots is', () => {
    const ready = engine({ profileInfo: { name: 'p' }, daiEngineVersionInfo: { image: 'dai:1' } });
    expect(hasSnapshots(daiEngineKind, ready)).toBe(true);
  });
});
