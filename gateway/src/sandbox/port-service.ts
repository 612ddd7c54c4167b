/**
 * ai.h2o.engine.v1.PortService: ports of a running sandbox engine, exposed inside the cluster
 * (a ClusterIP Service) and optionally outside it (an Ingress under a configured base URL).
 *
 * Each port is a `Port` custom resource owned by the engine's SandboxEngine resource, and its
 * Service and Ingress are owned by the Port: the garbage collector removes them all with the
 * engine, and a port's delete (foreground) reads as DELETING until its objects are gone.
 *
 * Why the gateway, not the operator, makes the Service and Ingress: they are a pure function of
 * the request (engine uid, port number, public flag, the gateway's public base URL), so making
 * them in the call lets the answer carry the URLs and report a refusal at once, and no second
 * controller has to track ports. The state needs no controller either: it is read from those
 * objects and the engine pod's readiness on every call (see ports.ts portState).
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { CallContext, Handlers } from '../call/handler.ts';
import { serviceHandlers } from '../call/service-impl.ts';
import { ApiError, invalidArgument, notFound } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import type { Port } from '../gen/ai/h2o/engine/v1/port.pb.ts';
import {
  PortServiceService,
  type CreatePortRequest,
  type CreatePortResponse,
  type DeletePortRequest,
  type DeletePortResponse,
  type GetPortRequest,
  type GetPortResponse,
  type ListPortsRequest,
  type ListPortsResponse,
  type UpdatePortRequest,
  type UpdatePortResponse,
} from '../gen/ai/h2o/engine/v1/port_service.pb.ts';
import { page } from '../list/pagination.ts';
import { objectName } from '../store/names.ts';
import { storeError } from '../store/store-errors.ts';
import { statusCode } from '../../../shared/watched-collection.ts';
import { ENGINE_UID_LABEL, GROUP, VERSION, WORKSPACE_LABEL } from '../../../shared/resources.ts';
import {
  internalUrl,
  parsePortName,
  portIngressObject,
  portMask,
  portMessage,
  portNumber,
  portObject,
  portObjectName,
  portServiceObject,
  portServiceName,
  portState,
  publicEndpoint,
  PORT_ENGINE_LABEL,
  PORT_NUMBER_LABEL,
  updatedSpec,
  type PortKey,
  type PortRecord,
} from './ports.ts';
import type { ReachSandbox, SandboxTarget } from './target.ts';
import { idOf, workspaceOf } from '../../../shared/resource-name.ts';

/** The gateway setting that publishes ports; public ports need it. */
export const PORTS_URL_SETTING = 'AIEM_SANDBOX_PORTS_URL';

/** Where public ports are published. */
export interface PublicPorts {
  /** Base URL, e.g. `https://ports.example.com`: port hosts are `<service>.ports.example.com`. */
  url: string;
  /** The Ingress class of their Ingresses; the cluster's default when unset. */
  ingressClassName?: string | undefined;
}

/** What the PortService needs. */
export interface PortDeps {
  /** Checks the call (EXPOSE_PORTS, owner, running): the engine and where it runs. */
  reach: ReachSandbox;
  kubeConfig: KubeConfig;
  namespace: string;
  publicPorts?: PublicPorts | undefined;
  now?: () => Date;
}

const PORTS = { group: GROUP, version: VERSION, plural: 'ports' } as const;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** A port call's engine: where it runs and what identifies its ports. */
interface EngineRef {
  target: SandboxTarget;
  engineName: string;
  key: (port: number) => PortKey;
}

/** The Kubernetes side of ports. */
class PortObjects {
  readonly deps: PortDeps;
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  readonly networking: NetworkingV1Api;

  constructor(deps: PortDeps) {
    this.deps = deps;
    this.custom = deps.kubeConfig.makeApiClient(CustomObjectsApi);
    this.core = deps.kubeConfig.makeApiClient(CoreV1Api);
    this.networking = deps.kubeConfig.makeApiClient(NetworkingV1Api);
  }

  get namespace(): string {
    return this.deps.namespace;
  }

  /** Checks the call (permission, owner, running) and identifies the engine's ports. */
  async engine(engineName: string, context: CallContext): Promise<EngineRef> {
    const { engine, target } = await this.deps.reach(engineName, context);
    const [workspace, engineId] = [workspaceOf(engineName), idOf(engineName)];
    const engineObject = objectName(workspace, engineId) ?? '';
    return {
      target,
      engineName,
      key: (port) => ({ workspace, engineId, engineObject, engineUid: engine.uid, port }),
    };
  }

