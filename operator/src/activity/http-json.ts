/**
 * A GET of a JSON answer from an engine's pod, bounded so that a probe can never hold a
 * reconcile: a short wait for the connection (an address no one serves — a pod on a simulated
 * node, a node gone — fails fast instead of waiting for TCP to give up), a limit on the whole
 * exchange, and a limit on the answer's size. Every way it can go wrong is one
 * {@link ProbeFailure} with a readable reason.
 */
import { request } from 'node:http';

/** How long a probe may wait, and how much it reads. */
export interface JsonGetLimits {
  /** Until the TCP connection is open. */
  connectTimeoutMs: number;
  /** Until the whole answer has arrived. */
  timeoutMs: number;
  maxBytes: number;
}

/**
 * Pod addresses answer within milliseconds when anything serves them; a second is far more
 * than a live pod needs to accept a connection. Five seconds for the answer: Jupyter and H2O
 * answer these calls from memory.
 */
export const PROBE_LIMITS: JsonGetLimits = {
  connectTimeoutMs: 1000,
  timeoutMs: 5000,
  maxBytes: 8 * 1024 * 1024,
};

/** Why a probe's GET gave no answer to read. */
export class ProbeFailure extends Error {
  override name = 'ProbeFailure';
  /**
   * The HTTP status when the engine answered but refused (not 2xx): something serves the pod,
   * and it says no — unlike an address no one serves.
   */
  readonly status: number | undefined;
  constructor(reason: string, status?: number) {
    super(reason);
    this.status = status;
  }
}

/** The parsed JSON body of a 2xx answer to `GET url`; a {@link ProbeFailure} otherwise. */
export function getJson(url: string, limits: JsonGetLimits = PROBE_LIMITS): Promise<unknown> {
  return new Promise((resolve, reject) => {
    // A fresh connection each time: probes are rare, and a pooled socket to a pod that has
    // since gone would only fail later.
    const req = request(url, { agent: false, headers: { accept: 'application/json' } });
    const timers: NodeJS.Timeout[] = [];
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      timers.forEach(clearTimeout);
      outcome();
    };
    const fail = (reason: string, status?: number): void => {
      settle(() => {
        reject(new ProbeFailure(reason, status));
      });
      req.destroy();
    };
    timers.push(
      setTimeout(() => {
        fail(`no answer within ${limits.timeoutMs} ms`);
      }, limits.timeoutMs),
    );
    req.on('socket', (socket) => {
      const connecting = setTimeout(() => {
        fail(`no connection within ${limits.connectTimeoutMs} ms`);
      }, limits.connectTimeoutMs);
      timers.push(connecting);
      socket.once('connect', () => {
        clearTimeout(connecting);
      });
    });
    req.on('error', (error: unknown) => {
      fail(messageOf(error));
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299) {
        fail(`answered HTTP ${status}`, status);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.maxBytes) fail(`answered more than ${limits.maxBytes} bytes`);
        else chunks.push(chunk);
      });
      res.on('end', () => {
        settle(() => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
          } catch (error: unknown) {
            reject(new ProbeFailure(`answered malformed JSON: ${messageOf(error)}`));
          }
        });
      });
      res.on('error', (error: unknown) => {
        fail(messageOf(error));
      });
      res.on('close', () => {
        fail('closed the connection before the answer ended');
      });
    });
    req.end();
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
