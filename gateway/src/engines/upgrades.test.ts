import { upgradeAvailable } from './upgrades.ts';

const engine = 'workspaces/team/daiEngines/e1';
const current = 'workspaces/global/daiEngineVersions/1.10.6';
const v = (workspace: string, id: string, deprecated = false) => ({
  name: `workspaces/${workspace}/daiEngineVersions/${id}`,
  deprecated,
});

describe('upgradeAvailable()', () => {
  test('a newer version in global or the engine’s workspace is an upgrade', () => {
    expect(upgradeAvailable(engine, current, [v('global', '1.10.6'), v('global', '1.11.0')])).toBe(true);
    expect(upgradeAvailable(engine, current, [v('team', '1.10.6.1')])).toBe(true);
  });

  test('an engine naming its version by an alias has no known upgrade', () => {
    expect(
      upgradeAvailable(engine, 'workspaces/global/daiEngineVersions/latest', [v('global', '9.0.0')]),
    ).toBe(false);
  });

  test('the same, older, deprecated or foreign versions are not', () => {
    expect(
      upgradeAvailable(engine, current, [
        v('global', '1.10.6'),
        v('global', '1.10.5'),
        v('global', '1.10.7', true),
        v('other', '2.0.0'),
        v('global', '1.10.6-rc1'),
      ]),
    ).toBe(false);
  });
});
