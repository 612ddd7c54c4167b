/**
 * Commands in a pod's container through the apiserver's `pods/exec` subresource (a websocket,
 * `v5.channel.k8s.io` when the apiserver offers it): the gateway needs `create` and `get` on
 * pods/exec and never reaches a node itself. On the local test cluster, kwok serves the exec and
 * runs the command on the host (see test/cluster/sandbox-simulator.ts), which shapes two rules
 * here: stdin is never closed on the command's side, and exit codes come back as text.
 */
import { Readable, Writable } from 'node:stream';
import { Exec, type KubeConfig, type V1Status } from '@kubernetes/client-node';
import type { SandboxTarget } from './target.ts';

/** What {@link PodExec.run} sends and where the output goes. */
export interface ExecOptions {
  /**
   * Bytes for the command's stdin. Warning: kwok never closes stdin, so a command that reads
   * it must read an exact byte count (`head -c N`), never up to end of file.
   */
  stdin?: Uint8Array;
  /** Each stdout chunk, as it arrives. */
  onStdout?: (chunk: Buffer) => void;
  /** Each stderr chunk, as it arrives. */
  onStderr?: (chunk: Buffer) => void;
  /**
   * Ends the call: the connection is closed and `run` rejects with the signal's reason.
   * Warning: the command itself may go on running (containerd and kwok both let it).
   */
  signal?: AbortSignal;
}

/** The exec could not run the command, or ended without saying how the command exited. */
export class PodExecError extends Error {
  override name = 'PodExecError';
}

/** stdin travels in frames of this size: one 32 MiB websocket frame would be held whole twice. */
const STDIN_CHUNK_BYTES = 64 * 1024;

/** How long a closed socket may still deliver the status and output it received before closing. */
const CLOSE_GRACE_MS = 200;

/** Exit statuses of signals by the names Go's os/exec prints them in (`signal: terminated`). */
const SIGNALS: Readonly<Record<string, number>> = {
  hangup: 1,
  interrupt: 2,
  quit: 3,
  aborted: 6,
  killed: 9,
  'segmentation fault': 11,
  'broken pipe': 13,
  'alarm clock': 14,
  terminated: 15,
  'user defined signal 1': 10,
  'user defined signal 2': 12,
};

/**
 * The exit code a pods/exec status frame reports, as a shell would (128 + N for signal N).
 * A kubelet sends `Success`, or `reason: NonZeroExitCode` with the code in
 * `details.causes[{reason: 'ExitCode', message: '3'}]`; kwok sends only a `Failure` whose message
 * ends in Go's `exit status 3` or `signal: terminated`.
 *
 * @throws PodExecError when the status reports no exit (the exec itself failed)
 */
export function exitCodeOf(status: V1Status): number {
  if (status.status === 'Success') return 0;
  const code = kubeletExitCode(status) ?? goExitCode(status.message ?? '');
  if (code !== undefined) return code;
  throw new PodExecError(`The exec failed: ${status.message ?? status.reason ?? 'no message'}`);
}

/** A kubelet's `NonZeroExitCode` cause. */
function kubeletExitCode(status: V1Status): number | undefined {
  if (status.reason !== 'NonZeroExitCode') return undefined;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  return cause?.message !== undefined && /^\d+$/.test(cause.message) ? Number(cause.message) : undefined;
}

/** The code in Go's `*exec.ExitError` text at the end of a message, as kwok passes it on. */
function goExitCode(message: string): number | undefined {
  const exit = /exit status (\d+)\s*$/.exec(message);
  if (exit?.[1] !== undefined) return Number(exit[1]);
  const signal = /signal: ([a-z0-9 ]+?)\s*$/.exec(message)?.[1];
  const number = signal === undefined ? undefined : SIGNALS[signal];
  return number === undefined ? undefined : 128 + number;
}

/**
 * The argv that runs `script` with `sh`, with `args` as `$1`, `$2`…: nothing the caller passes is
 * ever parsed by a shell. The script starts with `R` set to `$AIEM_SANDBOX_ROOT`, empty in a real
 * pod (the container is the confinement) and the pod's own directory on the local test cluster,
 * where commands run on the host; scripts must name every path as `"$R$1"`.
 *
 * There, commands start with the host's environment and in the node simulator's process group,
 * which a container's never would: `$AIEM_SANDBOX_ENTER` (unset in a real pod) then names a
 * program that runs the same script again with the pod's environment, in a process group of its
 * own (test/cluster/sandbox-simulator.ts). It is not in the environment it gives, so this happens
 * once.
 */
