import { randomBytes } from 'node:crypto';
import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  type Client,
  type ServiceError,
} from '@grpc/grpc-js';
import { CoreV1Api, type KubernetesObject } from '@kubernetes/client-node';
import type { Authorizer } from '../../gateway/src/auth/authorizer.ts';
import type { Authenticate } from '../../gateway/src/call/handler.ts';
import type { UserMapping } from '../../gateway/src/admission/review.ts';
import { startWebhook, type Webhook } from '../../gateway/src/admission/webhook.ts';
import type { AccessOptions } from '../../gateway/src/access/access-proxy.ts';
import { Sessions } from '../../gateway/src/access/session.ts';
import { startGateway, type Gateway } from '../../gateway/src/gateway.ts';
import { SERVICE_DEFINITIONS } from '../../gateway/src/grpc/server.ts';
import { apiHandlers } from '../../gateway/src/services/api.ts';
import { secretLicense } from '../../gateway/src/license/license-source.ts';
import type { PublicPorts } from '../../gateway/src/sandbox/port-service.ts';
import { PodLogs } from '../../gateway/src/store/pod-logs.ts';
import { ResourceStore } from '../../gateway/src/store/store.ts';
import { AdmittingStore } from '../../gateway/src/store/admitting-store.ts';
import type { Cluster, ClusterOptions } from '../cluster/cluster.ts';
import { freePort } from '../cluster/ports.ts';
import { webhookCertificate } from '../cluster/webhooks.ts';
import { pino } from 'pino';
import { startOperator, type Operator } from '../../operator/src/operator.ts';
import { RESOURCE_KINDS } from '../../shared/resources.ts';
import { allowAll, developmentIdentity } from './development-identity.ts';
import { useCluster } from './use-cluster.ts';

/** A REST answer: the HTTP status and the JSON body. */
export interface RestResponse {
  status: number;
  json: Record<string, unknown>;
}

