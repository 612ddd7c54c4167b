import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import type { Caller } from './authorizer.ts';
import { PolicyError } from './policy.ts';
import { watchPolicyFile, type PolicyFile } from './policy-authorizer.ts';

const alice: Caller = { subject: 'users/alice', displayName: 'Alice', roles: ['analyst'] };
const CREATE = 'actions/enginemanager/daiEngines/CREATE';
const grant = (permission: string): string =>
  `grants:\n  - roles: [analyst]\n    workspaces: [w]\n    permissions: [${permission}]\n`;

let folder: string;
let file: PolicyFile | undefined;

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'policy-test-'));
});

afterEach(() => {
  file?.close();
  rmSync(folder, { recursive: true, force: true });
});

async function denied(promise: Promise<void>): Promise<ApiError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ApiError)) throw new Error('expected an ApiError');
  return error;
}

/** Polls until `check` holds, for the file watcher to notice a change. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the condition never held');
}

describe('watchPolicyFile()', () => {
  test('applies the file: allowed calls pass, others are PERMISSION_DENIED naming the permission', async () => {
    const path = join(folder, 'policy.yaml');
    writeFileSync(path, grant(CREATE));
    file = watchPolicyFile(path, { intervalMs: 10 });
    await expect(file.authorizer.check(alice, CREATE, 'w')).resolves.toBeUndefined();
    const error = await denied(file.authorizer.check(alice, CREATE, 'other'));
    expect(error.code).toBe(Code.PERMISSION_DENIED);
    expect(error.message).toBe(`The permission "${CREATE}" on "workspaces/other" is required`);
    const all = await denied(file.authorizer.check(alice, 'actions/enginemanager/engines/LIST_ALL', '-'));
    expect(all.message).toMatch(/on all workspaces is required/);
    expect(await file.authorizer.isAdministrator(alice, 'w')).toBe(false);
  });

  test('refuses to start from a file that is not valid', () => {
    const path = join(folder, 'policy.yaml');
    writeFileSync(path, 'grants: [{roles: [a]}]');
    expect(() => watchPolicyFile(path)).toThrow(PolicyError);
    expect(() => watchPolicyFile(join(folder, 'missing.yaml'))).toThrow(/ENOENT/);
  });

  test('reloads a changed file, and keeps the last good policy when the change is not valid', async () => {
    const path = join(folder, 'policy.yaml');
    writeFileSync(path, grant(CREATE));
    const reloads: unknown[] = [];
    file = watchPolicyFile(path, {
      intervalMs: 10,
      onReload: (error) => {
        reloads.push(error);
      },
    });
    const authorizer = file.authorizer;
    const pause = 'actions/enginemanager/daiEngines/PAUSE';
    writeFileSync(path, grant(pause));
    await eventually(() =>
      authorizer.check(alice, pause, 'w').then(
        () => true,
        () => false,
      ),
    );
    await expect(authorizer.check(alice, CREATE, 'w')).rejects.toThrow(ApiError);

    writeFileSync(path, 'grants: [{roles: [analyst], workspaces: [w], permissions: [misspelt]}]');
    await eventually(() => Promise.resolve(reloads.at(-1) instanceof PolicyError));
    await expect(authorizer.check(alice, pause, 'w')).resolves.toBeUndefined();

    // A file that disappears keeps the policy too, and is reported once.
    rmSync(path);
    await eventually(() => Promise.resolve(String(reloads.at(-1)).includes('ENOENT')));
    const reported = reloads.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(reloads).toHaveLength(reported);
    await expect(authorizer.check(alice, pause, 'w')).resolves.toBeUndefined();

    // A replaced file (as a ConfigMap volume swaps its contents) is noticed too.
    const next = join(folder, 'next.yaml');
    writeFileSync(next, grant(CREATE));
    renameSync(next, path);
    await eventually(() =>
      authorizer.check(alice, CREATE, 'w').then(
        () => true,
        () => false,
      ),
    );
  });
});
