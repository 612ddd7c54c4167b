import {
  MAX_RECORDED_BYTES,
  RECORDED_ANNOTATION,
  outputFields,
  recordAfterWrite,
  recordText,
  recordedFields,
} from './recorded.ts';

const annotated = (recorded: object, status?: Record<string, unknown>) => ({
  metadata: { annotations: { other: 'kept', [RECORDED_ANNOTATION]: JSON.stringify(recorded) } },
  ...(status === undefined ? {} : { status }),
});

describe('recorded output fields', () => {
  test('status wins over what was recorded at creation; recorded fields fill the rest', () => {
    const engine = annotated(
      { creator: 'users/alice', state: 'STATE_STARTING', profileInfo: { name: 'p' } },
      { state: 'STATE_RUNNING' },
    );
    expect(outputFields(engine)).toEqual({
      creator: 'users/alice',
      state: 'STATE_RUNNING',
      profileInfo: { name: 'p' },
    });
  });

  test('an object of the earlier layout reads its status alone', () => {
    expect(outputFields({ metadata: {}, status: { creator: 'users/bob' } })).toEqual({
      creator: 'users/bob',
    });
    expect(outputFields({ metadata: {} })).toEqual({});
  });

  test('an annotation damaged by hand reads as nothing recorded, never as a failure', () => {
    for (const text of ['{', '[1]', 'null', '"text"', '7'])
      expect(recordedFields({ [RECORDED_ANNOTATION]: text })).toEqual({});
  });

  test('fields too large for an annotation are not recorded', () => {
    expect(recordText({ creator: 'users/alice' })).toBe('{"creator":"users/alice"}');
    expect(
      recordText({ profileInfo: { yamlPodTemplateSpec: 'x'.repeat(MAX_RECORDED_BYTES) } }),
    ).toBeUndefined();
  });

  test('a write that clears a recorded field removes it, so the recorded value never returns', () => {
    const { annotations } = annotated({
      creator: 'users/alice',
      updater: 'users/bob',
      state: 'STATE_STARTING',
    }).metadata;
    // Engines write the fields they own, null when unset; the others stay recorded.
    expect(
      JSON.parse(recordAfterWrite(annotations, { updater: null, creator: 'users/alice' }, false) ?? ''),
    ).toEqual({
      creator: 'users/alice',
      state: 'STATE_STARTING',
    });
    // Other kinds write their whole status: what it leaves out is cleared.
    expect(JSON.parse(recordAfterWrite(annotations, { creator: 'users/alice' }, true) ?? '')).toEqual({
      creator: 'users/alice',
    });
    expect(recordAfterWrite(annotations, {}, true)).toBeUndefined();
    // Nothing cleared: the same text, byte for byte.
    expect(recordAfterWrite(annotations, { updater: 'users/carol' }, false)).toBe(
      annotations[RECORDED_ANNOTATION],
    );
    expect(recordAfterWrite({ other: 'x' }, { updater: null }, false)).toBeUndefined();
  });
});