  async read(key: PortKey, name: string): Promise<PortRecord> {
    try {
      const record = (await this.custom.getNamespacedCustomObject({
        ...PORTS,
        namespace: this.namespace,
        name: portObjectName(key),
      })) as PortRecord & { metadata?: { labels?: Record<string, string> } };
      // An object of an earlier engine under the same name is not this engine's port.
      if (record.metadata?.labels?.[ENGINE_UID_LABEL] !== key.engineUid) throw notFound(name);
      return record;
    } catch (error: unknown) {
      throw error instanceof ApiError ? error : storeError(error, name, 'get');
    }
  }

  async writeStatus(key: PortKey, status: Record<string, unknown>): Promise<void> {
    await this.custom.patchNamespacedCustomObjectStatus(
      { ...PORTS, namespace: this.namespace, name: portObjectName(key), body: { status } },
      mergePatch,
    );
  }

  async podReady(target: SandboxTarget): Promise<boolean> {
    try {
      const pod = await this.core.readNamespacedPod({ namespace: target.namespace, name: target.pod });
      return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
    } catch (error: unknown) {
      if (statusCode(error) === 404) return false;
      throw storeError(error, target.pod, 'get');
    }
  }

  async exists(read: () => Promise<unknown>): Promise<boolean> {
    try {
      await read();
      return true;
    } catch (error: unknown) {
      if (statusCode(error) === 404) return false;
      throw storeError(error, 'port', 'get');
    }
  }

  /** The API message of a stored port, its state observed now. */
  async view(engine: EngineRef, key: PortKey, record: PortRecord, podReady: boolean): Promise<Port> {
    const service = portServiceName(key);
    const ns = this.namespace;
    const isPublic = record.spec?.public === true;
    const [serviceExists, ingressExists] = await Promise.all([
      this.exists(() => this.core.readNamespacedService({ namespace: ns, name: service })),
      isPublic
        ? this.exists(() => this.networking.readNamespacedIngress({ namespace: ns, name: service }))
        : false,
    ]);
    const state = portState({
      deleting: record.metadata?.deletionTimestamp !== undefined,
      serviceExists,
      ingressExists,
      public: isPublic,
      podReady,
      failureReason: record.status?.failureReason ?? '',
    });
    const publicUrl =
      this.deps.publicPorts === undefined ? '' : publicEndpoint(key, this.deps.publicPorts.url).url;
    const name = `${engine.engineName}/ports/${key.port}`;
    return portMessage(name, record, { internalUrl: internalUrl(key, ns), publicUrl }, state);
  }

  /** Makes the port's Ingress, or removes it, to match `isPublic`. */
  async publish(key: PortKey, portUid: string, isPublic: boolean): Promise<void> {
    const name = portServiceName(key);
    const publicPorts = this.deps.publicPorts;
    if (isPublic && publicPorts !== undefined) {
      await this.networking
        .createNamespacedIngress({
          namespace: this.namespace,
          body: portIngressObject(key, portUid, publicPorts),
        })
        .catch(ignoring(409));
    } else if (!isPublic) {
      await this.networking.deleteNamespacedIngress({ namespace: this.namespace, name }).catch(ignoring(404));
    }
  }
}

/** A catch handler that swallows one HTTP status and rethrows anything else. */
function ignoring(status: number): (error: unknown) => void {
  return (error) => {
    if (statusCode(error) !== status) throw error;
  };
}

/** FAILED_PRECONDITION for a public port when no public base URL is configured. */
function checkPublishable(deps: PortDeps, isPublic: boolean): void {
  if (isPublic && deps.publicPorts === undefined) {
    throw new ApiError(
      Code.FAILED_PRECONDITION,
      `Ports cannot be public here: the gateway setting ${PORTS_URL_SETTING} (the base URL of public ports) is not set`,
      { reason: 'PUBLIC_PORTS_DISABLED' },
    );
  }
}

async function createPort(
  ports: PortObjects,
  request: CreatePortRequest,
  context: CallContext,
): Promise<CreatePortResponse> {
  const port = portNumber(request.portId);
  const input = request.port ?? ({} as Partial<Port>);
  const isPublic = input.public === true;
  const engine = await ports.engine(request.parent, context);
  checkPublishable(ports.deps, isPublic);
  const key = engine.key(port);
  const name = `${request.parent}/ports/${port}`;
  const created = (await ports.custom
    .createNamespacedCustomObject({
      ...PORTS,
      namespace: ports.namespace,
      body: portObject(key, { displayName: input.displayName ?? '', public: isPublic }),
    })
    .catch((error: unknown) => {
      throw storeError(error, name, 'create');
    })) as PortRecord;
  const uid = created.metadata?.uid ?? '';
  let failureReason = '';
  try {
    await ports.core.createNamespacedService({
      namespace: ports.namespace,
      body: portServiceObject(key, uid),
    });
    await ports.publish(key, uid, isPublic);
  } catch (error: unknown) {
    failureReason = `Cannot create the port's Service or Ingress: ${error instanceof Error ? error.message : String(error)}`;
  }
  const status = {
    creator: context.caller.subject,
    creatorDisplayName: context.caller.displayName,
    internalUrl: internalUrl(key, ports.namespace),
    failureReason,
    state: failureReason === '' ? 'STATE_PENDING' : 'STATE_FAILED',
  };
  await ports.writeStatus(key, status);
  const record: PortRecord = { ...created, status };
  return { port: await ports.view(engine, key, record, await ports.podReady(engine.target)) };
}

