/**
 * The engine access proxy on the real node: a real JupyterLab reached at the address `:access`
 * hands out, through the gateway, with the caller's token — its API, its XSRF-protected writes,
 * a kernel run over its WebSocket — and what the proxy refuses: no token, another user, a paused
 * engine, paths that would leave the engine, conflicting body lengths; and an engine that echoes
 * what it receives shows which headers reach it.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { SESSION_COOKIE } from '../../gateway/src/access/session.ts';
import { CHROMIUM_PATH, QUIET_CHROMIUM_FLAGS } from '../../scripts/chromium.ts';
import { dump, load } from 'js-yaml';
import { realCatalogue, realNodePlacement } from '../cluster/real-catalogue.ts';
import { waitFor } from '../cluster/wait.ts';
import { executeRequest, kernelMessage } from './jupyter-kernel.ts';
import type { ApiServer, RestResponse } from '../helpers/api-server.ts';
import type { TestIdentity } from '../helpers/use-identity.ts';
import { useRealNodeProduct } from './real-product.ts';
import { reaches as reachesState } from '../operator/fixtures.ts';

const NAMESPACE = 'access';
const W = 'workspaces/lab';
const NB = '/workspaces/lab/notebookEngines/nb';
const ECHO = '/workspaces/lab/notebookEngines/echo';

// Set in the describe block, which starts the product before its tests.
let identity: () => TestIdentity;
let api: () => ApiServer;

/**
 * An engine that answers every request with what it received (path and headers, as JSON) on the
 * notebook port: the headers an engine gets, seen from inside it. It stops when asked (SIGTERM),
 * as a server should: as a container's first process without a handler it would ignore the
 * signal, and each deletion would wait out the pod's whole grace period (30 s).
 */
const ECHO_SERVER = `
import http.server, json, signal, sys
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
class Echo(http.server.BaseHTTPRequestHandler):
    def answer(self):
        body = json.dumps({"path": self.path, "headers": [[k.lower(), v] for k, v in self.headers.items()]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_GET = do_POST = do_PUT = answer
http.server.ThreadingHTTPServer(("", 8888), Echo).serve_forever()
`;

async function bearer(account: string): Promise<Record<string, string>> {
  return { Authorization: `Bearer ${await identity().token(account)}` };
}

async function asUser(method: string, path: string, body?: unknown): Promise<RestResponse> {
  return api().rest(method, path, body, await bearer('user'));
}

/** A request through the gateway with the user's token, plus `headers`. */
async function proxied(path: string, init: RequestInit & { as?: string } = {}): Promise<Response> {
  const { as = 'user', headers, ...rest } = init;
  return fetch(`${api().gateway.restUrl}${path}`, {
    ...rest,
    headers: { ...(as === '' ? {} : await bearer(as)), ...(headers as Record<string, string> | undefined) },
  });
}

