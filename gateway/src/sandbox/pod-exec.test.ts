import { exitCodeOf, PodExecError, sandboxScript } from './pod-exec.ts';

describe('exitCodeOf()', () => {
  test('is 0 for Success', () => {
    expect(exitCodeOf({ status: 'Success' })).toBe(0);
  });

  test("reads a kubelet's NonZeroExitCode cause", () => {
    expect(
      exitCodeOf({
        status: 'Failure',
        reason: 'NonZeroExitCode',
        message:
          'command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3',
        details: { causes: [{ reason: 'ExitCode', message: '3' }] },
      }),
    ).toBe(3);
  });

  test("reads kwok's Go exit status from the message", () => {
    expect(
      exitCodeOf({
        status: 'Failure',
        reason: 'InternalError',
        message:
          'Internal error occurred: error executing command in container: cmd wait: sh -c exit 3: exit status 3',
      }),
    ).toBe(3);
  });

  test.each([
    ['terminated', 143],
    ['killed', 137],
    ['interrupt', 130],
    ['broken pipe', 141],
  ])("turns kwok's `signal: %s` into 128 + the signal's number", (name, code) => {
    expect(exitCodeOf({ status: 'Failure', message: `… cmd wait: sh -c sleep 9: signal: ${name}` })).toBe(
      code,
    );
  });

  test('throws for a failure that reports no exit, such as a pod without exec', () => {
    expect(() =>
      exitCodeOf({ status: 'Failure', reason: 'InternalError', message: 'no exec configured for pod ns/p1' }),
    ).toThrow(PodExecError);
    expect(() => exitCodeOf({ status: 'Failure', message: 'exit status 3 and more' })).toThrow(PodExecError);
  });
});

describe('sandboxScript()', () => {
  test('runs the script with sh, the sandbox root in R, and the arguments as $1…, never parsed', () => {
    expect(sandboxScript('cat -- "$R$1"', ['/a b; rm -rf /'])).toEqual([
      'sh',
      '-c',
      'R="${AIEM_SANDBOX_ROOT:-}"\ncat -- "$R$1"',
      'sh',
      '/a b; rm -rf /',
    ]);
  });
});
