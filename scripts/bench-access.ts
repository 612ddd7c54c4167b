/**
 * `make bench-access`: the engine access proxy (gateway/src/access/) against the same engine
 * reached directly at its pod's address, in the same run, on the local cluster's real node:
 *
 * - A1, first against a real engine alone on the node (JupyterLab's /api/status in a notebook
 *   engine), then against the benchmark's own server (below): a small GET, 32 keep-alive
 *   connections for AIEM_BENCH_ACCESS_SECONDS (default 10) after a
 *   warm-up, through the proxy and direct, twice in turn: requests per second and the p50 each
 *   request took (also over one connection, where the latency is the proxy's own, not a queue's);
 * - A2: AIEM_BENCH_ACCESS_BYTES (default 1 GiB) uploaded and downloaded, streamed: throughput, and
 *   the gateway's memory (RSS) growth while the proxy carries it;
 * - A3: AIEM_BENCH_ACCESS_SOCKETS (default 1,000) WebSockets open at once through the gateway and
 *   left idle, then each echoes one message: how many are held, the gateway's RSS growth, and the
 *   echo's p99 against as many sockets straight to the engine;
 * - A4: AIEM_BENCH_ACTIVITY_ENGINES (default 200) engines under continuous traffic through the
 *   proxy for AIEM_BENCH_ACTIVITY_SECONDS (default 300): the activity annotation's writes per engine
 *   per minute, counted by a watch of the engines (every write changes the annotation's time).
 *
 * The engine is a notebook engine of the real-node catalogue's image whose pod template runs
 * scripts/bench-access-engine.ts on the host's Node (both mounted into the container): a server
 * that costs as little as one can, so that what the proxy adds is what shows. The gateway runs
 * in a process of its own, as deployed (gateway/src/main.ts), so that its RSS is its own, and
 * checks a real token on every request and upgrade (the local identity provider's, verified
 * against its keys; `alice` calls, under the default policy). The operator runs in this process.
 *
 * A4's 200 engines share the one real server: they are created through the API, then the
 * benchmark plays the operator (stopped by then) — it marks them RUNNING and gives each an
 * EndpointSlice of its Service naming the real engine's pod, which is where the gateway looks for
 * an engine's address. Everything the gateway does per request is its own.
 *
 * Prints a table and writes it to .run/bench-access.json; README records a run.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api, type KubernetesObject } from '@kubernetes/client-node';
import { dump, load } from 'js-yaml';
import { pino } from 'pino';
import { objectName } from '../gateway/src/store/names.ts';
import { startOperator } from '../operator/src/operator.ts';
import { ENGINE_UID_LABEL, LAST_ACTIVITY_ANNOTATION } from '../shared/resources.ts';
import { customResources, WatchedCollection } from '../shared/watched-collection.ts';
import { workloadName } from '../shared/workloads.ts';
import { startCluster } from '../test/cluster/cluster.ts';
import { freePort } from '../test/cluster/ports.ts';
import { createCatalogue, realCatalogue, realNodePlacement } from '../test/cluster/real-catalogue.ts';
import { REAL_NODE } from '../test/cluster/real-node.ts';
import { waitFor } from '../test/cluster/wait.ts';
import { ProductProcess } from '../test/helpers/product-process.ts';
import { startLocalIdentity } from '../test/identity/local-identity.ts';

/** What the benchmark uses of autocannon (it ships no types). */
interface CannonResult {
  duration: number;
  errors: number;
  non2xx: number;
}
interface CannonRun extends PromiseLike<CannonResult> {
  on(
    event: 'response',
    listener: (client: unknown, statusCode: number, bytes: number, responseTime: number) => void,
  ): CannonRun;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (options: object) => CannonRun;

const NAMESPACE = 'bench-access';
const WORKSPACE = 'w';
const ENGINE = 'bench';
const setting = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const SECONDS = setting('AIEM_BENCH_ACCESS_SECONDS', 10);
const TRANSFER_BYTES = setting('AIEM_BENCH_ACCESS_BYTES', 2 ** 30);
const SOCKETS = setting('AIEM_BENCH_ACCESS_SOCKETS', 1_000);
const ACTIVITY_ENGINES = setting('AIEM_BENCH_ACTIVITY_ENGINES', 200);
const ACTIVITY_SECONDS = setting('AIEM_BENCH_ACTIVITY_SECONDS', 300);
const CONNECTIONS = 32;
/** How long the WebSockets are left idle before they are counted and echo. */
const HOLD_MS = 10_000;
/** A4's traffic over all its engines: each engine gets a request about every 0.5 s. */
const ACTIVITY_RATE = 2 * ACTIVITY_ENGINES;
const MIB = 2 ** 20;
const ENGINE_SERVER = resolve(dirname(fileURLToPath(import.meta.url)), 'bench-access-engine.ts');

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
};

