import { availableParallelism } from 'node:os';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { DIFFERENTIAL_CASES, ENGINE_TEMPLATE, type DifferentialCase } from './_differential-cases.ts';
import { generatedCases } from './_generated-cases.ts';
import { openKubectl, type KubectlResult } from './_kubectl-patch.ts';
import { KUBERNETES_VERSION } from './gen/patch-metadata.ts';
import type { JsonObject } from './json.ts';
import { strategicMerge, StrategicMergeError } from './strategic-merge.ts';

const GENERATED_CASES = generatedCases(20_260_601, 100);
const kubectl = await openKubectl();
const answers = new Map<string, KubectlResult>();

beforeAll(async () => {
  // Each answer is a kubectl process; a few at a time keep the suite within seconds.
  const queue = [...DIFFERENTIAL_CASES, ...GENERATED_CASES];
  const worker = async (): Promise<void> => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      answers.set(next.name, await kubectl.patch(next.original, next.patch));
    }
  };
  await Promise.all(Array.from({ length: Math.max(2, availableParallelism() * 2) }, worker));
}, 120_000);

afterAll(() => kubectl.close());

const merge = (c: DifferentialCase): JsonObject => strategicMerge(c.original, c.patch, 'PodTemplateSpec');

describe(`strategicMerge() agrees with kubectl ${kubectl.version} patch --type=strategic`, () => {
  // Skipped, visibly, when only a system kubectl was found: make test builds the project's own.
  (kubectl.path === 'kubectl' ? test.skip : test)(
    'the reference kubectl is the release the patch metadata comes from',
    () => {
      expect(`${kubectl.path}: ${kubectl.version}`).toMatch(
        new RegExp(`: ${KUBERNETES_VERSION.replaceAll('.', '\\.')}$`),
      );
    },
  );

  test(`covers at least 40 distinct cases (${DIFFERENTIAL_CASES.length})`, () => {
    expect(DIFFERENTIAL_CASES.length).toBeGreaterThanOrEqual(40);
    expect(new Set(DIFFERENTIAL_CASES.map((c) => c.name)).size).toBe(DIFFERENTIAL_CASES.length);
  });

  test.each(DIFFERENTIAL_CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expectAgreement(c);
  });

  test(`on ${GENERATED_CASES.length} generated cases`, () => {
    for (const c of GENERATED_CASES) expectAgreement(c);
  });
});

/** Both refuse the patch, or both give the same template (lists in the same order). */
function expectAgreement(c: DifferentialCase): void {
  const answer = answers.get(c.name);
  if (answer === undefined) throw new Error(`kubectl gave no answer for ${c.name}`);
  const expected = 'error' in answer ? { refused: true } : { template: answer.template };
  // The case and its patch ride along, so a failure among the generated cases says which.
  expect({ case: c.name, patch: c.patch, ...outcome(c) }).toStrictEqual({
    case: c.name,
    patch: c.patch,
    ...expected,
  });
}

function outcome(c: DifferentialCase): { template: JsonObject } | { refused: true } {
  try {
    return { template: JSON.parse(JSON.stringify(merge(c))) as JsonObject };
  } catch (error: unknown) {
    if (error instanceof StrategicMergeError) return { refused: true };
    throw error;
  }
}

describe('strategicMerge()', () => {
  test('changes neither of its arguments', () => {
    const original = structuredClone(ENGINE_TEMPLATE);
    const patch: JsonObject = {
      spec: { containers: [{ name: 'driverless-ai', image: 'x', env: [{ name: 'HOME', value: null }] }] },
    };
    const patchCopy = structuredClone(patch);
    strategicMerge(original, patch, 'PodTemplateSpec');
    expect(original).toStrictEqual(ENGINE_TEMPLATE);
    expect(patch).toStrictEqual(patchCopy);
  });

  test('places elements new to a merged list before the original ones, as kubectl does', () => {
    const original: JsonObject = {
      spec: { containers: [{ name: 'main' }], imagePullSecrets: [{ name: 'a' }] },
    };
    const patch: JsonObject = {
      spec: { containers: [{ name: 'sidecar' }], imagePullSecrets: [{ name: 'b' }] },
    };
    expect(strategicMerge(original, patch, 'PodTemplateSpec')).toStrictEqual({
      spec: {
        containers: [{ name: 'sidecar' }, { name: 'main' }],
        imagePullSecrets: [{ name: 'b' }, { name: 'a' }],
      },
    });
  });

  test('names the place and the rule in its errors', () => {
    const patch: JsonObject = { spec: { containers: [{ name: 'main', env: [{ value: 'x' }] }] } };
    expect(() =>
      strategicMerge({ spec: { containers: [{ name: 'main', env: [] }] } }, patch, 'PodTemplateSpec'),
    ).toThrow('spec.containers[name="main"].env[0]: list element {"value":"x"} has no merge key "name"');
  });

  test('applies to types below PodTemplateSpec', () => {
    const result = strategicMerge(
      { name: 'main', env: [{ name: 'A', value: '1' }] },
      { env: [{ name: 'A', value: '2' }] },
      'Container',
    );
    expect(result).toStrictEqual({ name: 'main', env: [{ name: 'A', value: '2' }] });
  });

  test('keeps a field named __proto__ as a field', () => {
    const result = strategicMerge(
      { metadata: {} },
      JSON.parse('{"metadata":{"labels":{"__proto__":"x"}}}') as JsonObject,
      'PodTemplateSpec',
    );
    expect(Object.keys((result['metadata'] as { labels: object }).labels)).toStrictEqual(['__proto__']);
    expect(JSON.stringify(result)).toBe('{"metadata":{"labels":{"__proto__":"x"}}}');
  });
});
