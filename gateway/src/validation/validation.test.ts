import { loadApi } from '../../../proto/tools/load-api.ts';
import { ApiError } from '../errors/api-error.ts';
import { durationConstraintProblems, numericConstraintProblems, withinNumeric } from './constraints.ts';
import {
  aliasProblems,
  annotationProblem,
  checkDisplayName,
  parseName,
  resourceIdProblem,
  versionIdProblem,
} from './names.ts';
import { resolveUpdateMask, UPDATE_PATHS } from './update-mask.ts';

describe('resourceIdProblem()', () => {
  test.each(['a', 'engine-1', 'a1', `a${'b'.repeat(62)}`])('accepts %p', (id) => {
    expect(resourceIdProblem(id)).toBeUndefined();
  });
  test.each([
    ['', 'is required'],
    ['1engine', 'start with a letter'],
    ['Engine', 'lowercase'],
    ['engine-', 'end with a letter or digit'],
    ['en_gine', 'lowercase letters, digits and hyphens'],
    [`a${'b'.repeat(63)}`, 'at most 63 characters, got 64'],
  ])('rejects %p: %s', (id, problem) => {
    expect(resourceIdProblem(id)).toContain(problem);
  });
});

describe('versionIdProblem()', () => {
  test.each(['1.10.3', '1.10.3-alpha', '1.10.3.2', '1.10.3.2-alpha', '3.46.0.1-rc.2'])('accepts %p', (id) => {
    expect(versionIdProblem(id)).toBeUndefined();
  });
  test.each(['', '1', 'latest', '1.10.', 'v1.10.3', '1.10.3+build', `1.${'1'.repeat(62)}`])(
    'rejects %p',
    (id) => {
      expect(versionIdProblem(id)).toBeDefined();
    },
  );
});

describe('aliasProblems()', () => {
  test('accepts distinct valid aliases, and none', () => {
    expect(aliasProblems(['latest', 'stable'])).toEqual([]);
    expect(aliasProblems([])).toEqual([]);
  });
  test('names each invalid or repeated alias by position', () => {
    expect(aliasProblems(['latest', 'Bad', 'latest'])).toEqual([
      { index: 1, problem: expect.stringContaining('lowercase') as unknown },
      { index: 2, problem: '"latest" is listed twice' },
    ]);
  });
});

describe('annotationProblem()', () => {
  test('accepts keys of letters, digits, "-", "_" and "."', () => {
    expect(annotationProblem({ 'team.name': 'a', Owner_1: 'b', x: 'c' })).toBeUndefined();
  });
  test.each(['-start', 'end.', 'has space', 'a/b', 'k'.repeat(64)])('rejects the key %p', (key) => {
    expect(annotationProblem({ [key]: 'v' })?.key).toBe(key);
  });
});

describe('checkDisplayName() and parseName()', () => {
  test('display names are limited to 63 characters', () => {
    expect(checkDisplayName('displayName', 'x'.repeat(63))).toBeUndefined();
    expect(checkDisplayName('displayName', 'x'.repeat(64))?.toStatus().details[1]).toMatchObject({
      fieldViolations: [{ field: 'displayName' }],
    });
  });
  test('names split into workspace and id for their collection only', () => {
    expect(parseName('workspaces/w/daiEngines/e1', 'daiEngines')).toEqual({ workspace: 'w', id: 'e1' });
    expect(parseName('workspaces/w/h2oEngines/e1', 'daiEngines')).toBeUndefined();
    expect(parseName('workspaces//daiEngines/e1', 'daiEngines')).toBeUndefined();
    expect(parseName('workspaces/w/daiEngines/e1/x', 'daiEngines')).toBeUndefined();
  });
});

describe('numericConstraintProblems()', () => {
  test.each([
    [{ min: '1', default: '2', max: '8' }],
    [{ min: '1', default: '1', max: '1' }],
    [{ min: '0', default: '0' }],
    [{ min: '1', default: '2', cumulativeMax: '2' }],
    [{ min: '1', default: '9223372036854775807' }],
  ])('accepts %j', (constraint) => {
    expect(numericConstraintProblems(constraint)).toEqual([]);
  });
  test.each([
    [{ min: '4', default: '2' }, 'default'],
    [{ min: '1', default: '4', max: '2' }, 'max'],
    [{ min: '-1', default: '0' }, 'min'],
    [{ min: '1', default: '4', cumulativeMax: '2' }, 'cumulativeMax'],
  ])('rejects %j at %s', (constraint, field) => {
    expect(numericConstraintProblems(constraint).map((p) => p.field)).toContain(field);
  });
  test('bounds are inclusive and an unset max is unlimited', () => {
    expect(withinNumeric(8n, { min: '1', default: '2', max: '8' })).toBe(true);
    expect(withinNumeric(9n, { min: '1', default: '2', max: '8' })).toBe(false);
    expect(withinNumeric(0n, { min: '1', default: '2' })).toBe(false);
    expect(withinNumeric(10n ** 18n, { min: '1', default: '2' })).toBe(true);
  });
});

