/**
 * The decisions of sandbox ports, free of I/O: names and ids, the Kubernetes objects a port is
 * made of (its `Port` custom resource, a ClusterIP Service and, when public, an Ingress), its
 * URLs, and its state as seen from those objects and the engine's pod.
 */
import { invalidArgument } from '../errors/api-error.ts';
import { Port_State, type Port } from '../gen/ai/h2o/engine/v1/port.pb.ts';
import { API_VERSION, ENGINE_UID_LABEL, GROUP, WORKSPACE_LABEL } from '../../../shared/resources.ts';
import { PORT_ID } from '../../../shared/rules.ts';
import { workloadName, SANDBOX_PREFIX } from '../../../shared/workloads.ts';

/** Labels of a Port object: its engine's id and its port number (with the workspace label). */
export const PORT_ENGINE_LABEL = `${GROUP}/sandbox-engine`;
export const PORT_NUMBER_LABEL = `${GROUP}/port`;

const PORT_ID_PATTERN = new RegExp(PORT_ID);

/** The port number of a port id; INVALID_ARGUMENT naming `field` unless it is 1024-65535 in decimal. */
export function portNumber(id: unknown, field = 'port_id'): number {
  if (typeof id !== 'string' || !PORT_ID_PATTERN.test(id)) {
    throw invalidArgument(field, `must be a port number from 1024 to 65535, got "${String(id)}"`);
  }
  return Number(id);
}

/** The engine name and port number of a port name `workspaces/*\/sandboxEngines/*\/ports/{port}`. */
export function parsePortName(name: string): { engineName: string; port: number } {
  const match = /^(workspaces\/[^/]+\/sandboxEngines\/[^/]+)\/ports\/([^/]+)$/.exec(name);
  if (match === null) {
    throw invalidArgument(
      'name',
      `must be "workspaces/{workspace}/sandboxEngines/{engine}/ports/{port}", got "${name}"`,
    );
  }
  return { engineName: match[1] ?? '', port: portNumber(match[2], 'name') };
}

/** What identifies one port of one engine in Kubernetes. */
export interface PortKey {
  workspace: string;
  engineId: string;
  /** The engine's custom resource: object name (see store/names.ts) and uid. */
  engineObject: string;
  engineUid: string;
  port: number;
}

/** The Port object's name: the engine's object name (unique per engine, no dot in its id part) and the port. */
export function portObjectName(key: PortKey): string {
  return `${key.engineObject}.${key.port}`;
}

/** The Service (and Ingress) of a port: a DNS label derived from the engine's object name and the port. */
export function portServiceName(key: PortKey): string {
  return `${workloadName(SANDBOX_PREFIX, key.engineObject)}-p${key.port}`;
}

/** `http://<service>.<namespace>.svc.cluster.local:<port>` */
export function internalUrl(key: PortKey, namespace: string): string {
  return `http://${portServiceName(key)}.${namespace}.svc.cluster.local:${key.port}`;
}

/**
 * The public host of a port under the public base URL: `<service>.<base host>`, one host per
 * port (host routing needs a wildcard DNS record and certificate for the base host, but serves
 * every application unchanged at `/`, which path routing would not).
 */
export function publicEndpoint(key: PortKey, baseUrl: string): { host: string; url: string } {
  const base = new URL(baseUrl);
  const host = `${portServiceName(key)}.${base.hostname}`;
  const port = base.port === '' ? '' : `:${base.port}`;
  return { host, url: `${base.protocol}//${host}${port}/` };
}

/** The Port custom resource of a port (spec only; status is written through its subresource). */
export function portObject(
  key: PortKey,
  spec: { displayName: string; public: boolean },
): Record<string, unknown> {
  return {
    apiVersion: API_VERSION,
    kind: 'Port',
    metadata: {
      name: portObjectName(key),
      labels: {
        [WORKSPACE_LABEL]: key.workspace,
        [PORT_ENGINE_LABEL]: key.engineId,
        [PORT_NUMBER_LABEL]: String(key.port),
        [ENGINE_UID_LABEL]: key.engineUid,
      },
      // The port goes with its engine (the garbage collector deletes it, and its Service and
      // Ingress with it).
      ownerReferences: [
        { apiVersion: API_VERSION, kind: 'SandboxEngine', name: key.engineObject, uid: key.engineUid },
      ],
    },
    spec,
  };
}

/** Owner reference to a Port object, for its Service and Ingress. */
function ownedByPort(key: PortKey, portUid: string): Record<string, unknown>[] {
  return [{ apiVersion: API_VERSION, kind: 'Port', name: portObjectName(key), uid: portUid }];
}

/**
 * Labels of a port's Service and Ingress. Not the engine-kind label: the operator watches the
 * objects it makes for engines by that label, and these are not its.
 */
function objectLabels(key: PortKey): Record<string, string> {
  return { [ENGINE_UID_LABEL]: key.engineUid, [PORT_NUMBER_LABEL]: String(key.port) };
}

