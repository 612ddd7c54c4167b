/**
 * ai.h2o.engine.v1.FilesystemService: files of a running sandbox engine, read and written through
 * commands in its container (pods/exec, see pod-exec.ts and filesystem-scripts.ts). Each RPC
 * validates its paths (sandbox-path.ts), asks `resolve` whether the caller may use the engine and
 * where it runs, runs one script, and turns the output into the response or an ApiError.
 *
 * Files travel whole, in one message: {@link MAX_FILE_BYTES} bounds reads and writes.
 */
import type { CallContext, Handlers } from '../call/handler.ts';
import { serviceHandlers } from '../call/service-impl.ts';
import { ApiError, invalidArgument } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import type { FileInfo } from '../gen/ai/h2o/engine/v1/file_info.pb.ts';
import {
  FilesystemServiceService,
  type ListDirectoryRequest,
  type MakeDirectoryRequest,
  type MoveRequest,
  type ReadFileRequest,
  type RemoveRequest,
  type StatFileRequest,
  type WriteFileRequest,
} from '../gen/ai/h2o/engine/v1/filesystem_service.pb.ts';
import { fileMode, parseListing, parseStat } from './file-info.ts';
import {
  failureOf,
  FS_EXIT,
  LIST_DIRECTORY,
  MAKE_DIRECTORY,
  MOVE,
  READ_FILE,
  REMOVE,
  STAT_FILE,
  WRITE_FILE,
  type FailedAction,
} from './filesystem-scripts.ts';
import { PodExecError, sandboxScript, type PodExec } from './pod-exec.ts';
import { isWithin, sandboxPath } from './sandbox-path.ts';
import type { ResolveSandbox, SandboxTarget } from './target.ts';

/**
 * The largest file ReadFile returns and WriteFile takes: 32 MiB. Warning: the transports must
 * carry it: about 43 MiB of base64 in a REST body, and more than gRPC's default 4 MiB message.
 */
export const MAX_FILE_BYTES = 32 * 1024 * 1024;
/**
 * The largest message of a file read or write: such a file in base64, with room for the other
 * fields. The REST body of a write and gRPC messages are allowed this much.
 */
export const MAX_FILE_MESSAGE_BYTES = Math.ceil(MAX_FILE_BYTES / 3) * 4 + 64 * 1024;
/** How long one filesystem command may take before the call fails with DEADLINE_EXCEEDED. */
export const FILESYSTEM_TIMEOUT_MS = 120_000;
/** How much of a command's stderr is kept to explain a failure. */
const MAX_STDERR_BYTES = 16 * 1024;

/** What the FilesystemService needs. */
export interface FilesystemDeps {
  exec: PodExec;
  resolve: ResolveSandbox;
}

/** The seven RPCs of the FilesystemService. */
export function filesystemService(deps: FilesystemDeps): Handlers {
  return serviceHandlers(FilesystemServiceService, {
    readFile: (request, context) => readFile(deps, request, context),
    writeFile: (request, context) => writeFile(deps, request, context),
    remove: (request, context) => remove(deps, request, context),
    move: (request, context) => move(deps, request, context),
    listDirectory: (request, context) => listDirectory(deps, request, context),
    statFile: (request, context) => statFile(deps, request, context),
    makeDirectory: (request, context) => makeDirectory(deps, request, context),
  });
}

async function readFile(
  deps: FilesystemDeps,
  request: ReadFileRequest,
  context: CallContext,
): Promise<{ content: Buffer; fileInfo: FileInfo }> {
  const path = sandboxPath('path', request.path);
  const target = await deps.resolve(request.name, context);
  const action = { verb: 'read', path };
  const result = await run(deps, target, {
    script: READ_FILE,
    args: [path, String(MAX_FILE_BYTES)],
    maxStdout: MAX_FILE_BYTES + 4096,
  });
  const newline = result.stdout.indexOf(0x0a);
  const info = newline < 0 ? undefined : parseStat(path, result.stdout.subarray(0, newline).toString());
  if (
    result.exitCode === FS_EXIT.TOO_LARGE ||
    (info !== undefined && result.stdout.length - newline - 1 > MAX_FILE_BYTES)
  ) {
    throw tooLargeToRead(path, info?.size);
  }
  if (result.exitCode !== 0 || info === undefined) throw failureOf(action, result.exitCode, result.stderr);
  const content = result.stdout.subarray(newline + 1);
  return { content, fileInfo: { ...info, size: String(content.length) } };
}

