import {
  API_VERSION,
  ENGINE_INTENT,
  FROM_METADATA,
  ID_LABEL,
  LAST_ACTIVITY_ANNOTATION,
  RUNNING_PROCESSES_ANNOTATION,
  WORKSPACE_LABEL,
  type ResourceKind,
} from '../../../shared/resources.ts';
import { engineClock } from '../../../shared/durations.ts';
import { outputFields } from '../../../shared/recorded.ts';
import { withLiveDurations } from '../engines/live-durations.ts';
import { MESSAGES } from '../gen/messages.ts';
import { fromJson, toJson, type Json } from '../json/canonical.ts';
import { jsonName } from '../rest/request.ts';
import { objectName } from './names.ts';
import { parseResourceName } from '../../../shared/resource-name.ts';

type JsonObject = { [key: string]: Json };

/** A custom resource as the apiserver stores it. */
export interface CustomResource {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    /** Absent on objects written by others (kubectl) without them. */
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string | Date;
    deletionTimestamp?: string | Date;
  };
  spec: JsonObject;
  status?: JsonObject;
}

const METADATA_JSON = new Set([...FROM_METADATA].map(jsonName));

/** Splits a resource name of `kind`, e.g. `workspaces/w/daiEngines/e1` into w and e1. */
export function splitName(kind: ResourceKind, name: string): { workspace: string; id: string } {
  const parsed = parseResourceName(name, kind.collection);
  if (parsed === undefined) throw new TypeError(`"${name}" is not a ${kind.kind} name`);
  return { workspace: parsed.workspace, id: parsed.id };
}

/**
 * The custom resource of an API message: OUTPUT_ONLY fields in status, the others in spec, and
 * name, uid and times left to the object's metadata. Values are the API's canonical JSON, which
 * the generated CRD schemas accept.
 */
export function toCustomResource(
  kind: ResourceKind,
  message: { name: string },
  namespace: string,
  intent: Intent = {},
): CustomResource {
  const { workspace, id } = splitName(kind, message.name);
  const name = objectName(workspace, id);
  if (name === undefined) throw new TypeError(`"${message.name}" cannot be stored`);
  const json = toJson(kind.message, message);
  const spec: JsonObject = {};
  const status: JsonObject = {};
  for (const field of MESSAGES[kind.message] ?? []) {
    const value = json[field.json];
    if (value === undefined || METADATA_JSON.has(field.json)) continue;
    (field.output ? status : spec)[field.json] = value;
  }
  for (const key of Object.keys(ENGINE_INTENT[kind.kind] ?? {})) spec[key] = intent[key] === true;
  return {
    apiVersion: API_VERSION,
    kind: kind.kind,
    metadata: {
      name,
      namespace,
      labels: { [WORKSPACE_LABEL]: workspace, [ID_LABEL]: id },
    },
    spec,
    status,
  };
}

/** An engine's wanted lifecycle, kept in its spec beside the API fields (see ENGINE_INTENT). */
export type Intent = Readonly<Record<string, boolean>>;

/** The intent fields of a custom resource; unset ones are false. */
export function intentOf(kind: ResourceKind, resource: CustomResource): Intent {
  return Object.fromEntries(
    Object.keys(ENGINE_INTENT[kind.kind] ?? {}).map((key) => [key, resource.spec[key] === true]),
  );
}

/**
 * The workspace and id of a custom resource, from its labels; `undefined` when they do not name
 * a resource the API can address (missing, or a workspace outside the workspace id rule).
 */
export function identityOf(resource: CustomResource): { workspace: string; id: string } | undefined {
  const workspace = resource.metadata.labels?.[WORKSPACE_LABEL];
  const id = resource.metadata.labels?.[ID_LABEL];
  if (workspace === undefined || id === undefined || objectName(workspace, id) === undefined)
    return undefined;
  return { workspace, id };
}

/** The API message of a custom resource. @throws TypeError when its labels do not name it */
export function fromCustomResource(kind: ResourceKind, resource: CustomResource): Record<string, unknown> {
  const identity = identityOf(resource);
  if (identity === undefined)
    throw new TypeError(`${kind.kind} ${resource.metadata.name} lacks valid workspace and id labels`);
  const { workspace, id } = identity;
  const json: JsonObject = {
    ...resource.spec,
    ...(outputFields(resource) as JsonObject),
    name: `workspaces/${workspace}/${kind.collection}/${id}`,
  };
  if (resource.metadata.uid !== undefined) json['uid'] = resource.metadata.uid;
  const created = timeText(resource.metadata.creationTimestamp);
  const deleted = timeText(resource.metadata.deletionTimestamp);
  if (created !== undefined) json['createTime'] = created;
  if (deleted !== undefined) {
    json['deleteTime'] = deleted;
    // An engine on its way out reads as such at once, before the operator reports it.
    if (ENGINE_INTENT[kind.kind] !== undefined)
      Object.assign(json, { state: 'STATE_DELETING', reconciling: true });
  }
  const message = fromJson(kind.message, json);
  if (ENGINE_INTENT[kind.kind] === undefined) return message;
  const clock = engineClock({
    state: json['state'],
    created: json['createTime'],
    resumed: json['resumeTime'],
    runningSince: resource.status?.['runningSince'],
    lastActivity: resource.metadata.annotations?.[LAST_ACTIVITY_ANNOTATION],
    runningProcesses: resource.metadata.annotations?.[RUNNING_PROCESSES_ANNOTATION],
  });
  return withLiveDurations(message, clock);
}

/** client-node gives metadata times as Date objects from typed APIs and as strings from others. */
function timeText(time: string | Date | undefined): string | undefined {
  return time instanceof Date ? time.toISOString() : time;
}