export function sandboxScript(script: string, args: readonly string[]): string[] {
  const body = `R="\${AIEM_SANDBOX_ROOT:-}"\n${script}`;
  const enter = `[ -z "\${AIEM_SANDBOX_ENTER:-}" ] || exec "$AIEM_SANDBOX_ENTER" sh -c ${quoted(body)} sh "$@"\n`;
  return ['sh', '-c', `${enter}${body}`, 'sh', ...args];
}

/** `text` as one single-quoted shell word. */
function quoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Runs commands in pods' containers through the apiserver's pods/exec. */
export class PodExec {
  private readonly exec: Exec;

  constructor(kubeConfig: KubeConfig) {
    this.exec = new Exec(kubeConfig);
  }

  /**
   * Runs `argv` in the target container and resolves with its exit code once the command has
   * ended and all its output was delivered.
   *
   * @throws PodExecError when the exec cannot be opened (no such pod or container, no
   *   permission, the node unreachable) or ends without an exit status
   */
  async run(target: SandboxTarget, argv: readonly string[], options: ExecOptions = {}): Promise<number> {
    const { signal } = options;
    signal?.throwIfAborted();
    const stdout = sink(options.onStdout);
    const stderr = sink(options.onStderr);
    let settleStatus: (status: V1Status) => void = () => undefined;
    const status = new Promise<V1Status>((resolve) => (settleStatus = resolve));
    // client-node types the socket with `ws`, whose types it does not export: checked here.
    const socket: unknown = await this.exec
      .exec(
        target.namespace,
        target.pod,
        target.container,
        [...argv],
        stdout.stream,
        stderr.stream,
        options.stdin === undefined ? null : chunked(options.stdin),
        false,
        settleStatus,
      )
      .catch((error: unknown) => {
        throw new PodExecError(`Cannot exec in pod ${target.namespace}/${target.pod}: ${describe(error)}`, {
          cause: error,
        });
      });
    if (!isExecSocket(socket))
      throw new PodExecError(`The exec in pod ${target.namespace}/${target.pod} opened no socket`);
    // The status frame ends both output streams, but their last chunks may still be queued: the
    // code counts once both have finished. A socket that closes without a status (the connection
    // broke) is noticed after a grace period that lets a status already received win.
    const done = Promise.all([status, stdout.finished, stderr.finished]);
    const broken = new Promise<never>((_resolve, reject) => {
      socket.on('close', () => {
        setTimeout(() => {
          reject(
            new PodExecError(
              `The exec in pod ${target.namespace}/${target.pod} ended without an exit status`,
            ),
          );
        }, CLOSE_GRACE_MS);
      });
    });
    const aborted = abortion(signal, () => {
      socket.close();
    });
    try {
      const [final] = await Promise.race([done, broken, aborted.promise]);
      return exitCodeOf(final);
    } finally {
      aborted.dispose();
      socket.close();
    }
  }
}

/** What `run` uses of client-node's websocket (the `ws` package's, whose types are not exported). */
interface ExecSocket {
  on(event: 'close', listener: () => void): unknown;
  close(): void;
}

function isExecSocket(value: unknown): value is ExecSocket {
  return (
    typeof value === 'object' &&
    value !== null &&
    'on' in value &&
    typeof value.on === 'function' &&
    'close' in value &&
    typeof value.close === 'function'
  );
}

/** A Writable that hands each chunk to `onChunk` and tells when it has finished. */
function sink(onChunk: ((chunk: Buffer) => void) | undefined): { stream: Writable; finished: Promise<void> } {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      try {
        onChunk?.(chunk);
        callback();
      } catch (error: unknown) {
        callback(error instanceof Error ? error : new Error(String(error)));
      }
    },
  });
  const finished = new Promise<void>((resolve, reject) => {
    stream.on('finish', resolve);
    stream.on('error', reject);
  });
  return { stream, finished };
}

/** `bytes` as a stream of Buffers (client-node frames only Buffers as binary). */
function chunked(bytes: Uint8Array): Readable {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const chunks: Buffer[] = [];
  for (let at = 0; at < buffer.length; at += STDIN_CHUNK_BYTES) {
    chunks.push(buffer.subarray(at, at + STDIN_CHUNK_BYTES));
  }
  return Readable.from(chunks);
}

/** A promise that rejects when `signal` aborts (after calling `onAbort`), and its clean-up. */
function abortion(
  signal: AbortSignal | undefined,
  onAbort: () => void,
): { promise: Promise<never>; dispose: () => void } {
  if (signal === undefined) return { promise: new Promise<never>(() => undefined), dispose: () => undefined };
  let listener: () => void = () => undefined;
  const promise = new Promise<never>((_resolve, reject) => {
    listener = () => {
      onAbort();
      reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
    };
    signal.addEventListener('abort', listener, { once: true });
  });
  return {
    promise,
    dispose: () => {
      signal.removeEventListener('abort', listener);
    },
  };
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'message' in error) return String(error.message);
  return String(error);
}
