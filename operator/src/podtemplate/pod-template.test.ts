import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { afterAll, describe, expect, test } from '@jest/globals';
import { ENGINE_TEMPLATE } from './_differential-cases.ts';
import { openKubectl } from './_kubectl-patch.ts';
import { StrategicMergeError } from './errors.ts';
import { customisePodTemplate, PodTemplateError, type PodTemplateCustomisation } from './pod-template.ts';

const kubectl = await openKubectl();
afterAll(() => kubectl.close());

const BASE: V1PodTemplateSpec = structuredClone(ENGINE_TEMPLATE);

/** What a profile administrator writes: a license, a log shipper, a dedicated pool. */
const PROFILE_TEMPLATE = `
metadata:
  annotations:
    sidecar.istio.io/inject: "false"
spec:
  nodeSelector:
    pool: dai
  containers:
    - name: driverless-ai
      env:
        - name: DRIVERLESS_AI_LICENSE_FILE
          value: /license/license.sig
      volumeMounts:
        - name: license
          mountPath: /license
          readOnly: true
      resources:
        limits:
          ephemeral-storage: 10Gi
    - name: log-shipper
      image: fluent/fluent-bit:3.0
  volumes:
    - name: license
      secret:
        secretName: dai-license
        defaultMode: 0440
  tolerations:
    - key: dedicated
      operator: Equal
      value: dai
      effect: NoSchedule
`;

const GPU_TOLERATIONS = `
- key: nvidia.com/gpu
  operator: Exists
  effect: NoSchedule
`;

const customise = (customisation: Partial<PodTemplateCustomisation>): V1PodTemplateSpec =>
  customisePodTemplate(BASE, { yamlPodTemplateSpec: '', yamlGpuTolerations: '', gpu: 0, ...customisation });

/** The error customise() throws. */
function failure(customisation: Partial<PodTemplateCustomisation>): PodTemplateError {
  try {
    customise(customisation);
  } catch (error: unknown) {
    if (error instanceof PodTemplateError) return error;
    throw error;
  }
  throw new Error('customisePodTemplate() did not fail');
}