/** A request whose path is sent exactly as written (fetch would resolve `..` itself). */
function rawPath(path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(api().gateway.restUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Resolves once the notebook `id` of the workspace is in `state`. */
async function notebookReaches(id: string, state: string, timeoutMs: number): Promise<void> {
  await reachesState(
    api(),
    { namespace: NAMESPACE, plural: 'notebookengines', name: `lab.${id}` },
    state,
    timeoutMs,
  );
}

async function createNotebook(id: string, profile: string): Promise<void> {
  const r = await asUser('POST', `/v1/${W}/notebookEngines?notebookEngineId=${id}`, {
    profile: `workspaces/global/notebookEngineProfiles/${profile}`,
    notebookImage: 'workspaces/global/notebookEngineImages/real',
  });
  expect(r.status).toBe(200);
  await notebookReaches(id, 'STATE_RUNNING', 240_000);
}

/** Resolves once the engine answers through the proxy (its address is ready a moment after RUNNING). */
async function answers(path: string): Promise<Response> {
  return waitFor(
    async () => {
      const r = await proxied(path);
      return r.status === 200 ? r : undefined;
    },
    { what: `${path} to answer through the proxy`, timeoutMs: 120_000 },
  );
}

/** Runs `code` in the kernel over its WebSocket through the proxy; what it printed. */
function runCell(kernelId: string, code: string, headers: Record<string, string>): Promise<string> {
  const url = `${api().gateway.restUrl.replace(/^http/, 'ws')}${NB}/api/kernels/${kernelId}/channels`;
  const socket = new WebSocket(url, { headers });
  const msgId = `cell-${Date.now()}`;
  return new Promise((resolve, reject) => {
    let printed = '';
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`The kernel did not finish the cell; printed so far: ${printed}`));
    }, 60_000);
    socket.onerror = () => {
      clearTimeout(timer);
      reject(new Error('The kernel WebSocket failed'));
    };
    socket.onopen = () => {
      socket.send(executeRequest(msgId, code));
    };
    socket.onmessage = (event: MessageEvent) => {
      const message = kernelMessage(event);
      if (message.parent_header.msg_id !== msgId) return;
      if (message.msg_type === 'stream') printed += message.content.text ?? '';
      if (message.msg_type === 'status' && message.content.execution_state === 'idle') {
        clearTimeout(timer);
        socket.close();
        resolve(printed);
      }
    };
  });
}

async function lastActivity(id: string): Promise<string | undefined> {
  const object = (await api()
    .cluster.kubeConfig.makeApiClient(CustomObjectsApi)
    .getNamespacedCustomObject({
      group: 'engine.h2o.ai',
      version: 'v1',
      namespace: NAMESPACE,
      plural: 'notebookengines',
      name: `lab.${id}`,
    })) as { metadata?: { annotations?: Record<string, string> } };
  return object.metadata?.annotations?.['engine.h2o.ai/last-activity-time'];
}

/** Runs a cell from inside the page, as JupyterLab does: a kernel by its REST API, a cell over its WebSocket. */
const CELL_IN_PAGE = `async ([base, code]) => {
  const xsrf = document.cookie.split('; ').find((c) => c.startsWith('_xsrf='))?.slice(6) ?? '';
  const created = await fetch(base + '/api/kernels', {
    method: 'POST', headers: { 'X-XSRFToken': xsrf, 'content-type': 'application/json' }, body: '{}',
  });
  if (created.status !== 201) return 'kernel: HTTP ' + created.status;
  const { id } = await created.json();
  const socket = new WebSocket('ws://' + location.host + base + '/api/kernels/' + id + '/channels');
  const msgId = crypto.randomUUID();
  return new Promise((resolve) => {
    let printed = '';
    socket.onerror = () => resolve('the WebSocket failed');
    socket.onopen = () => socket.send(JSON.stringify({
      header: { msg_id: msgId, username: '', session: crypto.randomUUID(), msg_type: 'execute_request', version: '5.3' },
      parent_header: {}, metadata: {}, channel: 'shell', buffers: [],
      content: { code, silent: false, store_history: false, user_expressions: {}, allow_stdin: false },
    }));
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (message.parent_header.msg_id !== msgId) return;
      if (message.msg_type === 'stream') printed += message.content.text;
      if (message.msg_type === 'status' && message.content.execution_state === 'idle') {
        socket.close();
        resolve(printed);
      }
    };
  });
}`;

/** Opens `url` in a new browser context and signs in on the identity provider's page as `account`. */
async function signedIn(
  browser: Browser,
  url: string,
  account: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(url);
  expect(new URL(page.url()).origin).toBe(identity().provider.issuer);
  await page.getByRole('button', { name: new RegExp(`\\(${account}\\)`) }).click();
  await page.waitForURL((at) => at.href === url);
  return { context, page };
}

