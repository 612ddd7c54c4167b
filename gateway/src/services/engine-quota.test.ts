import { Code } from '../errors/code.ts';
import type { EngineMessage, EngineProfile } from './engine-service.ts';
import { isRunning, quotaExceeded } from './engine-quota.ts';
import type { StoredEngine } from './engine-records.ts';

const PROFILE: EngineProfile = {
  name: 'workspaces/w/daiEngineProfiles/p',
  enabled: true,
  assignedOidcRolesEnabled: false,
  assignedOidcRoles: [],
  maxRunningEngines: 1,
};

function engine(id: string, fields: Partial<EngineMessage> = {}): EngineMessage {
  return {
    name: `workspaces/w/daiEngines/${id}`,
    uid: id,
    state: 'STATE_RUNNING',
    creator: 'users/alice',
    creatorDisplayName: 'Alice',
    displayName: '',
    reconciling: false,
    profile: PROFILE.name,
    ...fields,
  };
}

function stored(e: EngineMessage): StoredEngine<EngineMessage> {
  return { engine: e, resourceVersion: '1', intent: {} };
}

const everyOneRuns = (): boolean => true;

describe('isRunning()', () => {
  test.each([
    ['STATE_RUNNING', {}, true],
    ['STATE_STARTING', {}, true],
    ['STATE_RUNNING', { paused: true }, false],
    ['STATE_PAUSED', {}, false],
    ['STATE_FAILED', {}, false],
    ['STATE_TERMINATING', {}, false],
  ])('an engine %s with intent %j runs: %s', (state, intent, expected) => {
    expect(isRunning(intent, 'paused', state)).toBe(expected);
  });
});

describe('quotaExceeded()', () => {
  test('another running engine of the same user and profile fills a cap of one', () => {
    const error = quotaExceeded([stored(engine('a'))], everyOneRuns, engine('b'), PROFILE);
    expect(error?.code).toBe(Code.RESOURCE_EXHAUSTED);
    expect(error?.message).toBe(
      'Cannot start the engine: the profile allows 1 running engines per user, and 1 already run',
    );
  });

  test.each([
    ['the engine itself', engine('b')],
    ["another user's engine", engine('a', { creator: 'users/bob' })],
    ['an engine of another profile', engine('a', { profile: 'workspaces/w/daiEngineProfiles/q' })],
  ])('%s does not count', (_what, other) => {
    expect(quotaExceeded([stored(other)], everyOneRuns, engine('b'), PROFILE)).toBeUndefined();
  });

  test('a stopped engine does not count', () => {
    expect(quotaExceeded([stored(engine('a'))], () => false, engine('b'), PROFILE)).toBeUndefined();
  });
});
