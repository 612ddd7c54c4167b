import fc from 'fast-check';
import { earlierObjectNames, objectName, parseObjectName } from './names.ts';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Workspace ids as the API accepts them (a DNS label). */
const workspace = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
/** Any id a caller may send, including the dots, capitals and `0x` that could make names meet. */
const anyId = fc.oneof(
  fc.string({ minLength: 1, maxLength: 70 }),
  fc.stringMatching(/^(0x)?[a-zA-Z0-9.-]{1,40}$/),
  fc.stringMatching(/^[0-9]{1,3}(\.[0-9]{1,3}){1,3}(-[0-9A-Za-z-]{1,8})?$/),
  fc.stringMatching(/^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/),
);

describe('objectName()', () => {
  test('keeps valid workspaces and ids readable: <workspace>.<id>', () => {
    expect(objectName('default', 'engine-1')).toBe('default.engine-1');
    expect(objectName('global', '1.10.6.1-alpha')).toBe('global.1.10.6.1-alpha');
    expect(objectName('5f0c2c1e-9d2b-4b1a-8f0e-3c9a7d2e1b40', 'e1')).toBe(
      '5f0c2c1e-9d2b-4b1a-8f0e-3c9a7d2e1b40.e1',
    );
  });

  test('encodes ids that cannot be name parts, and ids that look encoded', () => {
    expect(objectName('global', '1.10.6-RC1')).toBe(`global.0x${Buffer.from('1.10.6-RC1').toString('hex')}`);
    expect(objectName('w', '0x41')).toBe(`w.0x${Buffer.from('0x41').toString('hex')}`);
    expect(objectName('w', 'A')).toBe('w.0x41');
  });

  test('has no name for what cannot exist: invalid workspaces, empty or ill-formed ids, too long names', () => {
    expect(objectName('w.sub', 'e1')).toBeUndefined();
    expect(objectName('W', 'e1')).toBeUndefined();
    expect(objectName('-', 'e1')).toBeUndefined();
    expect(objectName('w', '')).toBeUndefined();
    expect(objectName('w', 'a\uD800b')).toBeUndefined();
    expect(objectName('w', 'É'.repeat(100))).toBeUndefined();
  });

  test('the workspace-with-a-dot alias is gone: w.sub/e1 and w/sub.e1 cannot share an object', () => {
    expect(objectName('w', 'sub.e1')).toBe('w.sub.e1');
    expect(objectName('w.sub', 'e1')).toBeUndefined();
    expect(objectName('w', '10.7')).not.toBe(objectName('w.1', '10.7'));
  });

  test('is injective: parseObjectName() gives back the workspace and id of every name', () => {
    fc.assert(
      fc.property(workspace, anyId, (ws, id) => {
        const name = objectName(ws, id);
        if (name === undefined) return;
        expect(name.length).toBeLessThanOrEqual(253);
        expect(name).toMatch(DNS_SUBDOMAIN);
        expect(parseObjectName(name)).toEqual({ workspace: ws, id });
      }),
      { numRuns: 3000 },
    );
  });

  test('two different resources never get the same name', () => {
    fc.assert(
      fc.property(workspace, anyId, workspace, anyId, (ws1, id1, ws2, id2) => {
        fc.pre(ws1 !== ws2 || id1 !== id2);
        const one = objectName(ws1, id1);
        fc.pre(one !== undefined);
        expect(objectName(ws2, id2)).not.toBe(one);
      }),
      { numRuns: 3000 },
    );
  });

  test('every valid resource id and version id in a valid workspace has a name', () => {
    const resourceId = fc.stringMatching(/^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/);
    const versionId = fc.stringMatching(
      /^[0-9]{1,5}(\.[0-9]{1,5}){1,6}(-[0-9A-Za-z-]{1,10}(\.[0-9A-Za-z-]{1,5})?)?$/,
    );
    fc.assert(
      fc.property(workspace, fc.oneof(resourceId, versionId), (ws, id) => {
        fc.pre(id.length <= 63);
        expect(objectName(ws, id)).toBeDefined();
      }),
      { numRuns: 2000 },
    );
  });
});

describe('earlierObjectNames()', () => {
  test('names where release 1 kept ids it hashed; none where both releases agree', () => {
    expect(earlierObjectNames('global', '1.10.6')).toEqual([]);
    expect(earlierObjectNames('w', 'engine-1')).toEqual([]);
    const [release1] = earlierObjectNames('global', '1.10.6-RC1');
    expect(release1).toMatch(/^global\.0[0-9a-f]{24}$/);
  });
});