/** A process's resident memory in bytes, from /proc. */
function rssBytes(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid ?? 0}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) * 1024;
}

/** The highest RSS of a process while `work` runs (sampled every 50 ms), and before it. */
async function rssDuring<T>(
  pid: number | undefined,
  work: () => Promise<T>,
): Promise<{ result: T; before: number; peak: number }> {
  const before = rssBytes(pid);
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssBytes(pid));
  }, 50);
  try {
    const result = await work();
    peak = Math.max(peak, rssBytes(pid));
    return { result, before, peak };
  } finally {
    clearInterval(timer);
  }
}

/** Runs `count` calls, `concurrency` at a time. */
async function batch(
  count: number,
  concurrency: number,
  call: (i: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) await call(i);
    }),
  );
}

/** Requests answered 2xx per second, and each one's milliseconds. */
interface Load {
  perSecond: number;
  times: number[];
  failed: number;
}

/** autocannon at `url` (keep-alive connections, a 3 s warm-up first): the 2xx answers it got. */
async function cannon(
  url: string,
  headers: Record<string, string>,
  options: { connections: number; seconds: number },
): Promise<Load> {
  const times: number[] = [];
  const run = autocannon({
    url,
    headers,
    connections: options.connections,
    duration: options.seconds,
    warmup: { connections: options.connections, duration: 3 },
  }).on('response', (_client, status, _bytes, ms) => {
    if (status >= 200 && status < 300) times.push(ms);
  });
  const result = await run;
  return { perSecond: times.length / result.duration, times, failed: result.errors + result.non2xx };
}

/** Several loads of the same target as one. */
function merged(loads: Load[]): Load {
  const times = loads.flatMap((l) => l.times);
  const seconds = loads.reduce((total, l) => total + l.times.length / l.perSecond, 0);
  return {
    perSecond: times.length / seconds,
    times,
    failed: loads.reduce((total, l) => total + l.failed, 0),
  };
}

/** One HTTP exchange with a streamed body each way; resolves with the answer's byte count. */
function exchange(
  url: string,
  options: { method: string; headers: Record<string, string>; body?: Readable },
): Promise<{ status: number; bytes: number; text: string }> {
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(url, { method: options.method, headers: options.headers, agent: false });
    req.on('error', reject);
    req.on('response', (res: IncomingMessage) => {
      let bytes = 0;
      let text = '';
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (text.length < 200) text += chunk.toString('latin1', 0, Math.min(chunk.length, 200));
      });
      res.on('error', reject);
      res.on('end', () => {
        resolvePromise({ status: res.statusCode ?? 0, bytes, text });
      });
    });
    if (options.body === undefined) req.end();
    else pipeline(options.body, req).catch(reject);
  });
}

/** `total` bytes from one reused 64 KiB chunk: nothing the size of the whole is ever held. */
function generated(total: number): Readable {
  const chunk = Buffer.alloc(64 * 1024, 'y');
  let left = total;
  return new Readable({
    read() {
      const size = Math.min(left, chunk.length);
      left -= size;
      this.push(size === 0 ? null : chunk.subarray(0, size));
    },
  });
}

