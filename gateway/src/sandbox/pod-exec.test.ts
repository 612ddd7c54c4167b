import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { exitCodeOf, PodExec, PodExecError, sandboxScript } from './pod-exec.ts';

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

describe('PodExec.run() against a kubelet exec endpoint', () => {
  afterEach(async () => {
    await Promise.all(closeAfterTest.splice(0).map((close) => close()));
  });

  /** A NonZeroExitCode status, as a kubelet reports exit code 1. */
  const EXIT_1 = {
    status: 'Failure',
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: '1' }] },
  };

  test.each([
    ['one byte', 1],
    ['three frames', 150 * 1024],
  ])(
    'a command that ended before its input (%s) was sent still reports its exit code, not an unreachable sandbox',
    async (_name, size) => {
      // The order a write refused at once produces under load: the command's output comes with
      // the 101; its status, a close frame and the end of the connection follow before the
      // gateway has sent any input, and wait unread while it writes to the closed connection
      // (where a second write in a row fails with EPIPE, and Node destroys the socket).
      const endpoint = await execEndpoint(V5, (connection) => {
        connection.send(STDOUT, 'refused');
      });
      const stdout: string[] = [];
      const code = await endpoint.exec.run(TARGET, ['sh'], {
        stdin: Buffer.alloc(size, 7),
        onStdout: (chunk) => {
          stdout.push(chunk.toString());
          endpoint.connection().end(EXIT_1);
        },
      });
      expect({ code, stdout }).toEqual({ code: 1, stdout: ['refused'] });
    },
  );

  test('on v5, the input arrives whole, in frames of 64 KiB, and then its end', async () => {
    const input = Buffer.alloc(150 * 1024 + 3);
    for (let i = 0; i < input.length; i++) input[i] = (i * 7) % 256;
    const endpoint = await execEndpoint(V5, (connection) => {
      connection.onMessage(({ payload }) => {
        if (payload[0] === CLOSE_CHANNEL && payload[1] === STDIN) connection.end({ status: 'Success' });
      });
    });
    expect(await endpoint.exec.run(TARGET, ['sh'], { stdin: input })).toBe(0);
    const messages = endpoint.connection().received;
    expect(messages.map((m) => [m.opcode, m.payload[0], m.payload.length - 1])).toEqual([
      [BINARY, STDIN, 64 * 1024],
      [BINARY, STDIN, 64 * 1024],
      [BINARY, STDIN, 22 * 1024 + 3],
      [BINARY, CLOSE_CHANNEL, 1],
    ]);
    expect(Buffer.concat(messages.slice(0, 3).map((m) => m.payload.subarray(1))).equals(input)).toBe(true);
  });

  test('on v4, which cannot say that the input ended, the connection stays open after it until the status', async () => {
    // The command ends one round trip after its input has arrived (a ping answered), by when a
    // client that closed the connection after its input has said so; the exec then ends with
    // the connection, without a status, as a kubelet's does.
    const endpoint = await execEndpoint(V4, (connection) => {
      let received = 0;
      connection.onMessage(({ opcode, payload }) => {
        if (opcode === BINARY && payload[0] === STDIN) received += payload.length - 1;
        if (opcode === BINARY && received === 5) connection.ping();
        if (opcode === PONG) connection.end(EXIT_1);
        if (opcode === CLOSE_FRAME) connection.destroy();
      });
    });
    expect(await endpoint.exec.run(TARGET, ['sh'], { stdin: Buffer.from('hello') })).toBe(1);
  });
});

/** The endpoints a test started, stopped after it. */
const closeAfterTest: (() => Promise<void>)[] = [];
const TARGET = { namespace: 'ns', pod: 'p1', container: 'c' };
const V5 = 'v5.channel.k8s.io';
const V4 = 'v4.channel.k8s.io';
/** Channels: the first byte of a binary message. */
const STDIN = 0;
const STDOUT = 1;
const STATUS = 3;
const CLOSE_CHANNEL = 255;
/** Websocket opcodes (RFC 6455). */
const BINARY = 0x2;
const CLOSE_FRAME = 0x8;
const PING = 0x9;
const PONG = 0xa;

/** A message of a websocket. */
interface Message {
  opcode: number;
  payload: Buffer;
}

