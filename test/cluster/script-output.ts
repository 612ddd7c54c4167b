import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Runs a build script of the harness and returns a reader of the `KEY=value` lines it prints
 * (where it left what it built); a key it did not print is an error naming the script.
 */
export async function runBuildScript(
  script: string,
  args: readonly string[],
  timeoutMs = 60 * 60 * 1000,
): Promise<(key: string) => string> {
  const { stdout } = await promisify(execFile)('bash', [script, ...args], {
    maxBuffer: 16 * 1024 * 1024,
    timeout: timeoutMs,
  });
  const values = new Map(
    stdout
      .split('\n')
      .map((line) => /^([A-Z0-9_]+)=(.+)$/.exec(line))
      .filter((match): match is RegExpExecArray => match !== null)
      .map((match) => [match[1], match[2]] as const),
  );
  return (key: string): string => {
    const value = values.get(key);
    if (value === undefined) throw new Error(`${script} did not report ${key}`);
    return value;
  };
}