/** Uploads then downloads `bytes` at `base`: each one's MiB/s. */
async function transfers(
  base: string,
  headers: Record<string, string>,
  bytes: number,
): Promise<{ up: number; down: number }> {
  let start = performance.now();
  const up = await exchange(`${base}/upload`, {
    method: 'PUT',
    headers: {
      ...headers,
      'content-type': 'application/octet-stream',
      'content-length': String(bytes),
    },
    body: generated(bytes),
  });
  const upMs = performance.now() - start;
  if (up.status !== 200 || up.text !== String(bytes))
    throw new Error(`The upload to ${base} answered ${up.status}: ${up.text}`);
  start = performance.now();
  const down = await exchange(`${base}/download?bytes=${bytes}`, { method: 'GET', headers });
  const downMs = performance.now() - start;
  if (down.status !== 200 || down.bytes !== bytes)
    throw new Error(`The download from ${base} answered ${down.status} with ${down.bytes} bytes`);
  const perSecond = (ms: number): number => bytes / MIB / (ms / 1000);
  return { up: perSecond(upMs), down: perSecond(downMs) };
}

/** A WebSocket once it is open. */
function openSocket(url: string, headers: Record<string, string>): Promise<WebSocket> {
  return new Promise((resolvePromise, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.onopen = () => {
      resolvePromise(socket);
    };
    socket.onerror = () => {
      reject(new Error(`The WebSocket to ${url} did not open`));
    };
  });
}

/** One message's round trip through an open socket, in milliseconds. */
function echoMs(socket: WebSocket, message: string): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      reject(new Error('No echo within 10 s'));
    }, 10_000);
    const start = performance.now();
    socket.onmessage = (event: MessageEvent) => {
      clearTimeout(timer);
      if (event.data === message) resolvePromise(performance.now() - start);
      else reject(new Error(`The echo was ${String(event.data)}, not ${message}`));
    };
    socket.send(message);
  });
}

/**
 * SOCKETS WebSockets opened to `url` (50 opening at a time), left idle for HOLD_MS, then each
 * echoing one message, one socket at a time; then closed.
 */
async function heldSockets(
  url: string,
  headers: Record<string, string>,
  gatewayPid: number | undefined,
): Promise<{ held: number; rssGrowth: number; echoes: number[] }> {
  const rss = (): number => (gatewayPid === undefined ? 0 : rssBytes(gatewayPid));
  const before = rss();
  const sockets: WebSocket[] = [];
  await batch(SOCKETS, 50, async () => {
    sockets.push(await openSocket(url, headers));
  });
  await new Promise((resolvePromise) => setTimeout(resolvePromise, HOLD_MS));
  const rssGrowth = rss() - before;
  const held = sockets.filter((s) => s.readyState === WebSocket.OPEN).length;
  const echoes: number[] = [];
  for (const [i, socket] of sockets.entries()) echoes.push(await echoMs(socket, `echo ${i}`));
  for (const socket of sockets) socket.close();
  return { held, rssGrowth, echoes };
}

/** Each bench engine's activity annotation writes, seen by a watch: the times its value changed. */
function activityWrites(
  kubeConfig: Parameters<typeof customResources>[0],
  engines: ReadonlySet<string>,
): {
  writes: Map<string, number[]>;
  collection: WatchedCollection<true>;
} {
  const writes = new Map<string, number[]>();
  const latest = new Map<string, string | undefined>();
  const collection = new WatchedCollection<true>({
    kubeConfig,
    ...customResources(kubeConfig, NAMESPACE, 'notebookengines'),
    keep: (object: KubernetesObject) => {
      const name = object.metadata?.name ?? '';
      const value = object.metadata?.annotations?.[LAST_ACTIVITY_ANNOTATION];
      if (engines.has(name) && latest.has(name) && latest.get(name) !== value)
        writes.set(name, [...(writes.get(name) ?? []), performance.now()]);
      latest.set(name, value);
      return true;
    },
    log: pino({ level: 'silent' }),
    what: 'notebook engines',
  });
  return { writes, collection };
}

const rows: { measure: string; proxy: string; direct: string; ratio: string; goal: string }[] = [];
const report = (row: (typeof rows)[number]): void => {
  rows.push(row);
  console.error(`measured: ${Object.values(row).join(' | ')}`);
};
const ms = (value: number): string => `${value.toFixed(2)} ms`;
/** A difference in milliseconds, signed. */
const added = (value: number): string => `${value < 0 ? '−' : '+'}${ms(Math.abs(value))}`;

