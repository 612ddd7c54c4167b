import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    const argv = sandboxScript('cat -- "$R$1"', ['/a b; rm -rf /']);
    expect(argv).toHaveLength(5);
    expect(argv.slice(0, 2)).toEqual(['sh', '-c']);
    expect(argv[2]?.endsWith('\nR="${AIEM_SANDBOX_ROOT:-}"\ncat -- "$R$1"')).toBe(true);
    expect(argv.slice(3)).toEqual(['sh', '/a b; rm -rf /']);
  });

  test('runs the same script, arguments and exit code through $AIEM_SANDBOX_ENTER when it is set', () => {
    const script = `printf '%s|' "$R" "$1" "\${ENTERED:-no}"; exit 7`;
    const argv = sandboxScript(script, ["it's"]);
    const run = (env: Record<string, string>): { status: number | null; stdout: string } =>
      spawnSync('sh', argv.slice(1), {
        env: { PATH: process.env['PATH'] ?? '', AIEM_SANDBOX_ROOT: '/root-dir', ...env },
        encoding: 'utf8',
      });
    expect(run({})).toMatchObject({ status: 7, stdout: "/root-dir|it's|no|" });
    const dir = mkdtempSync(join(tmpdir(), 'enter-'));
    const enter = join(dir, 'enter');
    writeFileSync(enter, '#!/bin/sh\nENTERED=yes exec "$@"\n', { mode: 0o755 });
    try {
      expect(run({ AIEM_SANDBOX_ENTER: enter })).toMatchObject({ status: 7, stdout: "/root-dir|it's|yes|" });
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});
