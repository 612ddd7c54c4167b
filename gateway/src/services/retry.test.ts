import type { CallContext } from '../call/handler.ts';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { retryingOnConflict } from './retry.ts';

const context = { caller: { subject: 'users/u', displayName: 'U', roles: [] } } as unknown as CallContext;
const conflict = (): ApiError => new ApiError(Code.ABORTED, 'changed concurrently');

describe('retryingOnConflict()', () => {
  test('runs the call again after a conflict and answers its result', async () => {
    let calls = 0;
    const handler = retryingOnConflict(() => {
      calls++;
      return calls < 3 ? Promise.reject(conflict()) : Promise.resolve({ ok: calls });
    });
    await expect(handler({}, context)).resolves.toEqual({ ok: 3 });
  });

  test('reports the conflict after five attempts', async () => {
    let calls = 0;
    const handler = retryingOnConflict(() => {
      calls++;
      return Promise.reject(conflict());
    });
    await expect(handler({}, context)).rejects.toMatchObject({ code: Code.ABORTED });
    expect(calls).toBe(5);
  });

  test('never repeats a call that failed for another reason', async () => {
    let calls = 0;
    const handler = retryingOnConflict(() => {
      calls++;
      return Promise.reject(new ApiError(Code.FAILED_PRECONDITION, 'paused'));
    });
    await expect(handler({}, context)).rejects.toMatchObject({ code: Code.FAILED_PRECONDITION });
    expect(calls).toBe(1);
  });
});
