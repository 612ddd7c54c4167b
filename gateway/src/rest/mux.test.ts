import type { AddressInfo } from 'node:net';
import { request, type IncomingMessage, type Server } from 'node:http';
import express from 'express';
import { DAIEngineProfile } from '../gen/ai/h2o/engine/v1/dai_engine_profile.pb.ts';
import { ServerStream, type Authenticate, type CallContext, type Handlers } from '../call/handler.ts';
import { OutputStream } from '../gen/ai/h2o/engine/v1/process.pb.ts';
import { unauthenticated } from '../errors/api-error.ts';
import { restRouter, MAX_BODY_BYTES } from './mux.ts';

const SVC = 'ai.h2o.engine.v1';
const received: Record<string, unknown>[] = [];
const callers: string[] = [];
const handlerWaiting = Promise.withResolvers<undefined>();
const callerGone = Promise.withResolvers<undefined>();
let server: Server;
let base: string;

/** Records each request and answers with a fixed response, so tests see what the mux built. */
function recording(
  response: object,
): (request: Record<string, unknown>, context: CallContext) => Promise<object> {
  return (request, context) => {
    received.push(request);
    callers.push(context.caller.subject);
    return Promise.resolve(response);
  };
}

const handlers: Handlers = {
  [`${SVC}.DAIEngineProfileService.GetDAIEngineProfile`]: recording({
    daiEngineProfile: DAIEngineProfile.fromPartial({
      name: 'workspaces/global/daiEngineProfiles/p1',
      maxIdleDurationConstraint: { min: { seconds: '0', nanos: 0 }, default: { seconds: '3600', nanos: 0 } },
      cpuConstraint: { min: '1', default: '2' },
    }),
  }),
  [`${SVC}.DAIEngineService.DeleteDAIEngine`]: recording({}),
  [`${SVC}.DAIEngineService.CreateDAIEngine`]: recording({}),
  [`${SVC}.DAIEngineService.UpdateDAIEngine`]: recording({}),
  [`${SVC}.DAIEngineService.DownloadLogs`]: recording({
    logs: { contentType: 'text/plain', data: new TextEncoder().encode('hello'), extensions: [] },
  }),
  [`${SVC}.DAIEngineService.ListDAIEngines`]: recording({ daiEngines: [], nextPageToken: '', totalSize: 0 }),
  [`${SVC}.H2OEngineService.CalculateH2OEngineSizeRawDataset`]: recording({
    h2oEngineSize: { nodeCount: '2', memoryBytes: '4096' },
  }),
  [`${SVC}.DAIEngineVersionService.GetDAIEngineVersion`]: () => Promise.reject(new Error('secret detail')),
  // Answers only once its caller has gone away, telling the test that it heard so.
  [`${SVC}.H2OEngineService.GetH2OEngine`]: (_request, context) =>
    new Promise((resolve) => {
      handlerWaiting.resolve(undefined);
      context.signal?.addEventListener('abort', () => {
        callerGone.resolve(undefined);
        resolve({});
      });
    }),
  // Two chunks, then (for process p2) a failure after the first byte.
  [`${SVC}.ProcessService.StreamOutput`]: (request) =>
    Promise.resolve(
      new ServerStream(
        (async function* () {
          yield await Promise.resolve({
            stream: OutputStream.OUTPUT_STREAM_STDOUT,
            data: Buffer.from('hi\n'),
          });
          yield { stream: OutputStream.OUTPUT_STREAM_STDERR, data: Buffer.from('oops\n') };
          if (String(request['name']).endsWith('/p2')) throw new Error('the sandbox went away');
        })(),
      ),
    ),
};

/** `Bearer <subject>` names the caller; `Bearer invalid` is refused; no header is anonymous. */
const authenticate: Authenticate = (headers) => {
  const token = headers['authorization']?.replace(/^Bearer /, '') ?? 'users/anonymous';
  return token === 'invalid'
    ? Promise.reject(unauthenticated())
    : Promise.resolve({ subject: token, displayName: token, roles: [] });
};