/** The ClusterIP Service that reaches `port` of the engine's pod. */
export function portServiceObject(key: PortKey, portUid: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: portServiceName(key),
      labels: objectLabels(key),
      ownerReferences: ownedByPort(key, portUid),
    },
    spec: {
      type: 'ClusterIP',
      selector: { [ENGINE_UID_LABEL]: key.engineUid },
      ports: [{ name: 'port', protocol: 'TCP', port: key.port, targetPort: key.port }],
    },
  };
}

/** The Ingress that publishes the port's Service at its public host. */
export function portIngressObject(
  key: PortKey,
  portUid: string,
  publicBase: { url: string; ingressClassName?: string | undefined },
): Record<string, unknown> {
  const { host } = publicEndpoint(key, publicBase.url);
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name: portServiceName(key),
      labels: objectLabels(key),
      ownerReferences: ownedByPort(key, portUid),
    },
    spec: {
      ...(publicBase.ingressClassName ? { ingressClassName: publicBase.ingressClassName } : {}),
      rules: [
        {
          host,
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: portServiceName(key), port: { number: key.port } } },
              },
            ],
          },
        },
      ],
    },
  };
}

/** What a port's state is decided from. */
export interface PortObservation {
  deleting: boolean;
  serviceExists: boolean;
  /** Whether the Ingress exists; only asked when the port is public. */
  ingressExists: boolean;
  public: boolean;
  podReady: boolean;
  /** A failure recorded when the port's objects could not be made. */
  failureReason: string;
}

/**
 * A port's state: DELETING once deletion began, FAILED when its objects could not be made,
 * READY when its Service (and Ingress, when public) exist and the engine's pod is Ready,
 * PENDING otherwise. Nothing checks that the program in the sandbox listens on the port.
 */
export function portState(seen: PortObservation): Port_State {
  if (seen.deleting) return Port_State.STATE_DELETING;
  if (seen.failureReason !== '') return Port_State.STATE_FAILED;
  const exposed = seen.serviceExists && (!seen.public || seen.ingressExists);
  return exposed && seen.podReady ? Port_State.STATE_READY : Port_State.STATE_PENDING;
}

/** A stored Port object, as much as the API message needs. */
export interface PortRecord {
  metadata?: { creationTimestamp?: string | Date; deletionTimestamp?: string | Date; uid?: string };
  spec?: { displayName?: string; public?: boolean };
  status?: {
    creator?: string;
    creatorDisplayName?: string;
    updateTime?: string;
    updater?: string;
    updaterDisplayName?: string;
    failureReason?: string;
    publicUrl?: string;
  };
}

/** The API message of a stored port in state `state`. */
export function portMessage(
  name: string,
  record: PortRecord,
  urls: { internalUrl: string; publicUrl: string },
  state: Port_State,
): Port {
  const { displayName = '', public: isPublic = false } = record.spec ?? {};
  const created = record.metadata?.creationTimestamp;
  const status = record.status ?? {};
  return {
    name,
    displayName,
    public: isPublic,
    internalUrl: urls.internalUrl,
    publicUrl: isPublic ? urls.publicUrl : '',
    createTime: created === undefined ? undefined : new Date(created),
    ...audit(status),
    state,
    failureReason: state === Port_State.STATE_FAILED ? (status.failureReason ?? '') : '',
  };
}

/** The audit fields of a port's status. */
function audit(
  status: NonNullable<PortRecord['status']>,
): Pick<Port, 'creator' | 'creatorDisplayName' | 'updateTime' | 'updater' | 'updaterDisplayName'> {
  return {
    creator: status.creator ?? '',
    creatorDisplayName: status.creatorDisplayName ?? '',
    updateTime: status.updateTime ? new Date(status.updateTime) : undefined,
    updater: status.updater ?? '',
    updaterDisplayName: status.updaterDisplayName ?? '',
  };
}

/** The spec after an update: each field from `input` when the mask names it, else as stored. */
export function updatedSpec(
  current: PortRecord,
  input: Pick<Port, 'displayName' | 'public'>,
  mask: ReadonlySet<string>,
): { displayName: string; public: boolean } {
  return {
    displayName: mask.has('display_name') ? input.displayName : (current.spec?.displayName ?? ''),
    public: mask.has('public') ? input.public : current.spec?.public === true,
  };
}

/** The update mask paths UpdatePort takes (`*` means both). */
export const PORT_MASK_PATHS = ['display_name', 'public'] as const;

/** The fields an update mask names; INVALID_ARGUMENT for an empty mask or an unknown path. */
export function portMask(paths: readonly string[]): Set<(typeof PORT_MASK_PATHS)[number]> {
  const chosen = new Set<(typeof PORT_MASK_PATHS)[number]>();
  for (const path of paths
    .flatMap((p) => p.split(','))
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    if (path === '*') PORT_MASK_PATHS.forEach((p) => chosen.add(p));
    else if ((PORT_MASK_PATHS as readonly string[]).includes(path))
      chosen.add(path as (typeof PORT_MASK_PATHS)[number]);
    else
      throw invalidArgument(
        'update_mask',
        `"${path}" is not an updatable field; use display_name, public or *`,
      );
  }
  if (chosen.size === 0) throw invalidArgument('update_mask', 'is required: display_name, public or *');
  return chosen;
}
