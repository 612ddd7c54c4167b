import { daiConfiguration, toToml } from './dai-config.ts';

const core = { port: '12345', base_url: '/w/e1/' };
const reservedKeys = ['port', 'base_url'];

describe('daiConfiguration()', () => {
  test('gives the profile override the highest priority, then core, engine config, base configuration', () => {
    const config = daiConfiguration({
      profile: {
        baseConfiguration: { a: 'base', b: 'base', c: 'base', port: '1' },
        configurationOverride: { d: 'override', port: '2' },
      },
      engineConfig: { b: 'engine', c: 'engine', d: 'engine' },
      core,
      reservedKeys,
    });
    expect(config).toEqual({
      a: 'base',
      b: 'engine',
      c: 'engine',
      d: 'override',
      port: '2',
      base_url: '/w/e1/',
    });
  });

  test('drops reserved keys from the engine config silently, so the core value stands', () => {
    const config = daiConfiguration({
      profile: {},
      engineConfig: { port: '80', x: '1' },
      core,
      reservedKeys,
    });
    expect(config).toEqual({ port: '12345', base_url: '/w/e1/', x: '1' });
  });

  test('works with a profile that has no maps', () => {
    expect(daiConfiguration({ profile: {}, engineConfig: {}, core, reservedKeys })).toEqual(core);
  });
});

describe('toToml()', () => {
  test('writes sorted keys, keeps TOML literals and quotes other text', () => {
    expect(
      toToml({
        max_runtime_minutes: '60',
        enable_gpus: 'true',
        base_url: '/a b/"x"',
        ratio: '0.5',
        list: '["a", "b"]',
        quoted: '"already"',
        'odd key': 'v',
      }),
    ).toBe(
      [
        'base_url = "/a b/\\"x\\""',
        'enable_gpus = true',
        'list = ["a", "b"]',
        'max_runtime_minutes = 60',
        '"odd key" = "v"',
        'quoted = "already"',
        'ratio = 0.5',
        '',
      ].join('\n'),
    );
  });
});
