import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { formatResourceName, idOf, parentOf, parseResourceName, workspaceOf } from './resource-name.ts';

/** A name segment: anything but a slash, and never empty. */
const segment = fc.string({ minLength: 1, maxLength: 20 }).filter((s) => !s.includes('/'));
const parts = fc.record({ workspace: segment, collection: segment, id: segment });

describe('resource names', () => {
  test('a formatted name parses back to its parts, and its id, workspace and parent read from it', () => {
    fc.assert(
      fc.property(parts, (name) => {
        const text = formatResourceName(name);
        expect(parseResourceName(text)).toEqual(name);
        expect(parseResourceName(text, name.collection)).toEqual(name);
        expect(idOf(text)).toBe(name.id);
        expect(workspaceOf(text)).toBe(name.workspace);
        expect(parentOf(text)).toBe(`workspaces/${name.workspace}`);
      }),
    );
  });

  test('a parsed name formats back to itself', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const parsed = parseResourceName(text);
        if (parsed !== undefined) expect(formatResourceName(parsed)).toBe(text);
      }),
    );
  });

  test.each([
    ['workspaces/w/daiEngines', 'three segments'],
    ['workspaces/w/daiEngines/e1/processes/p1', 'a nested name'],
    ['projects/w/daiEngines/e1', 'another root'],
    ['workspaces//daiEngines/e1', 'an empty workspace'],
    ['workspaces/w/daiEngines/', 'an empty id'],
    ['', 'nothing'],
  ])('%p is no top-level name (%s)', (text) => {
    expect(parseResourceName(text)).toBeUndefined();
  });

  test('a name of another collection is not one of the collection asked for', () => {
    expect(parseResourceName('workspaces/w/h2oEngines/e1', 'daiEngines')).toBeUndefined();
  });

  test('nested names: the id is the last segment, the parent drops the last collection and id', () => {
    const process = 'workspaces/w/sandboxEngines/s1/processes/p1';
    expect(idOf(process)).toBe('p1');
    expect(workspaceOf(process)).toBe('w');
    expect(parentOf(process)).toBe('workspaces/w/sandboxEngines/s1');
    expect(workspaceOf('users/alice')).toBe('');
  });
});
