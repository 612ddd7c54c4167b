/**
 * The FilesystemService against a real sandbox pod: a pod on a simulated node, whose commands the
 * test cluster's sandbox simulator runs on this host in the pod's own directory.
 */
import { lstatSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import express from 'express';
import { CoreV1Api } from '@kubernetes/client-node';
import type { CallContext, Handlers } from '../../gateway/src/call/handler.ts';
import { ApiError } from '../../gateway/src/errors/api-error.ts';
import { Code } from '../../gateway/src/errors/code.ts';
import { FileType, type FileInfo } from '../../gateway/src/gen/ai/h2o/engine/v1/file_info.pb.ts';
import { filesystemService, MAX_FILE_BYTES } from '../../gateway/src/sandbox/filesystem-service.ts';
import { restRouter } from '../../gateway/src/rest/mux.ts';
import { PodExec } from '../../gateway/src/sandbox/pod-exec.ts';
import type { SandboxTarget } from '../../gateway/src/sandbox/target.ts';
import { ENTRIES_DIR } from '../cluster/sandbox-simulator.ts';
import { startSandboxPod } from '../helpers/sandbox-pod.ts';
import { useCluster } from '../helpers/use-cluster.ts';

const cluster = useCluster({ nodes: { cpuNodes: 1, gpuNodes: 0, gpusPerNode: 0 } });
const ENGINE = 'workspaces/w1/sandboxEngines/e1';
const context: CallContext = { caller: { subject: 'users/alice', displayName: 'Alice', roles: [] } };

let fs: Handlers;
let dir: string;
/** The engine names `resolve` was asked about. */
const resolved: string[] = [];

beforeAll(async () => {
  await cluster()
    .kubeConfig.makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: 'fs' } } });
  const pod = await startSandboxPod(cluster(), 'fs', 'box');
  dir = pod.dir;
  const target: SandboxTarget = pod.target;
  fs = filesystemService({
    exec: new PodExec(cluster().kubeConfig),
    resolve: (name) => {
      resolved.push(name);
      return Promise.resolve(target);
    },
  });
}, 120_000);

/** Calls one RPC of the service with the fields of its request message. */
async function call<T>(rpc: string, request: Record<string, unknown>): Promise<T> {
  const handler = fs[`ai.h2o.engine.v1.FilesystemService.${rpc}`];
  if (handler === undefined) throw new Error(`No handler for ${rpc}`);
  return (await handler({ name: ENGINE, ...request }, context)) as T;
}

/** The ApiError an RPC fails with. */
async function failure(rpc: string, request: Record<string, unknown>): Promise<ApiError> {
  const error: unknown = await call(rpc, request).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ApiError)) throw new Error(`${rpc} did not fail with an ApiError: ${String(error)}`);
  return error;
}

const write = (
  path: string,
  content: Uint8Array,
  more: Record<string, unknown> = {},
): Promise<{ fileInfo: FileInfo }> =>
  call('WriteFile', { path, content, createParentDirectories: false, mode: '', ...more });
const read = (path: string): Promise<{ content: Uint8Array; fileInfo: FileInfo }> =>
  call('ReadFile', { path });
const host = (path: string): string => join(dir, path);

/**
 * Every file under the sandboxes' folder that is not inside this pod's root, nor one of the
 * simulator's own entry programs.
 */
function outsideRoot(): string[] {
  const sandboxes = dirname(dirname(dir));
  const found: string[] = [];
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (path === dir || path === join(sandboxes, ENTRIES_DIR)) continue;
      if (entry.isDirectory()) walk(path);
      else found.push(path);
    }
  };
  walk(sandboxes);
  return found;
}