describe('customisePodTemplate()', () => {
  test('returns the base template when the profile sets nothing, and leaves the base alone', () => {
    expect(customise({ yamlPodTemplateSpec: '  \n# no changes yet\n', gpu: 1 })).toStrictEqual(
      ENGINE_TEMPLATE,
    );
    customise({ yamlPodTemplateSpec: PROFILE_TEMPLATE, yamlGpuTolerations: GPU_TOLERATIONS, gpu: 1 });
    expect(BASE).toStrictEqual(ENGINE_TEMPLATE);
  });

  test(`merges yamlPodTemplateSpec as kubectl ${kubectl.version} patch --type=strategic does`, async () => {
    const answer = await kubectl.patchYaml(ENGINE_TEMPLATE, PROFILE_TEMPLATE);
    if ('error' in answer) throw new Error(answer.error);
    const result = customise({ yamlPodTemplateSpec: PROFILE_TEMPLATE });
    expect(result).toStrictEqual(answer.template);
    // The patch's elements keep the patch's order; the new variable goes first.
    expect(result.spec?.containers.map((c) => c.name)).toStrictEqual(['driverless-ai', 'log-shipper']);
    expect(result.spec?.containers[0]?.env?.map((e) => e.name)).toStrictEqual([
      'DRIVERLESS_AI_LICENSE_FILE',
      'DRIVERLESS_AI_CONFIG_FILE',
      'HOME',
    ]);
  });

  test('reads the YAML as Kubernetes does: 0440 is an octal file mode', () => {
    const result = customise({ yamlPodTemplateSpec: PROFILE_TEMPLATE });
    expect(result.spec?.volumes?.find((v) => v.name === 'license')?.secret?.defaultMode).toBe(0o440);
  });

  test('replaces the tolerations with yamlGpuTolerations only for engines with GPUs', () => {
    const both = { yamlPodTemplateSpec: PROFILE_TEMPLATE, yamlGpuTolerations: GPU_TOLERATIONS };
    const dedicated = [{ key: 'dedicated', operator: 'Equal', value: 'dai', effect: 'NoSchedule' }];
    expect(customise({ ...both, gpu: 0 }).spec?.tolerations).toStrictEqual(dedicated);
    expect(customise({ ...both, gpu: 2 }).spec?.tolerations).toStrictEqual([
      { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    expect(customise({ ...both, yamlGpuTolerations: '', gpu: 2 }).spec?.tolerations).toStrictEqual(dedicated);
    expect(customise({ yamlGpuTolerations: GPU_TOLERATIONS, gpu: 1 }).spec?.tolerations).toHaveLength(1);
  });

  test('clears the tolerations of GPU engines when yamlGpuTolerations is an empty list', () => {
    const result = customise({ yamlPodTemplateSpec: PROFILE_TEMPLATE, yamlGpuTolerations: '[]', gpu: 1 });
    expect(result.spec).not.toHaveProperty('tolerations');
  });

  test('does not read yamlGpuTolerations for engines without GPUs', () => {
    expect(customise({ yamlGpuTolerations: 'key: [', gpu: 0 })).toStrictEqual(ENGINE_TEMPLATE);
  });

  test('drops the directives and nulls a patch can leave in added elements', () => {
    const yaml =
      'spec:\n  containers:\n    - name: sidecar\n      image: null\n      $retainKeys: [name]\n      args: [a]';
    expect(customise({ yamlPodTemplateSpec: yaml }).spec?.containers[0]).toStrictEqual({
      name: 'sidecar',
      args: ['a'],
    });
  });

  test('refuses invalid YAML, naming the field and where the YAML breaks', () => {
    const error = failure({ yamlPodTemplateSpec: 'spec:\n  containers: [' });
    expect(error.field).toBe('yamlPodTemplateSpec');
    expect(error.message).toMatch(
      /^Cannot apply the profile's yamlPodTemplateSpec to the engine pods: it is not valid YAML: .*\(3:1\)/s,
    );
  });

  test.each([
    ['a scalar', 'just text', 'it must be a YAML mapping, a PodTemplateSpec'],
    ['a list', '- a', 'it must be a YAML mapping, a PodTemplateSpec'],
    ['null', '~', 'it is null (leave it empty to set nothing)'],
    [
      'a PodSpec',
      'containers: []\nvolumes: []',
      'a PodTemplateSpec has only "metadata" and "spec", not "containers", "volumes"',
    ],
    ['a duplicate key', 'spec: {}\nspec: {}', 'it is not valid YAML: duplicated mapping key'],
  ])('refuses yamlPodTemplateSpec that is %s', (_kind, yaml, reason) => {
    expect(failure({ yamlPodTemplateSpec: yaml }).message).toContain(reason);
  });

  test.each([
    ['a mapping', 'key: a', 'it must be a YAML list of tolerations'],
    ['a list of scalars', '[a, b]', 'it must be a YAML list of tolerations'],
    ['null', 'null', 'it is null'],
  ])('refuses yamlGpuTolerations that is %s', (_kind, yaml, reason) => {
    const error = failure({ yamlGpuTolerations: yaml, gpu: 1 });
    expect(error.field).toBe('yamlGpuTolerations');
    expect(error.message).toContain(reason);
  });

  test('refuses a patch kubectl would refuse, saying where', () => {
    const error = failure({ yamlPodTemplateSpec: 'spec:\n  containers:\n    - image: nginx' });
    expect(error.message).toBe(
      `Cannot apply the profile's yamlPodTemplateSpec to the engine pods: spec.containers[0]: ` +
        `list element {"image":"nginx"} has no merge key "name"`,
    );
    expect(error.cause).toBeInstanceOf(StrategicMergeError);
  });
});