function tooLargeToRead(path: string, size: string | undefined): ApiError {
  const what = size === undefined ? 'the file' : `the file has ${size} bytes,`;
  return new ApiError(
    Code.FAILED_PRECONDITION,
    `Cannot read "${path}": ${what} more than the limit of ${MAX_FILE_BYTES} bytes (32 MiB)`,
    { reason: 'FILE_TOO_LARGE' },
  );
}

async function writeFile(
  deps: FilesystemDeps,
  request: WriteFileRequest,
  context: CallContext,
): Promise<{ fileInfo: FileInfo }> {
  const path = sandboxPath('path', request.path);
  if (path === '/') throw invalidArgument('path', 'must name a file, not the sandbox root "/"');
  const content = bytesOf(request.content);
  if (content.length > MAX_FILE_BYTES) {
    throw invalidArgument(
      'content',
      `is ${content.length} bytes, more than the limit of ${MAX_FILE_BYTES} bytes (32 MiB)`,
    );
  }
  const mode = fileMode(typeof request.mode === 'string' ? request.mode : '');
  const target = await deps.resolve(request.name, context);
  // Unset and true replace an existing file; only an explicit false creates only.
  const createOnly = request.overwrite === false ? '1' : '0';
  const args = [path, String(content.length), createOnly, flag(request.createParentDirectories), mode ?? ''];
  const result = await run(deps, target, {
    script: WRITE_FILE,
    args,
    ...(content.length > 0 ? { stdin: content } : {}),
  });
  return { fileInfo: statResult({ verb: 'write', path }, result) };
}

async function remove(deps: FilesystemDeps, request: RemoveRequest, context: CallContext): Promise<object> {
  const path = sandboxPath('path', request.path);
  if (path === '/') throw invalidArgument('path', 'must not be the sandbox root "/"');
  const target = await deps.resolve(request.name, context);
  const result = await run(deps, target, { script: REMOVE, args: [path, flag(request.recursive)] });
  if (result.exitCode !== 0) throw failureOf({ verb: 'remove', path }, result.exitCode, result.stderr);
  return {};
}

async function move(
  deps: FilesystemDeps,
  request: MoveRequest,
  context: CallContext,
): Promise<{ fileInfo: FileInfo }> {
  const source = sandboxPath('source_path', request.sourcePath);
  const destination = sandboxPath('destination_path', request.destinationPath);
  if (source === '/') throw invalidArgument('source_path', 'must not be the sandbox root "/"');
  if (isWithin(destination, source)) {
    throw invalidArgument('destination_path', `"${destination}" is "${source}" itself or inside it`);
  }
  const target = await deps.resolve(request.name, context);
  // Only an explicit true replaces an existing destination.
  const args = [
    source,
    destination,
    request.overwrite === true ? '1' : '0',
    flag(request.createParentDirectories),
  ];
  const result = await run(deps, target, { script: MOVE, args });
  const action = { verb: 'move', path: source, field: 'source_path', destination };
  return { fileInfo: statResult(action, result, destination) };
}

async function listDirectory(
  deps: FilesystemDeps,
  request: ListDirectoryRequest,
  context: CallContext,
): Promise<{ files: FileInfo[] }> {
  const path = sandboxPath('path', request.path);
  const target = await deps.resolve(request.name, context);
  const result = await run(deps, target, { script: LIST_DIRECTORY, args: [path] });
  if (result.exitCode !== 0) throw failureOf({ verb: 'list', path }, result.exitCode, result.stderr);
  return { files: parseListing(path, result.stdout) };
}