describe('FilesystemService on a sandbox pod', () => {
  test('WriteFile then ReadFile returns the bytes exactly, for text, binary and a file over 1 MiB', async () => {
    const binary = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
    const big = Buffer.alloc(3 * 1024 * 1024 + 7);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 8)) % 256;
    for (const [path, content] of [
      ['/hello.txt', Buffer.from('héllo\nworld\n')],
      ['/bin.dat', binary],
      ['/big.bin', big],
      ['/empty', Buffer.alloc(0)],
    ] as const) {
      const written = await write(path, new Uint8Array(content));
      expect(written.fileInfo).toMatchObject({
        path,
        size: String(content.length),
        type: FileType.FILE_TYPE_REGULAR,
        mode: '0644',
      });
      const back = await read(path);
      expect(Buffer.from(back.content).equals(content)).toBe(true);
      expect(back.fileInfo).toMatchObject({
        path,
        size: String(content.length),
        type: FileType.FILE_TYPE_REGULAR,
      });
      expect(readFileSync(host(path)).equals(content)).toBe(true);
    }
    expect(resolved.every((name) => name === ENGINE)).toBe(true);
  });

  test('WriteFile replaces a file unless overwrite is false, creates parents when asked, and applies the mode', async () => {
    await write('/w/a.txt', Buffer.from('one'), { createParentDirectories: true, mode: '0600' });
    expect(statSync(host('/w/a.txt')).mode & 0o777).toBe(0o600);
    // Replacing keeps the mode unless one is given.
    const replaced = await write('/w/a.txt', Buffer.from('two'), { overwrite: true });
    expect(replaced.fileInfo.mode).toBe('0600');
    expect(readFileSync(host('/w/a.txt'), 'utf8')).toBe('two');
    const refused = await failure('WriteFile', {
      path: '/w/a.txt',
      content: Buffer.from('three'),
      overwrite: false,
    });
    expect(refused.code).toBe(Code.ALREADY_EXISTS);
    expect(readFileSync(host('/w/a.txt'), 'utf8')).toBe('two');
    const noParent = await failure('WriteFile', { path: '/nope/a.txt', content: Buffer.from('x') });
    expect(noParent.code).toBe(Code.NOT_FOUND);
    expect(noParent.message).toMatch(/parent directory/);
    expect((await failure('WriteFile', { path: '/w', content: Buffer.from('x') })).code).toBe(
      Code.FAILED_PRECONDITION,
    );
    expect((await failure('WriteFile', { path: '/w/b', content: Buffer.from('x'), mode: 'rwx' })).code).toBe(
      Code.INVALID_ARGUMENT,
    );
    // No temporary file is left behind.
    expect(readdirSync(host('/w'))).toEqual(['a.txt']);
  });

  test('ListDirectory lists direct children with full paths, links unfollowed; StatFile follows links', async () => {
    await call('MakeDirectory', { path: '/list/sub', createParentDirectories: true });
    await write('/list/file one.txt', Buffer.from('12345'));
    await write('/list/.hidden', Buffer.from('h'));
    await write('/list/sub/deep.txt', Buffer.from('deep'));
    writeFileSync(host('/list/odd\nname'), '');
    const { symlinkSync } = await import('node:fs');
    symlinkSync('file one.txt', host('/list/link'));
    const { files } = await call<{ files: FileInfo[] }>('ListDirectory', { path: '/list/' });
    expect(files.map((f) => [f.path, f.type])).toEqual([
      ['/list/.hidden', FileType.FILE_TYPE_REGULAR],
      ['/list/file one.txt', FileType.FILE_TYPE_REGULAR],
      ['/list/link', FileType.FILE_TYPE_SYMLINK],
      ['/list/odd\nname', FileType.FILE_TYPE_REGULAR],
      ['/list/sub', FileType.FILE_TYPE_DIRECTORY],
    ]);
    const file = files[1]!;
    expect(file.size).toBe('5');
    expect(file.mode).toBe('0644');
    expect(Math.abs(file.modifyTime!.getTime() - Date.now())).toBeLessThan(60_000);
    expect(files[4]!.mode).toBe('0755');

    const stat = await call<{ fileInfo: FileInfo }>('StatFile', { path: '/list/link' });
    expect(stat.fileInfo).toMatchObject({ path: '/list/link', type: FileType.FILE_TYPE_REGULAR, size: '5' });
    expect((await call<{ fileInfo: FileInfo }>('StatFile', { path: '/' })).fileInfo.type).toBe(
      FileType.FILE_TYPE_DIRECTORY,
    );
    expect((await failure('ListDirectory', { path: '/list/file one.txt' })).code).toBe(
      Code.FAILED_PRECONDITION,
    );
    expect((await failure('StatFile', { path: '/list/missing' })).code).toBe(Code.NOT_FOUND);
  });

  test('MakeDirectory creates with 0755, needs parents unless asked, and fails on anything existing', async () => {
    const made = await call<{ fileInfo: FileInfo }>('MakeDirectory', {
      path: '/mk',
      createParentDirectories: false,
    });
    expect(made.fileInfo).toMatchObject({ path: '/mk', type: FileType.FILE_TYPE_DIRECTORY, mode: '0755' });
    expect(lstatSync(host('/mk')).isDirectory()).toBe(true);
    expect((await failure('MakeDirectory', { path: '/mk' })).code).toBe(Code.ALREADY_EXISTS);
    expect((await failure('MakeDirectory', { path: '/mk2/a/b' })).code).toBe(Code.NOT_FOUND);
    await call('MakeDirectory', { path: '/mk2/a/b', createParentDirectories: true });
    expect(statSync(host('/mk2/a/b')).isDirectory()).toBe(true);
  });

  test('Move renames, refuses an existing destination unless overwrite is true, creates parents when asked', async () => {
    await write('/mv-a.txt', Buffer.from('a'));
    await write('/mv-b.txt', Buffer.from('b'));
    const refused = await failure('Move', { sourcePath: '/mv-a.txt', destinationPath: '/mv-b.txt' });
    expect(refused.code).toBe(Code.ALREADY_EXISTS);
    expect(readFileSync(host('/mv-a.txt'), 'utf8')).toBe('a');
    expect(readFileSync(host('/mv-b.txt'), 'utf8')).toBe('b');
    const moved = await call<{ fileInfo: FileInfo }>('Move', {
      sourcePath: '/mv-a.txt',
      destinationPath: '/mv-b.txt',
      overwrite: true,
    });
    expect(moved.fileInfo).toMatchObject({ path: '/mv-b.txt', size: '1' });
    expect(readFileSync(host('/mv-b.txt'), 'utf8')).toBe('a');
    await call('Move', {
      sourcePath: '/mv-b.txt',
      destinationPath: '/mv/deep/c.txt',
      createParentDirectories: true,
    });
    expect(readFileSync(host('/mv/deep/c.txt'), 'utf8')).toBe('a');
    // A directory is never moved into an existing directory, nor into itself.
    await call('MakeDirectory', { path: '/mv-dir' });
    expect((await failure('Move', { sourcePath: '/mv', destinationPath: '/mv-dir' })).code).toBe(
      Code.ALREADY_EXISTS,
    );
    expect((await failure('Move', { sourcePath: '/mv', destinationPath: '/mv/deep/x' })).code).toBe(
      Code.INVALID_ARGUMENT,
    );
    expect((await failure('Move', { sourcePath: '/missing', destinationPath: '/x' })).code).toBe(
      Code.NOT_FOUND,
    );
  });

  test('Remove removes files and empty directories, and non-empty ones only when recursive', async () => {
    await write('/rm/a/b.txt', Buffer.from('b'), { createParentDirectories: true });
    const refused = await failure('Remove', { path: '/rm', recursive: false });
    expect(refused.code).toBe(Code.FAILED_PRECONDITION);
    expect(refused.message).toMatch(/not empty/);
    expect(readFileSync(host('/rm/a/b.txt'), 'utf8')).toBe('b');
    await call('Remove', { path: '/rm/a/b.txt' });
    await call('Remove', { path: '/rm/a' });
    await write('/rm/c.txt', Buffer.from('c'));
    await call('Remove', { path: '/rm', recursive: true });
    expect(readdirSync(dir)).not.toContain('rm');
    expect((await failure('Remove', { path: '/rm' })).code).toBe(Code.NOT_FOUND);
    expect((await failure('Remove', { path: '/', recursive: true })).code).toBe(Code.INVALID_ARGUMENT);
  });

  test('a path below a file is FAILED_PRECONDITION naming the field, in every call, with or without createParentDirectories', async () => {
    await write('/plain.txt', Buffer.from('p'));
    await write('/mv-src.txt', Buffer.from('s'));
    const calls: [string, Record<string, unknown>, string][] = [];
    for (const path of ['/plain.txt/x', '/plain.txt/a/b']) {
      for (const createParentDirectories of [false, true]) {
        calls.push(
          ['WriteFile', { path, content: Buffer.from('x'), createParentDirectories }, 'path'],
          ['MakeDirectory', { path, createParentDirectories }, 'path'],
          [
            'Move',
            { sourcePath: '/mv-src.txt', destinationPath: path, createParentDirectories },
            'destination_path',
          ],
        );
      }
      calls.push(
        ['ReadFile', { path }, 'path'],
        ['StatFile', { path }, 'path'],
        ['ListDirectory', { path }, 'path'],
        ['Remove', { path, recursive: true }, 'path'],
        ['Move', { sourcePath: path, destinationPath: '/elsewhere' }, 'source_path'],
      );
    }
    for (const [rpc, request, field] of calls) {
      const error = await failure(rpc, request);
      expect({
        rpc,
        request,
        code: error.code,
        reason: error.reason,
        field: error.violations[0]?.field,
      }).toEqual({ rpc, request, code: Code.FAILED_PRECONDITION, reason: 'NOT_A_DIRECTORY', field });
      expect(error.message).toMatch(/is below a file: a parent in \w+ is not a directory$/);
    }
    expect(readFileSync(host('/plain.txt'), 'utf8')).toBe('p');
    expect(readFileSync(host('/mv-src.txt'), 'utf8')).toBe('s');
    expect(readdirSync(dir)).not.toContain('elsewhere');
  });

  test('paths that leave the root, relative paths and NUL bytes are refused before anything runs', async () => {
    const before = resolved.length;
    for (const path of [
      '../../etc/passwd',
      '/../../etc/passwd',
      '/a/../../x',
      'relative',
      '',
      '/a\0b',
      `/${'x'.repeat(5000)}`,
    ]) {
      const error = await failure('WriteFile', { path, content: Buffer.from('owned') });
      expect(error.code).toBe(Code.INVALID_ARGUMENT);
      expect(error.violations[0]?.field).toBe('path');
    }
    const move = await failure('Move', { sourcePath: '/hello.txt', destinationPath: '/../outside' });
    expect(move.violations[0]?.field).toBe('destination_path');
    expect(resolved.length).toBe(before);
    expect(outsideRoot()).toEqual([]);
  });

  test('an oversized write is refused naming content, and writes nothing', async () => {
    const error = await failure('WriteFile', {
      path: '/too-big',
      content: new Uint8Array(MAX_FILE_BYTES + 1),
    });
    expect(error.code).toBe(Code.INVALID_ARGUMENT);
    expect(error.violations[0]?.field).toBe('content');
    expect(error.message).toMatch(/limit of 33554432 bytes/);
    expect(readdirSync(dir)).not.toContain('too-big');
  });

  test('reading a missing file is NOT_FOUND, a directory FAILED_PRECONDITION, an oversized file refused', async () => {
    const missing = await failure('ReadFile', { path: '/missing.txt' });
    expect(missing.code).toBe(Code.NOT_FOUND);
    expect(missing.message).toBe('Cannot read "/missing.txt": no such file or directory');
    expect((await failure('ReadFile', { path: '/' })).code).toBe(Code.FAILED_PRECONDITION);
    const { truncateSync } = await import('node:fs');
    writeFileSync(host('/huge'), '');
    truncateSync(host('/huge'), MAX_FILE_BYTES + 1);
    const huge = await failure('ReadFile', { path: '/huge' });
    expect(huge.code).toBe(Code.FAILED_PRECONDITION);
    expect(huge.message).toMatch(/33554433 bytes, more than the limit/);
  });

  test('a directory the sandbox user may not write to fails the write with FAILED_PRECONDITION, not a 500', async () => {
    const { mkdirSync } = await import('node:fs');
    // Owned by root here, as a read-only mount would be in a container.
    mkdirSync(host('/locked'), { mode: 0o555 });
    const error = await failure('WriteFile', { path: '/locked/a.txt', content: Buffer.from('x') });
    expect(error).toMatchObject({ code: Code.FAILED_PRECONDITION, reason: 'PERMISSION_DENIED' });
    expect(error.message).toBe('Cannot write "/locked/a.txt": permission denied in the sandbox');
    expect(readdirSync(host('/locked'))).toEqual([]);
  });

  test('a large write refused before its bytes are read answers why, every time, never UNAVAILABLE', async () => {
    // The command fails at once, while the megabyte is still arriving on its input.
    const big = Buffer.alloc(2 * 1024 * 1024, 7);
    for (let i = 0; i < 10; i++) {
      const error = await failure('WriteFile', {
        path: '/no/such/parent/f.bin',
        content: big,
        createParentDirectories: false,
      });
      expect({ code: error.code, message: error.message }).toEqual({
        code: Code.NOT_FOUND,
        message: expect.stringContaining('parent directory does not exist') as unknown,
      });
    }
  });

  test('over REST, a write or a new folder below a file is a 400 naming path, with or without createParentDirectories', async () => {
    await write('/rest-file.txt', Buffer.from('r'));
    const app = express();
    app.use(
      '/',
      restRouter(fs, () => Promise.resolve(context.caller)),
    );
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/workspaces%2Fw1%2FsandboxEngines%2Fe1`;
    try {
      for (const createParentDirectories of [false, true]) {
        for (const [verb, body] of [
          [
            'writeFile',
            { path: '/rest-file.txt/x', content: 'aGk=', createParentDirectories, overwrite: null },
          ],
          ['makeDirectory', { path: '/rest-file.txt/x', createParentDirectories }],
        ] as const) {
          const response = await fetch(`${base}/filesystem:${verb}`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify(body),
          });
          const answer = (await response.json()) as { code: number; details: Record<string, unknown>[] };
          expect({ verb, createParentDirectories, status: response.status, code: answer.code }).toEqual({
            verb,
            createParentDirectories,
            status: 400,
            code: Code.FAILED_PRECONDITION,
          });
          expect(JSON.stringify(answer.details)).toContain('"field":"path"');
        }
      }
    } finally {
      server.close();
    }
  });

  test("nothing was written outside the pod's root", () => {
    expect(outsideRoot()).toEqual([]);
    expect(() => statSync('/hello.txt')).toThrow();
    expect(() => statSync('/w/a.txt')).toThrow();
  });
});