/** The gateway of a test file, on its own control plane, with ways to call it. */
export interface ApiServer {
  cluster: Cluster;
  gateway: Gateway;
  store: ResourceStore;
  /** A REST call; `body` is sent as JSON when given. */
  rest(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<RestResponse>;
  /**
   * A gRPC call of `Service.Method` (short service name, e.g. `DAIEngineProfileService.CreateDAIEngineProfile`),
   * resolving to the response message or rejecting with the ServiceError.
   */
  grpc(rpc: string, request: object, metadata?: Metadata): Promise<Record<string, unknown>>;
  /**
   * Resolves once the gateway's read cache holds this version of a custom resource (or a later
   * one). Writes by others (the operator, a test playing it) reach the gateway's reads within
   * moments; a test that reads through the API right after such a write awaits this first.
   */
  sees(plural: string, object: KubernetesObject): Promise<void>;
  /** The operator, when the options asked for one. */
  operator: Operator | undefined;
  /** The admission webhooks and the CA bundle that trusts them, when the options asked for them. */
  webhook: { url: string; caBundle: string } | undefined;
}

/** Options of {@link useApiServer}. */
export interface ApiServerOptions {
  namespace: string;
  /** Also run the operator on the same namespace. */
  operator?: boolean;
  cluster?: ClusterOptions;
  /** What callers may do; everything when unset. */
  authorizer?: Authorizer;
  /** Who is calling; the stand-in development identity when unset. */
  authenticate?: Authenticate;
  /** Where public sandbox ports are published (the gateway's AIEM_SANDBOX_PORTS_URL). */
  publicPorts?: PublicPorts;
  /** Also serve the admission webhooks (HTTPS on loopback, a certificate of the cluster's CA). */
  admission?: UserMapping;
  /**
   * Browsers sign in to engines' addresses at this identity provider (read once the file's
   * earlier hooks have run); the gateway then listens on a port chosen beforehand, its public URL.
   */
  login?: () => BrowserClient;
}

/**
 * The gateway's port and access settings for browser sign-in at `login`'s provider: a port chosen
 * beforehand, so that the provider knows where sign-ins return to. Any port and no sign-in without.
 */
async function browserSignIn(
  login: (() => BrowserClient) | undefined,
): Promise<{ restPort: number; access: Pick<AccessOptions, 'publicUrl' | 'login'> }> {
  if (login === undefined) return { restPort: 0, access: {} };
  const restPort = await freePort();
  const publicUrl = `http://127.0.0.1:${restPort}`;
  const client = login();
  client.allowRedirect(`${publicUrl}/auth/callback`);
  const sessions = new Sessions({ key: randomBytes(32), publicUrl, ttlSeconds: 3600 });
  return {
    restPort,
    access: {
      publicUrl,
      login: { issuer: client.issuer, clientId: client.clientId, scopes: client.scopes, sessions },
    },
  };
}

/** An identity provider's client for browser sign-in. */
export interface BrowserClient {
  issuer: string;
  clientId: string;
  scopes: string;
  /** Registers the gateway's sign-in return address with the provider. */
  allowRedirect(redirectUri: string): void;
}

/**
 * Starts a control plane with the CRDs, and a gateway serving every implemented RPC, before the
 * tests of the calling file; stops both after them.
 */
/** The labels that pick the gateway's pods, as admitted to engines in tests. */
export const GATEWAY_POD = {
  'app.kubernetes.io/name': 'ai-engine-manager',
  'app.kubernetes.io/component': 'gateway',
};

export function useApiServer(options: ApiServerOptions): () => ApiServer {
  let server: ApiServer | undefined;
  let operator: Operator | undefined;
  let webhook: Webhook | undefined;
  const clients = new Map<string, Client>();
  // Declared before the cluster's own hook so that it runs first: the gateway and operator stop
  // while the cluster still answers.
  afterAll(async () => {
    for (const client of clients.values()) client.close();
    await operator?.stop();
    await webhook?.stop();
    await server?.gateway.stop();
    await server?.store.stopCaches();
  });
  // The CRDs come with the cluster, before its garbage collector starts.
  const cluster = useCluster({ ...options.cluster, crds: true });

  beforeAll(async () => {
    // A cluster running Kueue made the namespaces Kueue manages already.
    await cluster()
      .kubeConfig.makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: options.namespace } } })
      .catch((error: unknown) => {
        if ((error as { code?: number }).code !== 409) throw error;
      });
    const store = new ResourceStore(cluster().kubeConfig, options.namespace);
    await store.startCaches();
    const browser = await browserSignIn(options.login);
    const handlers = apiHandlers({
      // Notebooks' `:access` addresses are this gateway's when it has a known address.
      ...(browser.access.publicUrl === undefined ? {} : { publicUrl: browser.access.publicUrl }),
      // The handlers also answer the admission reviews of kubectl writes.
      store: new AdmittingStore(store),
      authorizer: options.authorizer ?? allowAll,
      podLogs: new PodLogs(cluster().kubeConfig, options.namespace),
      daiLicense: secretLicense(cluster().kubeConfig, options.namespace, 'dai-license'),
      ...(options.publicPorts === undefined ? {} : { publicPorts: options.publicPorts }),
    });
    const gateway = await startGateway({
      host: '127.0.0.1',
      restPort: browser.restPort,
      grpcPort: 0,
      handlers,
      authenticate: options.authenticate ?? developmentIdentity,
      version: 'test',
      ready: () => store.ready,
      // Engines' addresses, as the operator hands them out (its publicUrl is this gateway).
      access: {
        store,
        authorizer: options.authorizer ?? allowAll,
        ...browser.access,
      },
    });
    if (options.operator === true) {
      operator = await startOperator({
        kubeConfig: cluster().kubeConfig,
        namespace: options.namespace,
        // Engines admit what a gateway pod of the chart would be, as the chart configures it.
        settings: {
          publicUrl: gateway.restUrl,
          engineNetworkPeers: [{ podSelector: { matchLabels: GATEWAY_POD } }],
        },
        log: pino({ level: process.env['AIEM_LOG_LEVEL'] ?? 'silent' }),
      });
    }
    let webhookAccess: ApiServer['webhook'];
    if (options.admission !== undefined) {
      const { certFile: cert, keyFile: key, caBundle } = await webhookCertificate(cluster());
      const mapping = options.admission;
      webhook = await startWebhook({
        host: '127.0.0.1',
        port: 0,
        certFile: cert,
        keyFile: key,
        store,
        handlers,
        namespace: options.namespace,
        mapping,
      });
      webhookAccess = { url: webhook.url, caBundle };
    }
    server = {
      cluster: cluster(),
      webhook: webhookAccess,
      gateway,
      store,
      rest: (method, path, body, headers) => restAt(gateway.restUrl, { method, path, body, headers }),
      grpc: (rpc, request, metadata) =>
        grpc(clients, gateway.grpcAddress, { rpc, request, metadata: metadata ?? new Metadata() }),
      sees: (plural, object) => sees(store, plural, object),
      operator,
    };
  });

  return () => {
    if (server === undefined) throw new Error('The API server is not running (did beforeAll fail?)');
    return server;
  };
}