async function getPort(
  ports: PortObjects,
  request: GetPortRequest,
  context: CallContext,
): Promise<GetPortResponse> {
  const { engineName, port } = parsePortName(request.name);
  const engine = await ports.engine(engineName, context);
  const key = engine.key(port);
  const record = await ports.read(key, request.name);
  return { port: await ports.view(engine, key, record, await ports.podReady(engine.target)) };
}

async function listPorts(
  ports: PortObjects,
  request: ListPortsRequest,
  context: CallContext,
): Promise<ListPortsResponse> {
  const engine = await ports.engine(request.parent, context);
  const probe = engine.key(0);
  const { items } = (await ports.custom
    .listNamespacedCustomObject({
      ...PORTS,
      namespace: ports.namespace,
      labelSelector: `${WORKSPACE_LABEL}=${probe.workspace},${PORT_ENGINE_LABEL}=${probe.engineId},${ENGINE_UID_LABEL}=${probe.engineUid}`,
    })
    .catch((error: unknown) => {
      throw storeError(error, request.parent, 'list');
    })) as { items: (PortRecord & { metadata?: { labels?: Record<string, string> } })[] };
  const numbered = items
    .map((record) => ({ record, port: Number(record.metadata?.labels?.[PORT_NUMBER_LABEL] ?? 0) }))
    .sort((a, b) => a.port - b.port);
  const chosen = page(numbered, request, `parent=${request.parent}`);
  const ready = await ports.podReady(engine.target);
  const views = await Promise.all(
    chosen.items.map(({ record, port }) => ports.view(engine, engine.key(port), record, ready)),
  );
  return { ports: views, nextPageToken: chosen.nextPageToken };
}

async function updatePort(
  ports: PortObjects,
  request: UpdatePortRequest,
  context: CallContext,
): Promise<UpdatePortResponse> {
  const input = request.port;
  if (input === undefined) throw invalidArgument('port', 'is required');
  const { engineName, port } = parsePortName(input.name);
  const mask = portMask(request.updateMask ?? []);
  const engine = await ports.engine(engineName, context);
  const key = engine.key(port);
  const current = await ports.read(key, input.name);
  const spec = updatedSpec(current, input, mask);
  checkPublishable(ports.deps, spec.public);
  const now = (ports.deps.now?.() ?? new Date()).toISOString();
  await ports.custom
    .patchNamespacedCustomObject(
      { ...PORTS, namespace: ports.namespace, name: portObjectName(key), body: { spec } },
      mergePatch,
    )
    .catch((error: unknown) => {
      throw storeError(error, input.name, 'update');
    });
  const audit = {
    updateTime: now,
    updater: context.caller.subject,
    updaterDisplayName: context.caller.displayName,
  };
  await ports.writeStatus(key, audit);
  await ports.publish(key, current.metadata?.uid ?? '', spec.public);
  const record: PortRecord = { ...current, spec, status: { ...current.status, ...audit } };
  return { port: await ports.view(engine, key, record, await ports.podReady(engine.target)) };
}

async function deletePort(
  ports: PortObjects,
  request: DeletePortRequest,
  context: CallContext,
): Promise<DeletePortResponse> {
  const { engineName, port } = parsePortName(request.name);
  const engine = await ports.engine(engineName, context);
  const key = engine.key(port);
  await ports.read(key, request.name);
  // Foreground: the Port reads as DELETING until the garbage collector has removed its Service
  // and Ingress, then it is gone (404).
  await ports.custom
    .deleteNamespacedCustomObject({
      ...PORTS,
      namespace: ports.namespace,
      name: portObjectName(key),
      propagationPolicy: 'Foreground',
    })
    .catch((error: unknown) => {
      throw storeError(error, request.name, 'delete');
    });
  return {};
}

/** The five RPCs of PortService. */
export function portService(deps: PortDeps): Handlers {
  const ports = new PortObjects(deps);
  return serviceHandlers(PortServiceService, {
    createPort: (request, context) => createPort(ports, request, context),
    getPort: (request, context) => getPort(ports, request, context),
    listPorts: (request, context) => listPorts(ports, request, context),
    updatePort: (request, context) => updatePort(ports, request, context),
    deletePort: (request, context) => deletePort(ports, request, context),
  });
}