const cluster = await startCluster({
  realNode: true,
  nodes: { cpuNodes: 1, gpuNodes: 0, gpusPerNode: 0 },
  log: (message) => {
    console.error(message);
  },
});
try {
  await cluster.kubectl(['apply', '-f', 'crds']);
  await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  const identity = await startLocalIdentity({ host: '127.0.0.1', port: 0, accessTokenTtlSeconds: 4 * 3600 });
  const restPort = await freePort();
  const gatewayUrl = `http://127.0.0.1:${restPort}`;
  // The gateway in a process of its own, as deployed: its memory is its own, and the benchmark's
  // clients do not share its event loop. A fresh one (same port) before each memory measure.
  const startGatewayProcess = async (): Promise<ProductProcess> => {
    const child = new ProductProcess('gateway', 'gateway/src/main.ts', {
      PATH: process.env['PATH'] ?? '',
      KUBECONFIG: cluster.kubeconfigPath,
      AIEM_NAMESPACE: NAMESPACE,
      AIEM_HOST: '127.0.0.1',
      AIEM_REST_PORT: String(restPort),
      AIEM_GRPC_PORT: '0',
      AIEM_PUBLIC_URL: gatewayUrl,
      AIEM_LOG_LEVEL: 'info',
      // V8 settings to try on the gateway, e.g. a heap limit (`--max-old-space-size=192`).
      NODE_OPTIONS: process.env['AIEM_GATEWAY_NODE_OPTIONS'] ?? '',
      ...identity.environment,
    });
    await child.waitForLog('caches in sync');
    return child;
  };
  let gateway = await startGatewayProcess();
  const operator = await startOperator({
    kubeConfig: cluster.kubeConfig,
    namespace: NAMESPACE,
    settings: { publicUrl: gatewayUrl },
    log: pino({ level: 'silent' }),
  });
  const token = (who: string): string => identity.users[who]?.accessToken ?? '';
  const alice = { authorization: `Bearer ${token('alice')}` };
  const rest = async (
    method: string,
    path: string,
    body?: unknown,
    who = 'alice',
  ): Promise<Record<string, unknown>> => {
    const response = await fetch(`${gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token(who)}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };

  // The real-node catalogue, and a profile whose engines run the benchmark's server.
  const images = cluster.realNode?.images ?? [];
  await createCatalogue(gatewayUrl, token('admin'), realCatalogue(images));
  const [profile] = realCatalogue(images).filter((entry) => entry.collection === 'notebookEngineProfiles');
  const template = dump({
    spec: {
      ...(load(realNodePlacement()) as { spec: object }).spec,
      containers: [
        {
          name: 'notebook',
          command: ['/opt/node/node', '/opt/bench/engine.ts'],
          volumeMounts: [
            { name: 'bench-node', mountPath: '/opt/node', readOnly: true },
            { name: 'bench-engine', mountPath: '/opt/bench/engine.ts', readOnly: true },
          ],
        },
      ],
      volumes: [
        { name: 'bench-node', hostPath: { path: dirname(process.execPath), type: 'Directory' } },
        { name: 'bench-engine', hostPath: { path: ENGINE_SERVER, type: 'File' } },
      ],
    },
  });
  await rest(
    'POST',
    '/v1/workspaces/global/notebookEngineProfiles?notebookEngineProfileId=bench',
    { ...profile?.body, yamlPodTemplateSpec: template },
    'admin',
  );
  /** Resolves once `path` answers 200 through the proxy. */
  const answers = (path: string, timeoutMs: number): Promise<boolean> =>
    waitFor(
      async () => {
        const r = await fetch(`${gatewayUrl}${path}`, { headers: alice });
        await r.arrayBuffer();
        return r.status === 200 ? true : undefined;
      },
      { what: `${path} to answer through the proxy`, timeoutMs },
    );
  /** The address of the one engine pod on the real node. */
  const enginePod = async (): Promise<string> => {
    const pods = await core.listNamespacedPod({ namespace: NAMESPACE });
    const ip = pods.items.find((pod) => pod.spec?.nodeName === REAL_NODE.name)?.status?.podIP;
    if (ip === undefined) throw new Error('The benchmark engine has no pod address');
    return ip;
  };

  // A1 against a real engine first, alone on the node: JupyterLab's /api/status in a notebook
  // engine of the real-node catalogue, as users open it. (Its server, not the proxy, sets the pace.)
  const jupyterPath = `/workspaces/${WORKSPACE}/notebookEngines/jupyter`;
  await rest('POST', `/v1/workspaces/${WORKSPACE}/notebookEngines?notebookEngineId=jupyter`, {
    profile: 'workspaces/global/notebookEngineProfiles/real',
    notebookImage: 'workspaces/global/notebookEngineImages/real',
  });
  await answers(`${jupyterPath}/api/status`, 300_000);
  const jupyterIp = await enginePod();
  const jupyter = { proxy: [] as Load[], direct: [] as Load[] };
  for (let round = 0; round < 2; round++) {
    const load = { connections: CONNECTIONS, seconds: SECONDS };
    jupyter.direct.push(await cannon(`http://${jupyterIp}:8888${jupyterPath}/api/status`, alice, load));
    jupyter.proxy.push(await cannon(`${gatewayUrl}${jupyterPath}/api/status`, alice, load));
  }
  const [jupyterProxy, jupyterDirect] = [merged(jupyter.proxy), merged(jupyter.direct)];
  report({
    measure: `A1 JupyterLab's /api/status, ${CONNECTIONS} keep-alive connections, 2 × ${SECONDS} s (requests/s)`,
    proxy: jupyterProxy.perSecond.toFixed(0),
    direct: jupyterDirect.perSecond.toFixed(0),
    ratio: (jupyterProxy.perSecond / jupyterDirect.perSecond).toFixed(2),
    goal: '≥ 0.8',
  });
  const [p50JupyterProxy, p50JupyterDirect] = [
    percentile(jupyterProxy.times, 0.5),
    percentile(jupyterDirect.times, 0.5),
  ];
  report({
    measure: `A1 JupyterLab p50 at ${CONNECTIONS} connections (added)`,
    proxy: ms(p50JupyterProxy),
    direct: ms(p50JupyterDirect),
    ratio: added(p50JupyterProxy - p50JupyterDirect),
    goal: '≤ +1 ms',
  });
  await rest('DELETE', `/v1/workspaces/${WORKSPACE}/notebookEngines/jupyter`);
  await waitFor(
    async () =>
      (await core.listNamespacedPod({ namespace: NAMESPACE })).items.length === 0 ? true : undefined,
    { what: 'the JupyterLab engine to be gone', timeoutMs: 120_000 },
  );

  // Then the proxy's own ceiling: a server that costs as little as one can.
  const engineBody = {
    profile: 'workspaces/global/notebookEngineProfiles/bench',
    notebookImage: 'workspaces/global/notebookEngineImages/real',
  };
  await rest('POST', `/v1/workspaces/${WORKSPACE}/notebookEngines?notebookEngineId=${ENGINE}`, engineBody);
  const enginePath = `/workspaces/${WORKSPACE}/notebookEngines/${ENGINE}`;
  await answers(`${enginePath}/api/status`, 300_000);
  const podIp = await enginePod();
  const proxied = `${gatewayUrl}${enginePath}`;
  const direct = `http://${podIp}:8888${enginePath}`;

  // A1: small GETs, 32 connections, in turn twice; then over one connection.
  const loads: { proxy: Load[]; direct: Load[] } = { proxy: [], direct: [] };
  for (let round = 0; round < 2; round++) {
    const load = { connections: CONNECTIONS, seconds: SECONDS };
    loads.direct.push(await cannon(`${direct}/api/status`, alice, load));
    loads.proxy.push(await cannon(`${proxied}/api/status`, alice, load));
  }
  const [viaProxy, straight] = [merged(loads.proxy), merged(loads.direct)];
  if (viaProxy.failed + straight.failed > 0)
    console.error(`A1: ${viaProxy.failed} failed through the proxy, ${straight.failed} direct`);
  report({
    measure: `A1 small GET, ${CONNECTIONS} keep-alive connections, 2 × ${SECONDS} s (requests/s)`,
    proxy: viaProxy.perSecond.toFixed(0),
    direct: straight.perSecond.toFixed(0),
    ratio: (viaProxy.perSecond / straight.perSecond).toFixed(2),
    goal: '≥ 0.8',
  });
  const [p50Proxy, p50Direct] = [percentile(viaProxy.times, 0.5), percentile(straight.times, 0.5)];
  report({
    measure: `A1 p50 of a request at ${CONNECTIONS} connections (added)`,
    proxy: ms(p50Proxy),
    direct: ms(p50Direct),
    ratio: added(p50Proxy - p50Direct),
    goal: '≤ +1 ms',
  });
  const single = { connections: 1, seconds: SECONDS / 2 };
  const [oneProxy, oneDirect] = [
    await cannon(`${proxied}/api/status`, alice, single),
    await cannon(`${direct}/api/status`, alice, single),
  ];
  const [p50OneProxy, p50OneDirect] = [percentile(oneProxy.times, 0.5), percentile(oneDirect.times, 0.5)];
  report({
    measure: 'A1 p50 of a request over one connection (added)',
    proxy: ms(p50OneProxy),
    direct: ms(p50OneDirect),
    ratio: added(p50OneProxy - p50OneDirect),
    goal: '≤ +1 ms',
  });

  /**
   * A fresh gateway process for a memory measure, warmed up by `warmUp` through its proxy (code
   * loaded, connections made), then left to settle: what grows after that is the measure's.
   */
  const freshGateway = async (warmUp: () => Promise<unknown>): Promise<void> => {
    await gateway.stop();
    gateway = await startGatewayProcess();
    await answers(`${enginePath}/api/status`, 60_000);
    await warmUp();
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 2_000));
  };

  // A2: a large upload and download each way, streamed.
  await freshGateway(() => transfers(proxied, alice, 16 * MIB));
  const directTransfer = await transfers(direct, alice, TRANSFER_BYTES);
  const proxyTransfer = await rssDuring(gateway.pid, () => transfers(proxied, alice, TRANSFER_BYTES));
  const gib = (TRANSFER_BYTES / 2 ** 30).toFixed(TRANSFER_BYTES % 2 ** 30 === 0 ? 0 : 2);
  for (const way of ['up', 'down'] as const) {
    report({
      measure: `A2 ${gib} GiB ${way === 'up' ? 'upload' : 'download'}, streamed (MiB/s)`,
      proxy: proxyTransfer.result[way].toFixed(0),
      direct: directTransfer[way].toFixed(0),
      ratio: (proxyTransfer.result[way] / directTransfer[way]).toFixed(2),
      goal: '≥ 0.8',
    });
  }
  report({
    measure: 'A2 gateway RSS growth during the transfers',
    proxy: `${((proxyTransfer.peak - proxyTransfer.before) / MIB).toFixed(0)} MiB (from ${(proxyTransfer.before / MIB).toFixed(0)})`,
    direct: '',
    ratio: '',
    goal: '≤ 64 MiB',
  });

  // A3: idle WebSockets held at once, then an echo through each.
  const wsProxied = `${proxied.replace(/^http/, 'ws')}/api/kernels/k/channels`;
  const wsDirect = `${direct.replace(/^http/, 'ws')}/api/kernels/k/channels`;
  await freshGateway(async () => {
    const sockets = await Promise.all(Array.from({ length: 10 }, () => openSocket(wsProxied, alice)));
    for (const socket of sockets) await echoMs(socket, 'warm-up');
    for (const socket of sockets) socket.close();
  });
  const socketsProxied = await heldSockets(wsProxied, alice, gateway.pid);
  await new Promise((resolvePromise) => setTimeout(resolvePromise, 2_000));
  const socketsDirect = await heldSockets(wsDirect, alice, undefined);
  report({
    measure: `A3 WebSockets open at once, idle ${HOLD_MS / 1000} s, then each echoing`,
    proxy: `${socketsProxied.held} of ${SOCKETS}`,
    direct: `${socketsDirect.held} of ${SOCKETS}`,
    ratio: '',
    goal: 'all held',
  });
  report({
    measure: `A3 gateway RSS growth holding ${SOCKETS} WebSockets`,
    proxy: `${(socketsProxied.rssGrowth / MIB).toFixed(0)} MiB`,
    direct: '',
    ratio: '',
    goal: '≤ 150 MiB',
  });
  const [echoProxy, echoDirect] = [
    percentile(socketsProxied.echoes, 0.99),
    percentile(socketsDirect.echoes, 0.99),
  ];
  report({
    measure: `A3 echo p99, one message through each of ${SOCKETS} sockets (added)`,
    proxy: ms(echoProxy),
    direct: ms(echoDirect),
    ratio: added(echoProxy - echoDirect),
    goal: '≤ +5 ms',
  });

  // A4: the operator stops; the benchmark plays it for ACTIVITY_ENGINES engines that all reach
  // the one real server, and counts the gateway's activity writes while traffic flows.
  await operator.stop();
  const custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  const discovery = cluster.kubeConfig.makeApiClient(DiscoveryV1Api);
  const target = { group: 'engine.h2o.ai', version: 'v1', namespace: NAMESPACE, plural: 'notebookengines' };
  const ids = Array.from({ length: ACTIVITY_ENGINES }, (_, i) => `a${i}`);
  const names = new Set(ids.map((id) => objectName(WORKSPACE, id) ?? ''));
  await batch(ids.length, 8, async (i) => {
    const id = ids[i] ?? '';
    const name = objectName(WORKSPACE, id) ?? '';
    await rest('POST', `/v1/workspaces/${WORKSPACE}/notebookEngines?notebookEngineId=${id}`, engineBody);
    const object = (await custom.patchNamespacedCustomObjectStatus({
      ...target,
      name,
      body: [{ op: 'add', path: '/status', value: { state: 'STATE_RUNNING' } }],
    })) as KubernetesObject;
    await discovery.createNamespacedEndpointSlice({
      namespace: NAMESPACE,
      body: {
        metadata: {
          name: `bench-${id}`,
          labels: {
            'kubernetes.io/service-name': workloadName('nb', name),
            [ENGINE_UID_LABEL]: object.metadata?.uid ?? '',
          },
        },
        addressType: 'IPv4',
        endpoints: [{ addresses: [podIp], conditions: { ready: true } }],
        ports: [{ name: 'http', port: 8888, protocol: 'TCP' }],
      },
    });
  });
  const watched = activityWrites(cluster.kubeConfig, names);
  await watched.collection.start();
  const started = performance.now();
  // Each engine's first use: it answers through the proxy (its first activity write follows).
  await batch(ids.length, 8, (i) =>
    answers(`/workspaces/${WORKSPACE}/notebookEngines/${ids[i] ?? ''}/api`, 60_000),
  );
  console.error(`A4: ${ids.length} engines answer; traffic for ${ACTIVITY_SECONDS} s`);
  const traffic = await autocannon({
    url: gatewayUrl,
    headers: alice,
    connections: 8,
    overallRate: ACTIVITY_RATE,
    duration: ACTIVITY_SECONDS,
    requests: ids.map((id) => ({
      method: 'GET',
      path: `/workspaces/${WORKSPACE}/notebookEngines/${id}/api`,
    })),
  });
  const minutes = (performance.now() - started) / 60_000;
  await watched.collection.stop();
  const counts = ids.map((id) => watched.writes.get(objectName(WORKSPACE, id) ?? '')?.length ?? 0);
  const total = counts.reduce((sum, n) => sum + n, 0);
  const gaps = [...watched.writes.values()].flatMap((times) =>
    times.slice(1).map((t, i) => t - (times[i] ?? 0)),
  );
  report({
    measure: `A4 activity writes per engine per minute, ${ids.length} engines, ${minutes.toFixed(1)} min of traffic (${traffic.non2xx + traffic.errors} failed)`,
    proxy: `${(total / ids.length / minutes).toFixed(2)}; after each engine's first: ${((total - ids.length) / ids.length / minutes).toFixed(2)}`,
    direct: '',
    ratio: `shortest gap ${gaps.length === 0 ? 'none' : `${(Math.min(...gaps) / 1000).toFixed(1)} s`}; ${counts.filter((n) => n > 0).length} engines written`,
    goal: '≤ 1',
  });
  await gateway.stop();
  await identity.provider.stop();
} finally {
  await cluster.stop();
}

console.log('\n| measure | through the proxy | direct | ratio | goal |\n| --- | --- | --- | --- | --- |');
for (const row of rows) console.log(`| ${Object.values(row).join(' | ')} |`);
// The same figures as JSON, for comparing runs.
const out = join(process.env['AIEM_RUN_DIR'] ?? '.run', 'bench-access.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify({ at: new Date().toISOString(), rows }, null, 2)}\n`);
console.log(`written to ${out}`);
