import { afterAll, describe, expect, test } from '@jest/globals';
import yaml from 'js-yaml';
import { openKubectl } from './_kubectl-patch.ts';
import { loadKubernetesYaml } from './kubernetes-yaml.ts';

const kubectl = await openKubectl();
afterAll(() => kubectl.close());

/** Plain scalars whose meaning differs between YAML 1.1 and 1.2, and some that do not. */
const SCALARS = [
  '0644',
  '0o644',
  '0x1F',
  '+0x1F',
  '0b101',
  '-0b11',
  '1_000',
  '0x_1F',
  '_1',
  '012345678',
  '08',
  '0',
  '-0',
  '1e3',
  '1.5',
  '.5',
  '1.',
  '+12',
  '-7',
  '1e400',
  '99999999999999999999',
  '12:30',
  '1_0.5',
  'yes',
  'Yes',
  'YES',
  'y',
  'Y',
  'n',
  'N',
  'no',
  'NO',
  'on',
  'On',
  'off',
  'OFF',
  'true',
  'True',
  'false',
  'null',
  '~',
  'Null',
  'NULL',
  '2024-01-01',
  '2024-01-01T10:00:00Z',
  'hello',
  '"0644"',
  "'yes'",
  '!!str 0644',
];

describe(`loadKubernetesYaml() reads YAML as kubectl ${kubectl.version} does`, () => {
  test('plain scalars, YAML 1.1 style', async () => {
    // In a list: kubectl would drop the nulls of a mapping, as patches delete with null.
    const text = [
      'metadata:',
      '  annotations:',
      '    scalars:',
      ...SCALARS.map((scalar) => `    - ${scalar}`),
    ].join('\n');
    const answer = await kubectl.patchYaml({ metadata: {} }, text);
    expect(JSON.parse(JSON.stringify(loadKubernetesYaml(text)))).toStrictEqual(
      'error' in answer ? answer : answer.template,
    );
  });

  test('mapping keys, anchors and merge keys', async () => {
    const text = [
      'metadata:',
      '  labels: &labels',
      '    on: a',
      '    3: b',
      '  annotations:',
      '    <<: *labels',
      '    y: d',
    ].join('\n');
    const answer = await kubectl.patchYaml({ metadata: {} }, text);
    expect(loadKubernetesYaml(text)).toStrictEqual('error' in answer ? answer : answer.template);
  });
});

describe('loadKubernetesYaml()', () => {
  test('refuses duplicate keys and several documents', () => {
    expect(() => loadKubernetesYaml('a: 1\na: 2')).toThrow(yaml.YAMLException);
    expect(() => loadKubernetesYaml('a: 1\n---\nb: 2')).toThrow(yaml.YAMLException);
  });
});