beforeAll(async () => {
  const app = express();
  app.use('/', restRouter(handlers, authenticate));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received.length = 0;
  callers.length = 0;
});

async function call(
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, {
    method,
    body: body ?? null,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('restRouter()', () => {
  test('streams a server-streaming RPC as chunked newline-delimited JSON envelopes', async () => {
    const res = await fetch(`${base}/v1/workspaces%2Fw1%2FsandboxEngines%2Fe1%2Fprocesses%2Fp1:streamOutput`);
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.text()).toBe(
      '{"result":{"stream":"OUTPUT_STREAM_STDOUT","data":"aGkK"}}\n' +
        '{"result":{"stream":"OUTPUT_STREAM_STDERR","data":"b29wcwo="}}\n',
    );
  });

  test('ends a stream that fails after its first byte with an error envelope', async () => {
    const res = await fetch(`${base}/v1/workspaces%2Fw1%2FsandboxEngines%2Fe1%2Fprocesses%2Fp2:streamOutput`);
    const lines = (await res.text()).trimEnd().split('\n');
    expect(res.status).toBe(200);
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2] ?? '')).toEqual({
      error: { code: 13, message: 'Internal error', details: expect.any(Array) as unknown },
    });
  });

  test('routes a percent-encoded name and answers canonical JSON', async () => {
    const { status, json } = await call('GET', '/v1/workspaces%2Fglobal%2FdaiEngineProfiles%2Fp1');
    expect(status).toBe(200);
    expect(received).toEqual([{ name: 'workspaces/global/daiEngineProfiles/p1' }]);
    expect(json['daiEngineProfile']).toMatchObject({
      name: 'workspaces/global/daiEngineProfiles/p1',
      maxIdleDurationConstraint: { min: '0s', default: '3600s' },
      cpuConstraint: { min: '1', default: '2' },
      priority: 0,
      assignedOidcRoles: [],
    });
  });

  test('reads capitalised booleans in the query, as the Python client sends them', async () => {
    await call('DELETE', '/v1/workspaces%2Fw%2FdaiEngines%2Fe1?allowMissing=False&validateOnly=True');
    expect(received).toEqual([
      { name: 'workspaces/w/daiEngines/e1', allowMissing: false, validateOnly: true },
    ]);
  });

  test('builds a create request from path, query and a body with nulls', async () => {
    const body = JSON.stringify({
      profile: 'workspaces/global/daiEngineProfiles/p1',
      daiEngineVersion: 'v',
      cpu: null,
      memoryBytes: null,
    });
    const { status } = await call(
      'POST',
      '/v1/workspaces%2Fw/daiEngines?daiEngineId=e1&validateOnly=False',
      body,
    );
    expect(status).toBe(200);
    expect(received[0]).toMatchObject({
      parent: 'workspaces/w',
      daiEngineId: 'e1',
      validateOnly: false,
      daiEngine: { profile: 'workspaces/global/daiEngineProfiles/p1' },
    });
    expect((received[0]?.['daiEngine'] as Record<string, unknown>)['cpu']).toBeUndefined();
  });

  test('takes the update mask from the query as snake_case paths, and the name from the path', async () => {
    const body = JSON.stringify({ name: 'workspaces/other/daiEngines/x', displayName: 'New', cpu: 4 });
    await call(
      'PATCH',
      '/v1/workspaces%2Fw%2FdaiEngines%2Fe1?updateMask=display_name%2Ccpu&allowMissing=False&validateOnly=False',
      body,
    );
    expect(received[0]).toMatchObject({
      updateMask: ['display_name', 'cpu'],
      daiEngine: { name: 'workspaces/w/daiEngines/e1', displayName: 'New', cpu: 4 },
    });
  });

  test('accepts a custom method without a body, and answers bytes as base64', async () => {
    const { status, json } = await call('POST', '/v1/workspaces%2Fw%2FdaiEngines%2Fe1:downloadLogs');
    expect(status).toBe(200);
    expect(received).toEqual([{ daiEngine: 'workspaces/w/daiEngines/e1' }]);
    expect(json['logs']).toEqual({
      contentType: 'text/plain',
      data: Buffer.from('hello').toString('base64'),
      extensions: [],
    });
  });

  test('treats empty query values as unset and answers an empty last page with nextPageToken ""', async () => {
    const { json } = await call(
      'GET',
      '/v1/workspaces%2Fw/daiEngines?pageSize=0&pageToken=&orderBy=&filter=',
    );
    expect(received).toEqual([
      { parent: 'workspaces/w', pageSize: 0, pageToken: '', orderBy: '', filter: '' },
    ]);
    expect(json).toEqual({ daiEngines: [], nextPageToken: '', totalSize: 0 });
  });

  test('serves the parentless size calculation', async () => {
    const body = JSON.stringify({
      datasetSizeBytes: '1073741824',
      limits: { memoryBytesPerNodeMin: '1024', nodeCountMin: '1' },
    });
    const { json } = await call('POST', '/v1/h2oEngines:calculateH2OEngineSizeRawDataset', body);
    expect(received[0]).toMatchObject({
      datasetSizeBytes: '1073741824',
      limits: { memoryBytesPerNodeMin: '1024', nodeCountMin: '1' },
    });
    expect(json).toEqual({ h2oEngineSize: { nodeCount: '2', memoryBytes: '4096' } });
  });

  test.each<[string, string, string, string | undefined, number, number, string]>([
    [
      'invalid JSON',
      'POST',
      '/v1/workspaces%2Fw/daiEngines?daiEngineId=e',
      '{"profile":',
      400,
      3,
      'not valid JSON',
    ],
    [
      'a wrong type in the body',
      'POST',
      '/v1/workspaces%2Fw/daiEngines?daiEngineId=e',
      '{"cpu":"four"}',
      400,
      3,
      'dai_engine.cpu',
    ],
    [
      'a bad boolean in the query',
      'DELETE',
      '/v1/workspaces%2Fw%2FdaiEngines%2Fe1?allowMissing=maybe',
      undefined,
      400,
      3,
      'allowMissing',
    ],
    [
      'a bad integer in the query',
      'GET',
      '/v1/workspaces%2Fw/daiEngines?pageSize=ten',
      undefined,
      400,
      3,
      'page_size',
    ],
    ['an unknown route', 'GET', '/v1/workspaces%2Fw/widgets', undefined, 404, 5, 'No route'],
    [
      'a method the path does not serve',
      'PUT',
      '/v1/workspaces%2Fw%2FdaiEngines%2Fe1',
      '{}',
      405,
      12,
      'not allowed',
    ],
    [
      'a body nested deeper than the limit',
      'POST',
      '/v1/workspaces%2Fw/daiEngines?daiEngineId=e',
      `${'['.repeat(5000)}${']'.repeat(5000)}`,
      400,
      3,
      'nests deeper than 64',
    ],
    [
      'a lone surrogate in a display name',
      'POST',
      '/v1/workspaces%2Fw/daiEngines?daiEngineId=e',
      '{"displayName":"a\\ud800b"}',
      400,
      3,
      'daiEngine.displayName',
    ],
    [
      'a lone surrogate in a key',
      'POST',
      '/v1/workspaces%2Fw/daiEngines?daiEngineId=e',
      '{"annotations":{"\\udc00":"x"}}',
      400,
      3,
      'daiEngine.annotations',
    ],
    [
      'an RPC without implementation',
      'POST',
      '/v1/workspaces%2Fw%2FdaiEngines%2Fe1:pause',
      undefined,
      501,
      12,
      'not implemented',
    ],
    [
      'a sandbox RPC not implemented yet',
      'GET',
      '/v1/workspaces%2Fw1%2FsandboxEngines%2Fe1/metrics:read?strictMode=True',
      undefined,
      501,
      12,
      'ReadMetrics is not implemented',
    ],
    ['a bad percent-encoding', 'GET', '/v1/workspaces%ZZ', undefined, 400, 3, 'percent-encoding'],
    [
      'a body that is not an object',
      'POST',
      '/v1/h2oEngines:calculateH2OEngineSizeRawDataset',
      '[1]',
      400,
      3,
      'expected a JSON object',
    ],
  ])('answers %s with an rpcStatus', async (_what, method, path, body, status, code, message) => {
    const response = await call(method, path, body);
    expect(response.status).toBe(status);
    expect(response.json).toMatchObject({ code, details: expect.any(Array) as unknown });
    expect(response.json['message']).toContain(message);
    expect(received).toEqual([]);
  });

  test('tells the handler when its caller goes away before the answer', async () => {
    const leaving = new AbortController();
    const calling = fetch(`${base}/v1/workspaces%2Fw%2Fh2oEngines%2Fh1`, { signal: leaving.signal });
    await handlerWaiting.promise;
    leaving.abort();
    await expect(calling).rejects.toThrow();
    await callerGone.promise;
  });

  test('answers an oversized body with 400 and calls nothing', async () => {
    const big = JSON.stringify({ displayName: 'x'.repeat(MAX_BODY_BYTES) });
    const response = await call('POST', '/v1/workspaces%2Fw/daiEngines?daiEngineId=e', big);
    expect(response.status).toBe(400);
    expect(response.json['message']).toContain('larger than');
    expect(received).toEqual([]);
  });

  test('hides the detail of an unexpected handler failure behind a 500', async () => {
    const response = await call('GET', '/v1/workspaces%2Fw%2FdaiEngineVersions%2F1.10.6');
    expect(response.status).toBe(500);
    expect(response.json).toMatchObject({ code: 13, message: 'Internal error' });
    expect(JSON.stringify(response.json)).not.toContain('secret');
  });

  test('hands every handler the caller that authentication established', async () => {
    await call('GET', '/v1/workspaces/w/daiEngineProfiles/p1', undefined, {
      Authorization: 'Bearer users/ada',
    });
    await call('GET', '/v1/workspaces/w/daiEngineProfiles/p1');
    expect(callers).toEqual(['users/ada', 'users/anonymous']);
  });

  test('answers a method the path does not serve with 405 and the methods it does in Allow', async () => {
    for (const method of ['PUT', 'TRACE']) {
      // fetch() refuses to send TRACE; a plain HTTP request does, as fuzzers and curl do.
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        request(`${base}/v1/workspaces/w/daiEngines/e1`, { method }, resolve).on('error', reject).end();
      });
      res.resume();
      expect(res.statusCode).toBe(405);
      expect(res.headers['allow']).toBe('DELETE, GET, HEAD, OPTIONS, PATCH');
    }
    const options = await fetch(`${base}/v1/workspaces/w/daiEngines`, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('GET, HEAD, OPTIONS, POST');
    expect(received).toEqual([]);
  });

  test('answers HEAD as GET without a body', async () => {
    const res = await fetch(`${base}/v1/workspaces/global/daiEngineProfiles/p1`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    expect(received).toEqual([{ name: 'workspaces/global/daiEngineProfiles/p1' }]);
  });

  test('refuses a missing or bad token with 401 and WWW-Authenticate before the body is read', async () => {
    const bodies = [
      '{"profile":',
      'x'.repeat(MAX_BODY_BYTES + 512 * 1024),
      `${'['.repeat(5000)}${']'.repeat(5000)}`,
    ];
    for (const body of bodies) {
      const res = await fetch(`${base}/v1/workspaces/w/daiEngines?daiEngineId=e`, {
        method: 'POST',
        body,
        headers: { 'Content-Type': 'application/json', Authorization: 'Bearer invalid' },
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="ai-engine-manager"');
      expect(await res.json()).toMatchObject({ code: 16 });
    }
    expect(received).toEqual([]);
  });

  test('refuses bad credentials with 401 before routing, on known and unknown paths alike', async () => {
    for (const path of ['/v1/workspaces/w/daiEngineProfiles/p1', '/v1/nothing/here']) {
      const response = await call('GET', path, undefined, { Authorization: 'Bearer invalid' });
      expect(response.status).toBe(401);
      expect(response.json).toMatchObject({
        code: 16,
        message: 'The request does not carry valid credentials',
      });
    }
    expect(received).toEqual([]);
  });
});