async function statFile(
  deps: FilesystemDeps,
  request: StatFileRequest,
  context: CallContext,
): Promise<{ fileInfo: FileInfo }> {
  const path = sandboxPath('path', request.path);
  const target = await deps.resolve(request.name, context);
  const result = await run(deps, target, { script: STAT_FILE, args: [path] });
  return { fileInfo: statResult({ verb: 'stat', path }, result) };
}

async function makeDirectory(
  deps: FilesystemDeps,
  request: MakeDirectoryRequest,
  context: CallContext,
): Promise<{ fileInfo: FileInfo }> {
  const path = sandboxPath('path', request.path);
  const target = await deps.resolve(request.name, context);
  const result = await run(deps, target, {
    script: MAKE_DIRECTORY,
    args: [path, flag(request.createParentDirectories)],
  });
  return { fileInfo: statResult({ verb: 'create directory', path }, result) };
}

/** A script's exit code and output. */
interface ScriptResult {
  exitCode: number;
  stdout: Buffer;
  stderr: string;
}

/** The FileInfo a script printed last, or the failure it reported. */
function statResult(action: FailedAction, result: ScriptResult, path = action.path): FileInfo {
  if (result.exitCode !== 0) throw failureOf(action, result.exitCode, result.stderr);
  const lines = result.stdout.toString().trimEnd().split('\n');
  return parseStat(path, lines.at(-1) ?? '');
}

/**
 * Runs a filesystem script in the sandbox and collects its output (stdout up to `maxStdout`
 * bytes, which then fails the call).
 *
 * @throws ApiError UNAVAILABLE when the sandbox cannot be reached, DEADLINE_EXCEEDED when the
 *   command takes longer than {@link FILESYSTEM_TIMEOUT_MS}
 */
async function run(
  deps: FilesystemDeps,
  target: SandboxTarget,
  command: { script: string; args: string[]; stdin?: Uint8Array; maxStdout?: number },
): Promise<ScriptResult> {
  const { script, args, ...options } = command;
  const stdout = new Collector(options.maxStdout ?? 16 * 1024 * 1024);
  const stderr = new Collector(MAX_STDERR_BYTES);
  const signal = AbortSignal.timeout(FILESYSTEM_TIMEOUT_MS);
  try {
    const exitCode = await deps.exec.run(target, sandboxScript(script, args), {
      ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
      onStdout: (chunk) => {
        stdout.add(chunk);
      },
      onStderr: (chunk) => {
        stderr.add(chunk);
      },
      signal,
    });
    if (stdout.overflowed) throw new Error(`The command printed more than ${stdout.limit} bytes`);
    return { exitCode, stdout: stdout.bytes(), stderr: stderr.bytes().toString() };
  } catch (error: unknown) {
    throw execFailure(error, signal);
  }
}

function execFailure(error: unknown, signal: AbortSignal): ApiError {
  if (signal.aborted) {
    return new ApiError(
      Code.DEADLINE_EXCEEDED,
      `The sandbox command did not finish within ${FILESYSTEM_TIMEOUT_MS / 1000} s`,
      { cause: error },
    );
  }
  if (error instanceof PodExecError) {
    return new ApiError(Code.UNAVAILABLE, 'The sandbox engine cannot be reached; try again', {
      reason: 'SANDBOX_UNREACHABLE',
      cause: error,
    });
  }
  return ApiError.from(error);
}

/** Chunks up to a byte limit; what comes beyond is dropped and noted. */
class Collector {
  readonly limit: number;
  overflowed = false;
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  add(chunk: Buffer): void {
    const room = this.limit - this.size;
    if (chunk.length > room) this.overflowed = true;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(kept);
    this.size += kept.length;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks, this.size);
  }
}

/** A request's bytes field as a Buffer without copying (JSON and protobuf decode to Uint8Array). */
function bytesOf(value: unknown): Buffer {
  if (value === undefined) return Buffer.alloc(0);
  if (!(value instanceof Uint8Array)) throw invalidArgument('content', 'must be bytes (base64 in JSON)');
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function flag(value: unknown): '1' | '0' {
  return value === true ? '1' : '0';
}