/** A REST call to a gateway at `base`; `body` is sent as JSON when given. */
export async function restAt(
  base: string,
  {
    method,
    path,
    body,
    headers = {},
  }: { method: string; path: string; body?: unknown; headers?: Record<string, string> | undefined },
): Promise<RestResponse> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? null : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

type UnaryMethod = (
  request: object,
  metadata: Metadata,
  callback: (error: ServiceError | null, response: Record<string, unknown>) => void,
) => void;
type StreamMethod = (request: object, metadata: Metadata) => NodeJS.EventEmitter;

function grpc(
  clients: Map<string, Client>,
  address: string,
  { rpc, request, metadata }: { rpc: string; request: object; metadata: Metadata },
): Promise<Record<string, unknown>> {
  const [serviceName = '', method = ''] = rpc.split('.');
  const path = `/ai.h2o.engine.v1.${serviceName}/${method}`;
  const definition = SERVICE_DEFINITIONS.find((d) => Object.values(d).some((m) => m.path === path));
  const key = Object.entries(definition ?? {}).find(([, m]) => m.path === path)?.[0];
  if (definition === undefined || key === undefined) throw new Error(`No RPC ${rpc}`);
  let client = clients.get(serviceName);
  if (client === undefined) {
    const Constructor = makeGenericClientConstructor(definition, serviceName);
    client = new Constructor(address, credentials.createInsecure());
    clients.set(serviceName, client);
  }
  if (definition[key]?.responseStream === true) return streamed(client, key, { request, metadata });
  const call = (client as unknown as Record<string, UnaryMethod>)[key];
  return new Promise((resolvePromise, reject) => {
    call?.call(client, request, metadata, (error, response) => {
      if (error) reject(error);
      else resolvePromise(response);
    });
  });
}

/** A server-streaming call, answered as `{ messages }` once the stream ends, or its error. */
function streamed(
  client: object,
  key: string,
  { request, metadata }: { request: object; metadata: Metadata },
): Promise<Record<string, unknown>> {
  const open = (client as Record<string, StreamMethod>)[key];
  return new Promise((resolvePromise, reject) => {
    const messages: unknown[] = [];
    const stream = open?.call(client, request, metadata);
    stream?.on('data', (message: unknown) => messages.push(message));
    stream?.on('error', reject);
    stream?.on('end', () => {
      resolvePromise({ messages });
    });
  });
}

async function sees(store: ResourceStore, plural: string, object: KubernetesObject): Promise<void> {
  const kind = Object.values(RESOURCE_KINDS).find((k) => k.plural === plural);
  if (kind === undefined) throw new Error(`No resource kind is stored as ${plural}`);
  const version = object.metadata?.resourceVersion;
  if (!(await store.cache(kind)?.seen(version, 10_000)))
    throw new Error(
      `The gateway did not see ${plural} ${object.metadata?.name ?? ''} at version ${version ?? ''}`,
    );
}