/** The status line of a WebSocket upgrade sent with `headers` (the socket is then closed). */
function upgradeStatus(path: string, headers: Record<string, string>): Promise<string> {
  const { hostname, port } = new URL(api().gateway.restUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      const lines = Object.entries({
        host: `${hostname}:${port}`,
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...headers,
      }).map(([name, value]) => `${name}: ${value}`);
      socket.write(`GET ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
    });
    socket.setEncoding('utf8');
    socket.once('data', (chunk: string) => {
      resolve(chunk.split('\r\n')[0] ?? '');
      socket.destroy();
    });
    socket.on('error', reject);
  });
}

/** Declares the cases (real-node.test.ts runs them on its one cluster with a real node). */
export function accessCases(): void {
  describe('the engine access proxy on the real node', () => {
    ({ identity, api } = useRealNodeProduct(NAMESPACE, [
      { id: 'user', name: 'Una User', roles: ['data-scientist'] },
      { id: 'other', name: 'Otto Other', roles: ['data-scientist'] },
    ]));
    beforeAll(async () => {
      const images = api().cluster.realNode?.images ?? [];
      const admin = await identity().token('admin');
      const [profile] = realCatalogue(images).filter(
        (entry) => entry.collection === 'notebookEngineProfiles',
      );
      const template = dump({
        spec: {
          ...(load(realNodePlacement()) as { spec: object }).spec,
          containers: [{ name: 'notebook', command: ['python3', '-c', ECHO_SERVER] }],
        },
      });
      const r = await api().rest(
        'POST',
        '/v1/workspaces/global/notebookEngineProfiles?notebookEngineProfileId=echo',
        { ...profile?.body, yamlPodTemplateSpec: template },
        { Authorization: `Bearer ${admin}` },
      );
      expect(r.status).toBe(200);
    }, 60_000);
    afterEach(async () => {
      for (const collection of ['notebookEngines', 'h2oEngines']) {
        const list = await asUser('GET', `/v1/${W}/${collection}`);
        for (const engine of (list.json[collection] ?? []) as { name: string }[])
          await asUser('DELETE', `/v1/${engine.name}`);
      }
      // The node has two CPUs: one test's engines go before the next test's start.
      await waitFor(
        async () => {
          const pods = await api()
            .cluster.kubeConfig.makeApiClient(CoreV1Api)
            .listNamespacedPod({ namespace: NAMESPACE });
          return pods.items.length === 0 ? true : undefined;
        },
        { what: 'every engine pod to be gone', timeoutMs: 120_000 },
      );
    }, 180_000);

    test('JupyterLab through the proxy: its API, an XSRF-protected write, a kernel over its WebSocket; refusals', async () => {
      const started = new Date();
      await createNotebook('nb', 'real');
      // The address `:access` hands out is the one served here.
      const access = await asUser('GET', `/v1/${W}/notebookEngines/nb:access`);
      expect(new URL(String(access.json['uri'])).pathname).toBe(`${NB}/`);

      expect(
        ((await (await answers(`${NB}/api/status`)).json()) as { started?: string }).started,
      ).toBeDefined();
      // Who may not: no token, a token of nobody, another user of the workspace.
      const anonymous = await proxied(`${NB}/api/status`, { as: '' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="ai-engine-manager"');
      expect(
        (await proxied(`${NB}/api/status`, { as: '', headers: { Authorization: 'Bearer nope' } })).status,
      ).toBe(401);
      const other = await proxied(`${NB}/api/status`, { as: 'other' });
      expect(other.status).toBe(404);
      expect(((await other.json()) as { message: string }).message).toContain(
        'workspaces/lab/notebookEngines/nb',
      );
      // The API is not shadowed.
      expect((await asUser('GET', `/v1/${W}/notebookEngines/nb`)).status).toBe(200);

      // Jupyter's XSRF check passes through: its cookie from a page, sent back as a header.
      const page = await proxied(`${NB}/lab`);
      expect(page.status).toBe(200);
      const xsrf = /_xsrf=([^;]+)/.exec(page.headers.get('set-cookie') ?? '')?.[1] ?? '';
      expect(xsrf).not.toBe('');
      const jupyter = { cookie: `_xsrf=${xsrf}`, 'x-xsrftoken': xsrf, 'content-type': 'application/json' };
      const put = await proxied(`${NB}/api/contents/through-proxy.txt`, {
        method: 'PUT',
        headers: jupyter,
        body: JSON.stringify({ type: 'file', format: 'text', content: 'written through the proxy' }),
      });
      expect(put.status).toBe(201);
      const read = await proxied(`${NB}/api/contents/through-proxy.txt?content=1`, { headers: jupyter });
      expect(((await read.json()) as { content: string }).content).toBe('written through the proxy');
      // Without the token Jupyter's check refuses the write: the proxy does not make it up.
      const forged = await proxied(`${NB}/api/contents/forged.txt`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'file', format: 'text', content: 'x' }),
      });
      expect(forged.status).toBe(403);

      // A kernel, and one cell run over its WebSocket through the proxy.
      const kernel = await proxied(`${NB}/api/kernels`, { method: 'POST', headers: jupyter, body: '{}' });
      expect(kernel.status).toBe(201);
      const { id: kernelId } = (await kernel.json()) as { id: string };
      const printed = await runCell(kernelId, 'print(6 * 7)', {
        ...(await bearer('user')),
        cookie: jupyter.cookie,
      });
      expect(printed).toBe('42\n');

      // Paths that would leave the engine are refused before any engine is asked.
      const user = await bearer('user');
      for (const path of [
        `${NB}/../echo/`,
        `${NB}/%2e%2e/echo/`,
        `${NB}/..%2Fecho%2F`,
        `${NB}/api/contents/a%252F..%252F..`,
        `${NB}%2F..%2Fecho/`,
      ]) {
        const answer = await rawPath(path, user);
        expect({ path, status: answer.status }).toEqual({ path, status: 400 });
      }

      // Use through the proxy is the engine's activity.
      await waitFor(
        async () => {
          const at = await lastActivity('nb');
          return at !== undefined && Date.parse(at) >= started.getTime() - 1000 ? at : undefined;
        },
        { what: 'the notebook to record activity', timeoutMs: 30_000 },
      );

      // A paused engine says so, to programs and to browsers; a deleted one is gone at once.
      expect((await asUser('POST', `/v1/${W}/notebookEngines/nb:pause`)).status).toBe(200);
      await notebookReaches('nb', 'STATE_PAUSED', 120_000);
      const paused = await proxied(`${NB}/api/status`);
      expect(paused.status).toBe(400);
      expect(await paused.json()).toMatchObject({
        code: 9,
        message:
          'The engine "workspaces/lab/notebookEngines/nb" is not running (it is STATE_PAUSED); resume it to open it',
      });
      const pausedPage = await proxied(`${NB}/lab`, { headers: { accept: 'text/html,*/*;q=0.8' } });
      expect(pausedPage.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await pausedPage.text()).toContain('<title>Engine PAUSED</title>');
      expect((await asUser('DELETE', `/v1/${W}/notebookEngines/nb`)).status).toBe(200);
      const deleting = await proxied(`${NB}/api/status`);
      expect([deleting.status, ((await deleting.json()) as { message: string }).message]).toEqual([
        deleting.status === 404 ? 404 : 400,
        expect.stringMatching(deleting.status === 404 ? /not found/i : /it is STATE_DELETING/),
      ]);
      await waitFor(async () => ((await proxied(`${NB}/api/status`)).status === 404 ? true : undefined), {
        what: 'the deleted notebook to be gone from the proxy',
        timeoutMs: 60_000,
      });
    }, 600_000);

    test('in Chromium: sign in at the address, run a cell over the WebSocket; a session opens no more than its user may, from no other site', async () => {
      const SHARED = '/workspaces/lab/notebookEngines/shared';
      const PRIVATE = '/workspaces/lab/notebookEngines/private';
      const created = await asUser('POST', `/v1/${W}/notebookEngines?notebookEngineId=shared`, {
        profile: 'workspaces/global/notebookEngineProfiles/real',
        notebookImage: 'workspaces/global/notebookEngineImages/real',
        shared: true,
      });
      expect(created.status).toBe(200);
      await notebookReaches('shared', 'STATE_RUNNING', 240_000);
      await answers(`${SHARED}/api/status`);
      const uri = String((await asUser('GET', `/v1/${W}/notebookEngines/shared:access`)).json['uri']);
      const browser = await chromium.launch({
        executablePath: CHROMIUM_PATH,
        headless: true,
        args: [...QUIET_CHROMIUM_FLAGS],
      });
      try {
        // The address `:access` gives opens JupyterLab once its user has signed in.
        const user = await signedIn(browser, `${uri}lab`, 'user');
        expect(await user.page.locator('#jupyter-config-data').count()).toBe(1);
        expect(
          await user.page.evaluate(`(${CELL_IN_PAGE})(${JSON.stringify([SHARED, 'print(6 * 7)'])})`),
        ).toBe('42\n');
        const session = (await user.context.cookies()).find((c) => c.name === SESSION_COOKIE)?.value ?? '';
        expect(session).not.toBe('');

        // Another user of the workspace opens the shared notebook, not the one that is not shared.
        const other = await signedIn(browser, `${api().gateway.restUrl}${SHARED}/api/status`, 'other');
        expect(JSON.parse(await other.page.locator('body').innerText())).toHaveProperty('started');
        const otherSession = (await other.context.cookies()).find((c) => c.name === SESSION_COOKIE)?.value;
        expect(
          (
            await asUser('POST', `/v1/${W}/notebookEngines?notebookEngineId=private`, {
              profile: 'workspaces/global/notebookEngineProfiles/echo',
              notebookImage: 'workspaces/global/notebookEngineImages/real',
            })
          ).status,
        ).toBe(200);
        const stolen = await fetch(`${api().gateway.restUrl}${PRIVATE}/`, {
          headers: { cookie: `${SESSION_COOKIE}=${otherSession ?? ''}` },
        });
        expect(stolen.status).toBe(404);

        // A session is ambient: another site's page may not use it for a WebSocket or a change.
        const cookie = `${SESSION_COOKIE}=${session}`;
        const channels = `${SHARED}/api/kernels/none/channels`;
        expect(await upgradeStatus(channels, { cookie, origin: 'https://evil.example' })).toMatch(
          /^HTTP\/1\.1 403 /,
        );
        expect(await upgradeStatus(channels, { cookie, origin: 'null' })).toMatch(/^HTTP\/1\.1 403 /);
        const crossSite = await fetch(`${api().gateway.restUrl}${SHARED}/api/kernels`, {
          method: 'POST',
          headers: { cookie, origin: 'https://evil.example', 'content-type': 'application/json' },
          body: '{}',
        });
        expect(crossSite.status).toBe(403);
        expect(((await crossSite.json()) as { details: { reason: string }[] }).details[0]?.reason).toBe(
          'CROSS_SITE_REQUEST',
        );
        // From the platform's own page the same upgrade reaches Jupyter (which knows no such kernel).
        expect(
          await upgradeStatus(channels, { cookie, origin: new URL(api().gateway.restUrl).origin }),
        ).toMatch(/^HTTP\/1\.1 404 /);

        // A paused notebook shows its state in the browser.
        expect((await asUser('POST', `/v1/${W}/notebookEngines/shared:pause`)).status).toBe(200);
        await notebookReaches('shared', 'STATE_PAUSED', 120_000);
        const paused = await user.page.goto(`${uri}lab`);
        expect(paused?.status()).toBe(400);
        expect(await user.page.title()).toBe('Engine PAUSED');
        // Another user of a shared notebook sees its state, but only its owner may resume it...
        await other.page.goto(`${uri}lab`);
        expect(await other.page.title()).toBe('Engine PAUSED');
        expect(await other.page.getByRole('button', { name: 'Resume' }).count()).toBe(0);
        // ...and never from another site.
        const forged = await fetch(`${uri}?resume`, {
          method: 'POST',
          headers: { cookie, origin: 'https://evil.example' },
        });
        expect(forged.status).toBe(403);
        expect((await asUser('GET', `/v1/${W}/notebookEngines/shared`)).json['notebookEngine']).toMatchObject(
          {
            state: 'STATE_PAUSED',
          },
        );
        // The owner resumes it from the page, which then follows it to JupyterLab.
        await user.page.getByRole('button', { name: 'Resume' }).click();
        await user.page.waitForURL(uri);
        await notebookReaches('shared', 'STATE_RUNNING', 240_000);
      } finally {
        await browser.close();
      }
    }, 600_000);

    test('an engine gets our forwarding headers, the Host, the path as sent, and never the token', async () => {
      await createNotebook('echo', 'echo');
      await answers(`${ECHO}/`);
      const r = await proxied(`${ECHO}/api/x%20y?a=1&b=..`, {
        headers: {
          'x-forwarded-for': '6.6.6.6',
          'x-forwarded-host': 'evil.example',
          'x-forwarded-proto': 'https',
          forwarded: 'for=6.6.6.6',
          'x-real-ip': '6.6.6.6',
          cookie: 'kept=1; aiem_session=not-for-engines',
        },
      });
      expect(r.status).toBe(200);
      const echoed = (await r.json()) as { path: string; headers: [string, string][] };
      const headers = Object.fromEntries(echoed.headers);
      const host = new URL(api().gateway.restUrl).host;
      expect(echoed.path).toBe(`${ECHO}/api/x%20y?a=1&b=..`);
      expect(headers).toMatchObject({
        host,
        cookie: 'kept=1',
        'x-forwarded-for': '127.0.0.1',
        'x-forwarded-proto': 'http',
        'x-forwarded-host': host,
        forwarded: `for=127.0.0.1;proto=http;host="${host}"`,
      });
      expect(headers['authorization']).toBeUndefined();
      expect(headers['x-real-ip']).toBeUndefined();
      expect(echoed.headers.filter(([name]) => name === 'x-forwarded-for')).toHaveLength(1);

      // Conflicting body lengths never reach an engine: the server refuses the request itself.
      const { hostname, port } = new URL(api().gateway.restUrl);
      const token = (await bearer('user'))['Authorization'] ?? '';
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), hostname, () => {
          socket.write(
            `POST ${ECHO}/smuggle HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${token}\r\n` +
              'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /x HTTP/1.1\r\nHost: x\r\n\r\n',
          );
        });
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (text += chunk));
        socket.on('end', () => {
          resolve(text);
        });
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer).not.toContain('"path"');
    }, 600_000);

    test('an H2O cloud of two nodes is reached at its leader, through its address', async () => {
      const r = await asUser('POST', `/v1/${W}/h2oEngines?h2oEngineId=cloud`, {
        nodeCount: '2',
        cpu: '1',
        memoryBytes: String(1024 ** 3),
        profile: 'workspaces/global/h2oEngineProfiles/real',
        h2oEngineVersion: 'workspaces/global/h2oEngineVersions/real',
      });
      expect(r.status).toBe(200);
      await reachesState(
        api(),
        { namespace: NAMESPACE, plural: 'h2oengines', name: 'lab.cloud' },
        'STATE_RUNNING',
        240_000,
      );
      const engine = (await asUser('GET', `/v1/${W}/h2oEngines/cloud`)).json['h2oEngine'] as {
        apiUrl: string;
      };
      const path = new URL(engine.apiUrl).pathname;
      // Only the leader serves clients (the followers answer 403): every request reaches it.
      for (let i = 0; i < 5; i += 1) {
        const cloud = (await (await answers(`${path}3/Cloud`)).json()) as { cloud_size: number };
        expect(cloud.cloud_size).toBe(2);
      }
      expect((await proxied(`${path}3/Cloud`, { as: 'other' })).status).toBe(404);
      expect((await asUser('POST', `/v1/${W}/h2oEngines/cloud:terminate`)).status).toBe(200);
    }, 600_000);
  });
}
