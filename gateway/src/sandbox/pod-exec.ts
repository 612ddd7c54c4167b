/**
 * Commands in a pod's container through the apiserver's `pods/exec` subresource (a websocket,
 * `v5.channel.k8s.io` when the apiserver offers it): the gateway needs `create` and `get` on
 * pods/exec and never reaches a node itself. On the local test cluster, kwok serves the exec and
 * runs the command on the host (see test/cluster/sandbox-simulator.ts), which shapes two rules
 * here: stdin is never closed on the command's side, and exit codes come back as text.
 *
 * The command's input is sent here, not by client-node ({@link sendInput}): a command may end
 * before its input has all been sent, and its exit status must survive that.
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

/** stdin's channel: the first byte of each frame of the command's input (`channel.k8s.io` protocols). */
const STDIN_CHANNEL = 0;
/** v5 only: a frame on it names a channel that has ended (for stdin, the command's end of file). */
const CLOSE_CHANNEL = 255;
/** The protocol that can say stdin ended; v4, which cannot, is all an apiserver before 1.30 speaks. */
const V5_PROTOCOL = 'v5.channel.k8s.io';
/** The `readyState` of an open websocket (the `ws` package's `WebSocket.OPEN`). */
const OPEN = 1;

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
        options.stdin === undefined ? null : silentInput(),
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
    // Should sending throw (it is not expected to), the call ends as a broken exec, not the process.
    if (options.stdin !== undefined) {
      sendInput(socket, options.stdin).catch(() => {
        socket.close();
      });
    }
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
  /** The subprotocol the server chose (`v5.channel.k8s.io`, `v4.channel.k8s.io`…). */
  readonly protocol: string;
  readonly readyState: number;
  on(event: 'close', listener: () => void): unknown;
  /** Sends `data` as one binary message; `callback` runs once it is written out, or failed. */
  send(data: Buffer, callback: (error?: Error) => void): void;
  close(): void;
}

function isExecSocket(value: unknown): value is ExecSocket {
  return typeof value === 'object' && value !== null && hasSocketState(value) && hasSocketMethods(value);
}

function hasSocketState(value: object): boolean {
  return (
    'protocol' in value &&
    typeof value.protocol === 'string' &&
    'readyState' in value &&
    typeof value.readyState === 'number'
  );
}

function hasSocketMethods(value: object): boolean {
  return (
    'on' in value &&
    typeof value.on === 'function' &&
    'send' in value &&
    typeof value.send === 'function' &&
    'close' in value &&
    typeof value.close === 'function'
  );
}

/**
 * The stdin stream handed to client-node: it never yields, so client-node asks for a stdin channel
 * but sends nothing on it. Its own pump writes every frame at once, and on a v4 connection closes
 * the socket when the input ends, before the command could answer.
 */
function silentInput(): Readable {
  return new Readable({ read: () => undefined });
}

/**
 * Sends `bytes` on the stdin channel and then, on a v5 connection, that stdin has ended; a v4
 * connection cannot say it, which is why commands read exact byte counts. Stops as soon as the
 * connection is no longer open (the status arrived, the call was aborted, the connection broke).
 *
 * Why one frame at a time: a command may end before its input is all sent (a write refused at
 * once), and its status and the end of the connection then wait unread on the socket. A first
 * write to that closed connection succeeds and draws a reset; a second one fails with EPIPE, and
 * Node then destroys the socket without reading what arrived before: the status is lost and the
 * call reports an unreachable sandbox. So each frame waits until the one before was written and
 * the event loop has read the socket since ({@link polled}): a status that came is read first.
 */
async function sendInput(socket: ExecSocket, bytes: Uint8Array): Promise<void> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at < buffer.length; at += STDIN_CHUNK_BYTES) {
    const chunk = buffer.subarray(at, at + STDIN_CHUNK_BYTES);
    if (!(await sendFrame(socket, STDIN_CHANNEL, chunk))) return;
  }
  if (socket.protocol === V5_PROTOCOL) await sendFrame(socket, CLOSE_CHANNEL, Buffer.of(STDIN_CHANNEL));
}

/**
 * Sends `payload` on `channel` if the socket is still open, and resolves once it is written and
 * the event loop has polled since.
 *
 * @returns whether the frame was sent
 */
async function sendFrame(socket: ExecSocket, channel: number, payload: Buffer): Promise<boolean> {
  if (socket.readyState !== OPEN) return false;
  await new Promise<void>((resolve) => {
    // A failed write needs no handling here: the socket is then no longer open, which stops the
    // input, and `run` learns of the end of the connection by its close event.
    socket.send(Buffer.concat([Buffer.of(channel), payload]), () => {
      resolve();
    });
  });
  await polled();
  return true;
}

/**
 * Resolves after the event loop has polled for I/O at least once since the call. A setImmediate
 * callback runs just after a poll phase, but one set during a poll phase (where socket callbacks
 * run) runs after that same poll: only the second of two is sure to follow a poll begun later.
 */
function polled(): Promise<void> {
  return new Promise((resolve) =>
    setImmediate(() => {
      setImmediate(resolve);
    }),
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
