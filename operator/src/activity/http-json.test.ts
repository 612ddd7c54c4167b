import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getJson, ProbeFailure } from './http-json.ts';

const LIMITS = { connectTimeoutMs: 1000, timeoutMs: 500, maxBytes: 1024 };

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const answers: Record<string, () => void> = {
      '/ok': () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"jobs":[]}'),
      '/missing': () => res.writeHead(404).end('{"error":"no"}'),
      '/html': () => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>'),
      '/big': () => res.writeHead(200).end(`"${'x'.repeat(4096)}"`),
      '/slow': () => setTimeout(() => res.writeHead(200).end('{}'), 5000).unref(),
      '/cut': () => {
        res.writeHead(200, { 'content-length': '100' }).write('{"jobs":');
        setTimeout(() => res.destroy(), 50).unref();
      },
    };
    (answers[req.url ?? ''] ?? answers['/missing'])?.();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The failure's reason, or a note that there was none. */
async function failure(path: string): Promise<string> {
  try {
    await getJson(`${base}${path}`, LIMITS);
    return 'no failure';
  } catch (error: unknown) {
    return error instanceof ProbeFailure ? error.message : `not a ProbeFailure: ${String(error)}`;
  }
}

describe('getJson()', () => {
  test('answers the parsed JSON of a 2xx answer', async () => {
    expect(await getJson(`${base}/ok`, LIMITS)).toEqual({ jobs: [] });
  });

  test('fails on a non-2xx answer, malformed JSON, an answer too large or cut short', async () => {
    expect(await failure('/missing')).toBe('answered HTTP 404');
    expect(await failure('/html')).toMatch(/^answered malformed JSON: /);
    expect(await failure('/big')).toBe('answered more than 1024 bytes');
    expect(await failure('/cut')).toMatch(/aborted|closed the connection before the answer ended/);
  });

  test('gives up on an answer that does not come within the limit', async () => {
    const started = Date.now();
    expect(await failure('/slow')).toBe('no answer within 500 ms');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  test('fails at once where nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    await expect(getJson(`http://127.0.0.1:${port}/`, LIMITS)).rejects.toThrow(/ECONNREFUSED/);
  });
});
