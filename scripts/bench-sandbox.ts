/**
 * `make bench-sandbox`: what the API adds to work in a sandbox, against the Kubernetes API doing
 * the same work itself, in the same run on the same cluster. Both sides reach the sandbox through
 * the apiserver's pods/exec with the same client (the gateway's PodExec):
 *
 * - S1: a process (`true`) created and started through the API and waited for, against one
 *   pods/exec of `true`;
 * - S2: a 1 MiB file written and read back through the API (REST, base64 in JSON), against the
 *   same bytes written by one exec (`head -c`) and read by another (`cat`);
 * - S3: the first chunk of a process's streamed output, from sending the start call to the chunk
 *   arriving on the already open REST stream, against the first stdout frame of an exec of the
 *   same command from its call.
 *
 * Medians of N rounds, one call at a time. The local cluster's KWOK runs the commands on this
 * host, so the figures measure the API's path, not a container runtime. Prints a table; README
 * records a run.
 */
import { performance } from 'node:perf_hooks';
import { CoreV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { startGateway } from '../gateway/src/gateway.ts';
import { PodExec, sandboxScript } from '../gateway/src/sandbox/pod-exec.ts';
import { apiHandlers } from '../gateway/src/services/api.ts';
import { objectName } from '../gateway/src/store/names.ts';
import { ResourceStore } from '../gateway/src/store/store.ts';
import { startOperator } from '../operator/src/operator.ts';
import { SANDBOX_CONTAINER, sandboxPodName } from '../shared/workloads.ts';
import { startCluster } from '../test/cluster/cluster.ts';
import { waitFor } from '../test/cluster/wait.ts';
import { allowAll, developmentIdentity } from '../test/helpers/development-identity.ts';

const NAMESPACE = 'bench-sandbox';
const ROUNDS = Number(process.env['AIEM_BENCH_SANDBOX_ROUNDS'] ?? 30);
const FILE = Buffer.alloc(1024 * 1024, 'x');

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function timed(call: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 3; i++) await call(); // warm-up: connections, JIT
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    await call();
    times.push(performance.now() - start);
  }
  return median(times);
}

