/**
 * The gateway process, as a container runs it: the API over REST and gRPC for the custom
 * resources of AIEM_NAMESPACE, with the identity and policy settings of the environment (see the
 * README's Configuration table). The kubeconfig comes from KUBECONFIG, or from the pod's service
 * account inside a cluster. `make run` starts the same gateway in its own process instead.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { pooled } from '../../shared/kube-transport.ts';
import { authFromEnvironment } from './auth/config.ts';
import { startWebhook, type Webhook } from './admission/webhook.ts';
import { loginFromEnvironment } from './access/login-config.ts';
import { startGateway } from './gateway.ts';
import { log } from './log.ts';
import { secretLicense } from './license/license-source.ts';
import { apiHandlers } from './services/api.ts';
import { PORTS_URL_SETTING, type PublicPorts } from './sandbox/port-service.ts';
import { ResourceStore } from './store/store.ts';
import { AdmittingStore } from './store/admitting-store.ts';

const env = (name: string, fallback: string): string => process.env[name] ?? fallback;

/** A whole number from the environment, at most `max`; `what` names it in the error. */
function integer(name: string, fallback: number, what: string, max = Number.MAX_SAFE_INTEGER): number {
  const value = Number(env(name, String(fallback)));
  if (!Number.isInteger(value) || value < 0 || value > max) throw new Error(`${name} must be ${what}`);
  return value;
}

/** A duration in milliseconds from the environment. */
const milliseconds = (name: string, fallback: number): number =>
  integer(name, fallback, 'a number of milliseconds');
/** A port number from the environment; 0 picks a free one. */
const port = (name: string, fallback: number): number => integer(name, fallback, 'a port number', 65535);

/** Where public sandbox ports are published (AIEM_SANDBOX_PORTS_URL); none when unset. */
function publicPorts(): { publicPorts?: PublicPorts } {
  const url = env(PORTS_URL_SETTING, '');
  if (url === '') return {};
  if (!URL.canParse(url))
    throw new Error(`${PORTS_URL_SETTING} must be a URL, e.g. https://ports.example.com`);
  const ingressClassName = env('AIEM_SANDBOX_PORTS_INGRESS_CLASS', '');
  return { publicPorts: { url, ...(ingressClassName === '' ? {} : { ingressClassName }) } };
}

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

let stopping = false;
try {
  const host = env('AIEM_HOST', '127.0.0.1');
  const restPort = port('AIEM_REST_PORT', 8080);
  const grpcPort = port('AIEM_GRPC_PORT', 9090);
  const namespace = env('AIEM_NAMESPACE', 'ai-engine-manager');
  // On SIGTERM the gateway first reports not ready while it still serves, so that load balancers
  // and the Service's endpoints stop sending it calls; then it closes its listeners and lets calls
  // in flight finish. The two together stay inside the pod's termination grace period.
  const shutdownDelayMs = milliseconds('AIEM_SHUTDOWN_DELAY_MS', 5_000);
  const drainMs = milliseconds('AIEM_DRAIN_TIMEOUT_MS', 20_000);
  const auth = authFromEnvironment();
  const kubeConfig = pooled(new KubeConfig());
  kubeConfig.loadFromDefault();
  const store = new ResourceStore(kubeConfig, namespace);
  // The gateway listens at once and is ready (`/readyz`) once its caches hold the cluster's
  // resources; until then calls answer UNAVAILABLE.
  store.startCaches().then(
    () => {
      log.info('caches in sync');
    },
    (error: unknown) => {
      log.error({ err: error }, 'caches failed to start');
    },
  );
  const publicUrl = env('AIEM_PUBLIC_URL', `http://${host}:${restPort}`);
  const handlers = apiHandlers({
    // The handlers also answer the admission reviews of kubectl writes.
    store: new AdmittingStore(store),
    authorizer: auth.authorizer,
    publicUrl,
    daiLicense: secretLicense(kubeConfig, namespace, env('AIEM_DAI_LICENSE_SECRET', 'dai-license')),
    // Processes whose replica stopped are settled within about a minute (two looks in a row).
    processSweepEveryMs: 30_000,
    ...publicPorts(),
  });
  const gateway = await startGateway({
    host,
    restPort,
    grpcPort,
    handlers,
    authenticate: auth.authenticate,
    version,
    ready: () => !stopping && store.ready,
    // Engines' addresses (apiUrl, loginUrl, :access) served through the access proxy; DAI
    // verifies the platform's token itself (OpenID), the other engines never see it.
    access: {
      store,
      authorizer: auth.authorizer,
      publicUrl,
      forwardAuthorization: ['daiEngines'],
      login: loginFromEnvironment(process.env, publicUrl),
    },
  });
  // Admission reviews of kubectl's writes, served where the chart mounted a certificate.
  const certDir = process.env['AIEM_WEBHOOK_CERT_DIR'];
  const webhook: Webhook | undefined =
    certDir === undefined || certDir === ''
      ? undefined
      : await startWebhook({
          host,
          port: port('AIEM_WEBHOOK_PORT', 8443),
          certFile: join(certDir, 'tls.crt'),
          keyFile: join(certDir, 'tls.key'),
          store,
          handlers,
          namespace,
          mapping: {
            usernamePrefix: env('AIEM_KUBERNETES_USERNAME_PREFIX', ''),
            groupsPrefix: env('AIEM_KUBERNETES_GROUPS_PREFIX', ''),
          },
        });
  log.info(
    {
      restUrl: gateway.restUrl,
      grpcAddress: gateway.grpcAddress,
      webhookUrl: webhook?.url,
      namespace,
      version,
    },
    'Started gateway',
  );
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    gateway.notServing();
    log.info({ shutdownDelayMs }, 'Stopping gateway: not ready, still serving while callers turn away');
    const finish = async (): Promise<void> => {
      await new Promise((resolve) => setTimeout(resolve, shutdownDelayMs));
      log.info({ drainMs }, 'Closing listeners; finishing calls in flight');
      await Promise.all([gateway.stop(drainMs), webhook?.stop()]);
      auth.close();
      await store.stopCaches();
      log.info('Stopped gateway');
    };
    finish().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} catch (error: unknown) {
  // A setting is missing or wrong, or a port is taken: say which, and exit for a restart.
  log.fatal({ err: error }, 'Failed to start gateway');
  process.exit(1);
}
