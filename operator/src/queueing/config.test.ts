import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseQueueingConfig, quotaOf, readQueueingConfig } from './config.ts';

const EXAMPLE = `
engines: gpu
gpuClasses:
  - name: simulated-gpu
    nodeLabels: { nvidia.com/gpu.product: Simulated-GPU }
    tolerations: [{ key: nvidia.com/gpu, operator: Exists, effect: NoSchedule }]
  - name: a100
    nodeLabels: { nvidia.com/gpu.product: A100 }
workspaceQuota: { simulated-gpu: 4 }
workspaces:
  team-a: { simulated-gpu: 8, a100: 2 }
cohort: engines
`;

describe('parseQueueingConfig()', () => {
  test('reads the documented example', () => {
    const config = parseQueueingConfig(EXAMPLE);
    expect(config).toEqual({
      engines: 'gpu',
      gpuClasses: [
        {
          name: 'simulated-gpu',
          nodeLabels: { 'nvidia.com/gpu.product': 'Simulated-GPU' },
          tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
        },
        { name: 'a100', nodeLabels: { 'nvidia.com/gpu.product': 'A100' }, tolerations: [] },
      ],
      workspaceQuota: { 'simulated-gpu': 4 },
      workspaces: { 'team-a': { 'simulated-gpu': 8, a100: 2 } },
      cohort: 'engines',
    });
    expect(quotaOf(config, 'team-a')).toEqual({ 'simulated-gpu': 8, a100: 2 });
    expect(quotaOf(config, 'team-b')).toEqual({ 'simulated-gpu': 4 });
  });

  test('defaults: GPU engines queue, no classes, no cohort', () => {
    expect(parseQueueingConfig('{}')).toEqual({
      engines: 'gpu',
      gpuClasses: [],
      workspaceQuota: {},
      workspaces: {},
      cohort: '',
    });
  });

  test.each([
    ['engines: some', /engines must be "gpu" or "all"/],
    ['gpuclasses: []', /gpuclasses is not a known key/],
    ['gpuClasses: {}', /gpuClasses must be a list/],
    ['gpuClasses: [{ name: Big_GPU }]', /gpuClasses\[0\]\.name must be a DNS label/],
    ['gpuClasses: [{ name: cpu-only }]', /gpuClasses\[0\]\.name "cpu-only" is reserved/],
    ['gpuClasses: [{ name: a }, { name: a }]', /gpuClasses names "a" twice/],
    ['gpuClasses: [{ name: a, nodeLabel: {} }]', /gpuClasses\[0\]\.nodeLabel is not a known key/],
    ['gpuClasses: [{ name: a, nodeLabels: { x: 1 } }]', /gpuClasses\[0\]\.nodeLabels\.x must be a string/],
    [
      'gpuClasses: [{ name: a, tolerations: [{ effect: 3 }] }]',
      /gpuClasses\[0\]\.tolerations\[0\]\.effect has the wrong type/,
    ],
    ['workspaceQuota: { b: 1 }', /workspaceQuota\.b is not a GPU class of gpuClasses/],
    ['gpuClasses: [{ name: a }]\nworkspaceQuota: { a: 1.5 }', /workspaceQuota\.a must be a whole number/],
    ['gpuClasses: [{ name: a }]\nworkspaces: { t: { a: -1 } }', /workspaces\.t\.a must be a whole number/],
    ['workspaces: { Team: {} }', /workspaces\.Team must be a DNS label/],
    ['cohort: Engines', /cohort must be a DNS label/],
    ['- a', /the file must be a mapping/],
    ['a: [', /not YAML/],
  ])('refuses %j naming the key', (text, message) => {
    expect(() => parseQueueingConfig(text)).toThrow(message);
    expect(() => parseQueueingConfig(text)).toThrow(/^Invalid queueing configuration: /);
  });
});

describe('readQueueingConfig()', () => {
  test('unset or empty: queueing is off', () => {
    expect(readQueueingConfig(undefined)).toBeUndefined();
    expect(readQueueingConfig('')).toBeUndefined();
  });

  test('reads the file, and names it when it cannot', () => {
    const dir = mkdtempSync(join(tmpdir(), 'queueing-'));
    const path = join(dir, 'queueing.yaml');
    writeFileSync(path, 'engines: all\n');
    expect(readQueueingConfig(path)?.engines).toBe('all');
    expect(() => readQueueingConfig(join(dir, 'missing.yaml'))).toThrow(
      /cannot read ".*missing\.yaml" \(AIEM_QUEUEING_CONFIG\)/,
    );
  });
});