const cluster = await startCluster({ nodes: { cpuNodes: 1, gpuNodes: 0, gpusPerNode: 0 } });
try {
  await cluster.kubectl(['apply', '-f', 'crds/']);
  await cluster.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  await cluster.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NAMESPACE } } });
  const store = new ResourceStore(cluster.kubeConfig, NAMESPACE);
  await store.startCaches();
  const exec = new PodExec(cluster.kubeConfig);
  const gateway = await startGateway({
    host: '127.0.0.1',
    restPort: 0,
    grpcPort: 0,
    handlers: apiHandlers({ store, authorizer: allowAll, podExec: exec }),
    authenticate: developmentIdentity,
    version: 'bench',
  });
  const operator = await startOperator({
    kubeConfig: cluster.kubeConfig,
    namespace: NAMESPACE,
    settings: { publicUrl: gateway.restUrl },
    log: pino({ level: 'silent' }),
  });
  const rest = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${gateway.restUrl}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  const ws = '/v1/workspaces%2Fw';
  await rest('POST', `${ws}/sandboxEngineImages?sandboxEngineImageId=py`, {
    image: 'python:3.12-slim',
    enabled: true,
  });
  await rest('POST', `${ws}/sandboxEngineTemplates?sandboxEngineTemplateId=t`, {
    memoryBytesLimit: String(1024 ** 3),
    maxIdleDuration: '0s',
    maxRunningDuration: '0s',
    enabled: true,
  });
  await rest('POST', `${ws}/sandboxEngines?sandboxEngineId=e`, {
    sandboxEngineImage: 'workspaces/w/sandboxEngineImages/py',
    sandboxEngineTemplate: 'workspaces/w/sandboxEngineTemplates/t',
  });
  const engine = '/v1/workspaces%2Fw%2FsandboxEngines%2Fe';
  await waitFor(
    async () =>
      ((await rest('GET', engine))['sandboxEngine'] as { state: string }).state === 'STATE_RUNNING'
        ? true
        : undefined,
    { timeoutMs: 120_000, what: 'the sandbox to run' },
  );
  const pod = {
    namespace: NAMESPACE,
    pod: sandboxPodName(objectName('w', 'e') ?? ''),
    container: SANDBOX_CONTAINER,
  };
  await cluster.sandboxes.ready({ namespace: NAMESPACE, name: pod.pod });

  let n = 0;
  const apiProcess = async (): Promise<void> => {
    const created = await rest('POST', `${engine}/processes?processId=p${++n}&autoRun=True`, {
      command: 'true',
    });
    const name = encodeURIComponent((created['process'] as { name: string }).name);
    await rest('POST', `/v1/${name}:wait`, {});
  };
  const rawProcess = (): Promise<number> => exec.run(pod, sandboxScript('cd "$R/" && true', []));
  const s1 = [await timed(apiProcess), await timed(rawProcess)];

  const path = '/workspace/bench.bin';
  const apiFile = async (): Promise<void> => {
    await rest('POST', `${engine}/filesystem:writeFile`, {
      path,
      content: FILE.toString('base64'),
      createParentDirectories: true,
    });
    const read = await rest('GET', `${engine}/filesystem:readFile?path=${encodeURIComponent(path)}`);
    if (Buffer.from(read['content'] as string, 'base64').length !== FILE.length)
      throw new Error('short read');
  };
  const rawFile = async (): Promise<void> => {
    await exec.run(
      pod,
      sandboxScript('mkdir -p "$R/workspace" && head -c "$1" > "$R$2"', [String(FILE.length), path]),
      {
        stdin: FILE,
      },
    );
    let bytes = 0;
    await exec.run(pod, sandboxScript('cat "$R$1"', [path]), {
      onStdout: (c) => {
        bytes += c.length;
      },
    });
    if (bytes !== FILE.length) throw new Error('short read');
  };
  const s2 = [await timed(apiFile), await timed(rawFile)];

  const command = ['sh', '-c', 'echo ready; sleep 0.2'];
  const apiFirstChunk = async (): Promise<void> => {
    const created = await rest('POST', `${engine}/processes?processId=s${++n}`, {
      command: command[0],
      args: command.slice(1),
    });
    const name = encodeURIComponent((created['process'] as { name: string }).name);
    const stream = await fetch(`${gateway.restUrl}/v1/${name}:streamOutput`);
    const reader = stream.body?.getReader();
    const start = performance.now();
    await rest('POST', `/v1/${name}:start`, {});
    await reader?.read();
    firstChunks.push(performance.now() - start);
    await reader?.cancel();
  };
  const firstChunks: number[] = [];
  const rawFirstChunk = async (): Promise<void> => {
    const start = performance.now();
    await new Promise<void>((resolve, reject) => {
      exec
        .run(pod, sandboxScript('"$@"', command), {
          onStdout: () => {
            resolve();
          },
        })
        .catch(reject);
    });
    rawChunks.push(performance.now() - start);
  };
  const rawChunks: number[] = [];
  await timed(apiFirstChunk);
  await timed(rawFirstChunk);
  const s3 = [median(firstChunks.slice(3)), median(rawChunks.slice(3))];

  const row = (what: string, [api = NaN, kube = NaN]: number[]): string =>
    `| ${what} | ${api.toFixed(1)} ms | ${kube.toFixed(1)} ms | ${(api / kube).toFixed(2)} |`;
  console.log(`\nSandbox work, medians of ${ROUNDS} rounds (API vs the Kubernetes API's pods/exec alone)\n`);
  console.log('| measure | API | Kubernetes API | ratio |\n| --- | --- | --- | --- |');
  console.log(row('S1 run `true` to its end', s1));
  console.log(row('S2 write and read back 1 MiB', s2));
  console.log(row('S3 first streamed output after start', s3));
  await operator.stop();
  await gateway.stop();
  await store.stopCaches();
} finally {
  await cluster.stop();
}
