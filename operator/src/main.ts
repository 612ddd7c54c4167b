/**
 * The operator process: waits for leadership on a Lease, then runs the engine controllers, and
 * serves Prometheus metrics and health on its own port. Configuration comes from the environment
 * (see the README); the kubeconfig from KUBECONFIG, or the pod's service account in a cluster.
 */
import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { KubeConfig } from '@kubernetes/client-node';
import { pooled } from '../../shared/kube-transport.ts';
import { pino } from 'pino';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { networkPeers } from './desired/network-peers.ts';
import { readQueueingConfig } from './queueing/config.ts';
import { DEFAULT_THROUGHPUT, startOperator, type Operator } from './operator.ts';
import { LeaderElector, LEASE_TIMING, type Leadership } from './runtime/leader-election.ts';

const env = (name: string, fallback: string): string => process.env[name] ?? fallback;

// V8 lets the heap grow to several times what is live while much is allocated (the first lists,
// thousands of reconciles at start) and keeps it: an operator holding a few MiB of copies stood at
// hundreds of MiB resident. Optimized for size, it grows the heap in smaller steps; V8 reads the
// flag at each collection, so it takes effect when set here, and the heap is not capped.
setFlagsFromString(env('AIEM_OPERATOR_V8_FLAGS', '--optimize-for-size'));

const log = pino({ level: env('AIEM_LOG_LEVEL', 'info'), base: { component: 'operator' } });
const kubeConfig = pooled(new KubeConfig());
kubeConfig.loadFromDefault();
const namespace = env('AIEM_NAMESPACE', 'ai-engine-manager');
const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** What the process is doing now; read by the health endpoints and the signal handlers. */
const state: { operator?: Operator; leadership?: Leadership; leading: boolean; stopping: boolean } = {
  leading: false,
  stopping: false,
};

function serve(port: number): Server {
  const server = createServer((request, response) => {
    const send = (status: number, body: string, type = 'text/plain'): void => {
      response.writeHead(status, { 'Content-Type': type }).end(body);
    };
    if (request.url === '/metrics') {
      registry.metrics().then(
        (text) => {
          send(200, text, registry.contentType);
        },
        () => {
          send(500, 'metrics unavailable\n');
        },
      );
    } else if (request.url === '/healthz') send(200, 'ok\n');
    // Ready: standing by while able to take over (the apiserver answers), or leading with
    // controllers started.
    else if (request.url === '/readyz') {
      if (state.leading) send(state.operator ? 200 : 503, 'leading\n');
      else if (elector.reachable()) send(200, 'standby\n');
      else send(503, 'standby; the apiserver does not answer\n');
    } else send(404, 'not found\n');
  });
  server.listen(port, env('AIEM_OPERATOR_HOST', '0.0.0.0'));
  return server;
}

// Read before anything starts: a malformed setting stops the process with the reason.
const engineNetworkPeers = networkPeers(process.env['AIEM_ENGINE_NETWORK_PEERS']);
const publishedPortPeers = networkPeers(process.env['AIEM_SANDBOX_PORTS_PEERS'], 'AIEM_SANDBOX_PORTS_PEERS');
const queueing = readQueueingConfig(process.env['AIEM_QUEUEING_CONFIG']);
const server = serve(Number(env('AIEM_OPERATOR_PORT', '8081')));
const elector = new LeaderElector({
  kubeConfig,
  namespace,
  name: 'ai-engine-manager-operator',
  identity: env('AIEM_OPERATOR_ID', env('POD_NAME', hostname())),
  leaseDurationMs: Number(env('AIEM_LEASE_DURATION_MS', String(LEASE_TIMING.leaseDurationMs))),
  renewDeadlineMs: Number(env('AIEM_LEASE_RENEW_DEADLINE_MS', String(LEASE_TIMING.renewDeadlineMs))),
  retryPeriodMs: Number(env('AIEM_LEASE_RETRY_PERIOD_MS', String(LEASE_TIMING.retryPeriodMs))),
  // Once per change: a standby that cannot reach the apiserver could not take over.
  onReachableChange: (reachable, error) => {
    if (reachable) log.info({ leading: state.leading }, 'Regained contact with the apiserver');
    else log.warn({ leading: state.leading, err: error }, 'Lost contact with the apiserver');
  },
});

async function shutDown(code: number): Promise<never> {
  state.stopping = true;
  await state.operator?.stop();
  // Give the lease up so that a successor need not wait for it to expire.
  await state.leadership?.release();
  server.close();
  process.exit(code);
}
process.on('SIGTERM', () => void shutDown(0));
process.on('SIGINT', () => void shutDown(0));

log.info({ namespace }, 'waiting for leadership');
const leadership = await elector.acquire();
state.leadership = leadership;
state.leading = true;
log.info('leading; starting controllers');
state.operator = await startOperator({
  kubeConfig,
  namespace,
  settings: {
    publicUrl: env('AIEM_PUBLIC_URL', 'http://127.0.0.1:8080'),
    engineServiceAccount: process.env['AIEM_ENGINE_SERVICE_ACCOUNT'] || undefined,
    sandboxRuntimeClassName: process.env['AIEM_SANDBOX_RUNTIME_CLASS'] || undefined,
    daiLicenseSecret: process.env['AIEM_DAI_LICENSE_SECRET'] || undefined,
    engineNetworkPeers,
    publishedPortPeers,
  },
  log,
  mayAct: () => leadership.mayAct(),
  queueing,
  registry,
  throughput: {
    workers: Number(env('AIEM_OPERATOR_WORKERS', String(DEFAULT_THROUGHPUT.workers))),
    qps: Number(env('AIEM_OPERATOR_QPS', String(DEFAULT_THROUGHPUT.qps))),
    burst: Number(env('AIEM_OPERATOR_BURST', String(DEFAULT_THROUGHPUT.burst))),
  },
});
await leadership.lost;
if (!state.stopping) {
  // Another replica may take over soon: the fence already keeps this one from writing; stop.
  log.error('leadership not renewed within the renew deadline; exiting');
  await shutDown(1);
}
