import { ApiError, invalidArgument, notFound } from './api-error.ts';
import { Code, HTTP_STATUS } from './code.ts';

describe('HTTP_STATUS', () => {
  test.each([
    [Code.INVALID_ARGUMENT, 400],
    [Code.FAILED_PRECONDITION, 400],
    [Code.OUT_OF_RANGE, 400],
    [Code.UNAUTHENTICATED, 401],
    [Code.PERMISSION_DENIED, 403],
    [Code.NOT_FOUND, 404],
    [Code.ALREADY_EXISTS, 409],
    [Code.ABORTED, 409],
    [Code.RESOURCE_EXHAUSTED, 429],
    [Code.CANCELLED, 499],
    [Code.INTERNAL, 500],
    [Code.UNIMPLEMENTED, 501],
    [Code.UNAVAILABLE, 503],
    [Code.DEADLINE_EXCEEDED, 504],
  ])('maps code %i to HTTP %i as grpc-gateway does', (code, status) => {
    expect(HTTP_STATUS[code]).toBe(status);
  });

  test('covers every code', () => {
    for (const code of Object.values(Code)) expect(HTTP_STATUS[code]).toBeGreaterThanOrEqual(200);
  });
});

describe('ApiError', () => {
  test('invalidArgument() names the field in the message and in a BadRequest field violation', () => {
    const error = invalidArgument('daiEngine.cpu', 'must be at most 8');
    expect(error.httpStatus).toBe(400);
    expect(error.toStatus()).toEqual({
      code: 3,
      message: 'Invalid daiEngine.cpu: must be at most 8',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'INVALID_FIELD',
          domain: 'engine.h2o.ai',
          metadata: {},
        },
        {
          '@type': 'type.googleapis.com/google.rpc.BadRequest',
          fieldViolations: [{ field: 'daiEngine.cpu', description: 'must be at most 8' }],
        },
      ],
    });
  });

  test('notFound() is a 404 with a RESOURCE_NOT_FOUND reason', () => {
    const status = notFound('workspaces/w/daiEngines/e').toStatus();
    expect(status.code).toBe(5);
    expect(status.details[0]).toMatchObject({ reason: 'RESOURCE_NOT_FOUND' });
  });

  test('from() keeps ApiErrors and hides anything else behind INTERNAL', () => {
    const known = notFound('x');
    expect(ApiError.from(known)).toBe(known);
    const hidden = ApiError.from(new Error('etcd password is hunter2'));
    expect(hidden.code).toBe(Code.INTERNAL);
    expect(hidden.message).toBe('Internal error');
    expect(hidden.toStatus().message).not.toContain('hunter2');
  });
});