/** The server side of one exec connection. */
interface ExecConnection {
  /** The client's messages so far. */
  readonly received: Message[];
  /** Calls `listener` with each message from the client from now on. */
  onMessage(listener: (message: Message) => void): void;
  /** Sends `data` on an output channel. */
  send(channel: number, data: string): void;
  ping(): void;
  /**
   * Ends the exec as an apiserver does: the status, a close frame, and the connection closed at
   * once (each written before this returns), without waiting for the client's close frame.
   */
  end(status: object): void;
  /** Closes the connection without a word. */
  destroy(): void;
}

/**
 * An in-process HTTP server that accepts pods/exec websocket upgrades, choosing `protocol`, and
 * hands the connection to `onOpen` (its 101 response and whatever `onOpen` sends leave in one
 * write); with a PodExec whose kubeconfig points at it.
 */
async function execEndpoint(
  protocol: string,
  onOpen: (connection: ExecConnection) => void,
): Promise<{ exec: PodExec; connection: () => ExecConnection }> {
  let opened: ExecConnection | undefined;
  const server = createServer();
  server.on('upgrade', (request: IncomingMessage, socket: Socket) => {
    const offered = String(request.headers['sec-websocket-protocol']).split(/,\s*/);
    const key = String(request.headers['sec-websocket-key']);
    const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    socket.cork();
    socket.write(
      [
        'HTTP/1.1 101 Switching Protocols',
        'Upgrade: websocket',
        'Connection: Upgrade',
        `Sec-WebSocket-Accept: ${accept}`,
        `Sec-WebSocket-Protocol: ${offered.includes(protocol) ? protocol : ''}`,
        '',
        '',
      ].join('\r\n'),
    );
    opened = serverConnection(socket);
    onOpen(opened);
    socket.uncork();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closeAfterTest.push(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });
  const { port } = server.address() as AddressInfo;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    // client-node refuses plain http unless TLS verification is off (there is no TLS to verify).
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return {
    exec: new PodExec(kubeConfig),
    connection: () => {
      if (opened === undefined) throw new Error('No exec connection was opened');
      return opened;
    },
  };
}

/** The server's side of the websocket framing (RFC 6455) on `socket`: whole, short messages. */
function serverConnection(socket: Socket): ExecConnection {
  const received: Message[] = [];
  const listeners: ((message: Message) => void)[] = [];
  let pending = Buffer.alloc(0);
  /** The next message from the client (whose frames are always masked) once it has all arrived. */
  const take = (): Message | undefined => {
    if (pending.length < 2) return undefined;
    const short = (pending[1] ?? 0) & 0x7f;
    const maskAt = 2 + (short === 126 ? 2 : short === 127 ? 8 : 0);
    if (pending.length < maskAt + 4) return undefined;
    const length =
      short === 126 ? pending.readUInt16BE(2) : short === 127 ? Number(pending.readBigUInt64BE(2)) : short;
    const end = maskAt + 4 + length;
    if (pending.length < end) return undefined;
    const mask = pending.subarray(maskAt, maskAt + 4);
    const payload = Buffer.from(pending.subarray(maskAt + 4, end));
    for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] ?? 0) ^ (mask[i % 4] ?? 0);
    const message = { opcode: (pending[0] ?? 0) & 0x0f, payload };
    pending = pending.subarray(end);
    return message;
  };
  socket.on('data', (data: Buffer) => {
    pending = Buffer.concat([pending, data]);
    for (let message = take(); message !== undefined; message = take()) {
      received.push(message);
      for (const listener of listeners) listener(message);
    }
  });
  // The client may write to the connection after it was closed here.
  socket.on('error', () => undefined);
  const write = (opcode: number, payload: Buffer): void => {
    if (payload.length > 125) throw new Error('Only short messages are sent here');
    socket.write(Buffer.concat([Buffer.of(0x80 | opcode, payload.length), payload]));
  };
  return {
    received,
    onMessage: (listener) => {
      listeners.push(listener);
    },
    send: (channel, data) => {
      write(BINARY, Buffer.concat([Buffer.of(channel), Buffer.from(data)]));
    },
    ping: () => {
      write(PING, Buffer.alloc(0));
    },
    end: (status) => {
      write(BINARY, Buffer.concat([Buffer.of(STATUS), Buffer.from(JSON.stringify(status))]));
      write(CLOSE_FRAME, Buffer.of(0x03, 0xe8));
      socket.destroy();
    },
    destroy: () => {
      socket.destroy();
    },
  };
}