describe('durationConstraintProblems()', () => {
  const s = (seconds: number, nanos = 0): { seconds: string; nanos: number } => ({
    seconds: String(seconds),
    nanos,
  });
  test('accepts min <= default <= max and an unset max', () => {
    expect(durationConstraintProblems({ min: s(0), default: s(3600), max: s(86400) })).toEqual([]);
    expect(durationConstraintProblems({ min: s(1, 5), default: s(1, 5) })).toEqual([]);
  });
  test('rejects a missing min or default, and out-of-order bounds, by sub-field', () => {
    expect(durationConstraintProblems({ default: s(1) })).toEqual([{ field: 'min', problem: 'is required' }]);
    expect(durationConstraintProblems({ min: s(1) })).toEqual([{ field: 'default', problem: 'is required' }]);
    expect(durationConstraintProblems({ min: s(10), default: s(5) }).map((p) => p.field)).toEqual([
      'default',
    ]);
    expect(
      durationConstraintProblems({ min: s(1), default: s(5), max: s(4, 999_999_999) }).map((p) => p.field),
    ).toEqual(['max']);
  });
});

describe('resolveUpdateMask()', () => {
  test('"*" means every allowed path', () => {
    expect(resolveUpdateMask('notebookEngineImage', ['*'])).toEqual([
      'display_name',
      'image',
      'enabled',
      'image_pull_policy',
      'image_pull_secrets',
    ]);
  });
  test('leaves the named-only paths out of "*": a profile\'s queue priority changes only when named', () => {
    const all = resolveUpdateMask('h2oEngineProfile', ['*']) as string[];
    expect(all).toContain('display_name');
    expect(all).not.toContain('queue_priority');
    expect(resolveUpdateMask('h2oEngineProfile', ['display_name', 'queue_priority'])).toEqual([
      'display_name',
      'queue_priority',
    ]);
  });
  test('returns the named paths once each', () => {
    expect(resolveUpdateMask('daiEngineVersion', ['image', 'deprecated', 'image'])).toEqual([
      'image',
      'deprecated',
    ]);
  });
  test.each<[string[] | undefined, string]>([
    [undefined, 'is required'],
    [[], 'is required'],
    [[''], 'is required'],
    [['Image'], 'unknown path "Image"'],
    [['displayName'], 'unknown path "displayName"'],
    [['name'], 'unknown path "name"'],
    [['*', 'image'], '"*" must be the only path'],
  ])('rejects %j', (mask, message) => {
    const result = resolveUpdateMask('daiEngineVersion', mask);
    expect(result).toBeInstanceOf(ApiError);
    expect((result as ApiError).toStatus()).toMatchObject({
      code: 3,
      message: expect.stringContaining(message) as unknown,
    });
  });

  test('refuses immutable fields with that reason', () => {
    const result = resolveUpdateMask('notebookEngine', ['display_name', 'notebook_image']);
    expect((result as ApiError).message).toContain('"notebook_image" cannot be changed after creation');
    expect((resolveUpdateMask('h2oEngine', ['h2o_engine_version']) as ApiError).message).toContain(
      'cannot be changed',
    );
  });

  test('every allowed path is a settable field of its resource in proto/', () => {
    const api = loadApi();
    const messages: Record<keyof typeof UPDATE_PATHS, string> = {
      daiEngineProfile: 'DAIEngineProfile',
      h2oEngineProfile: 'H2OEngineProfile',
      notebookEngineProfile: 'NotebookEngineProfile',
      daiEngineVersion: 'DAIEngineVersion',
      h2oEngineVersion: 'H2OEngineVersion',
      notebookEngineImage: 'NotebookEngineImage',
      sandboxEngineImage: 'SandboxEngineImage',
      sandboxEngineTemplate: 'SandboxEngineTemplate',
      port: 'Port',
      daiEngine: 'DAIEngine',
      h2oEngine: 'H2OEngine',
      notebookEngine: 'NotebookEngine',
    };
    const wrong = Object.entries(UPDATE_PATHS).flatMap(([resource, paths]) => {
      const fields =
        api.messages.get(`ai.h2o.engine.v1.${messages[resource as keyof typeof UPDATE_PATHS]}`)?.fields ?? [];
      return paths
        .filter((path) => {
          const field = fields.find((f) => f.name === path);
          return (
            field === undefined ||
            field.behaviors.includes('OUTPUT_ONLY') ||
            field.behaviors.includes('IMMUTABLE')
          );
        })
        .map((path) => `${resource}.${path}`);
    });
    expect(wrong).toEqual([]);
  });
});
