/**
 * Which API call a Kubernetes write is: a create is the kind's Create, a spec change its Update
 * (masked to the changed fields) or the dedicated call of the one field that changed (pause and
 * resume, storage resize, version upgrade, alias assignment), a delete its Delete. Pure: the
 * webhook runs the call (gateway/src/admission/webhook.ts).
 */
import { isDeepStrictEqual } from 'node:util';
import { ENGINE_INTENT, ID_LABEL, WORKSPACE_LABEL, type ResourceKind } from '../../../shared/resources.ts';
import { outputFields, RECORDED_ANNOTATION } from '../../../shared/recorded.ts';
import { ApiError, invalidArgument } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { ROUTES } from '../gen/routes.ts';
import { fromJson, JsonFieldError, type Json } from '../json/canonical.ts';
import { protoPath } from '../rest/request.ts';
import { wireNames } from '../services/resource-service.ts';
import { objectName, parseObjectName } from '../store/names.ts';
import { identityOf, type CustomResource } from '../store/objects.ts';
import { UPDATE_PATHS, type MaskedResource } from '../validation/update-mask.ts';

/** One call of the API: the handler's key and its request message. */
export interface ApiCall {
  rpc: string;
  request: Record<string, unknown>;
}

/** A Kubernetes write under review. */
export interface Write {
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  kind: ResourceKind;
  /** The object as it would be stored (CREATE, UPDATE). */
  object?: CustomResource | undefined;
  /** The object as it is stored (UPDATE, DELETE). */
  oldObject?: CustomResource | undefined;
}

/** Spec fields that one dedicated call changes, and the request fields it takes them in. */
interface Dedicated {
  rpc: string;
  nameField: string;
  valueField: string;
}

const DEDICATED: Readonly<Record<string, Readonly<Record<string, Dedicated>>>> = {
  DAIEngine: {
    daiEngineVersion: {
      rpc: 'UpgradeDAIEngineVersion',
      nameField: 'daiEngine',
      valueField: 'newDaiEngineVersion',
    },
    storageBytes: { rpc: 'ResizeStorage', nameField: 'daiEngine', valueField: 'newStorageBytes' },
  },
  NotebookEngine: {
    storageBytes: { rpc: 'ResizeNotebookEngineStorage', nameField: 'name', valueField: 'newStorageBytes' },
  },
  DAIEngineVersion: {
    aliases: { rpc: 'AssignDAIEngineVersionAliases', nameField: 'name', valueField: 'aliases' },
  },
  H2OEngineVersion: {
    aliases: { rpc: 'AssignH2OEngineVersionAliases', nameField: 'name', valueField: 'aliases' },
  },
};

/** Lifecycle calls by the intent field and its new value. */
const LIFECYCLE: Readonly<Record<string, Readonly<Record<'true' | 'false', string | undefined>>>> = {
  paused: { true: 'Pause', false: 'Resume' },
  terminated: { true: 'Terminate', false: undefined },
};

/** Metadata that only AI Engine Manager sets: what makes an object an API resource. */
export const OWNED_LABELS = [WORKSPACE_LABEL, ID_LABEL] as const;
export const OWNED_ANNOTATIONS = [RECORDED_ANNOTATION] as const;

/**
 * The API call a write is, or `undefined` for a change that no API call makes (metadata others
 * own: kubectl's own annotations, finalizers, activity reports), which is admitted as it is.
 *
 * @throws ApiError naming the offending field when the write cannot be an API call
 */
export function callOf(write: Write): ApiCall | undefined {
  const { operation, kind, object, oldObject } = write;
  if (operation === 'DELETE') {
    // An object that was never admitted is no API resource: nothing checks its deletion.
    const name = apiName(kind, oldObject);
    return name === '' ? undefined : { rpc: rpcKey(kind, `Delete${kind.kind}`), request: { name } };
  }
  if (object === undefined) throw new TypeError(`${operation} without an object`);
  // An object stored while admission was off was never admitted: its next change admits it whole.
  if (operation === 'CREATE' || oldObject === undefined || identityOf(oldObject) === undefined)
    return createCall(kind, object);
  checkOwnedMetadata(oldObject, object);
  return updateCall(kind, oldObject, object);
}

/** The API name of a stored object, from its identity labels. */
function apiName(kind: ResourceKind, object: CustomResource | undefined): string {
  const identity = object === undefined ? undefined : identityOf(object);
  if (identity === undefined) return '';
  return `workspaces/${identity.workspace}/${kind.collection}/${identity.id}`;
}

/** The workspace and id a new object names: `metadata.name` is `<workspace>.<id>`. */
export function identityOfNew(object: CustomResource): { workspace: string; id: string } {
  const parsed = parseObjectName(object.metadata.name);
  if (parsed === undefined || objectName(parsed.workspace, parsed.id) !== object.metadata.name) {
    throw invalidArgument(
      'metadata.name',
      `"${object.metadata.name}" is not <workspace>.<id>, e.g. "default.my-engine" for ` +
        'workspaces/default/…/my-engine',
    );
  }
  for (const [label, value] of [
    [WORKSPACE_LABEL, parsed.workspace],
    [ID_LABEL, parsed.id],
  ] as const) {
    const given = object.metadata.labels?.[label];
    if (given !== undefined && given !== value)
      throw invalidArgument(
        `metadata.labels["${label}"]`,
        `must be "${value}", as metadata.name says, or left out`,
      );
  }
  return parsed;
}

function createCall(kind: ResourceKind, object: CustomResource): ApiCall {
  const { workspace, id } = identityOfNew(object);
  const names = wireNames(kind);
  const { fields, intent } = splitSpec(kind, object.spec);
  const stopped = Object.entries(intent).find(([, value]) => value === true);
  if (stopped !== undefined) {
    throw invalidArgument(
      `spec.${stopped[0]}`,
      `an engine is created running; set it to true once the engine exists`,
    );
  }
  const rpc = `Create${kind.kind}`;
  return {
    rpc: rpcKey(kind, rpc),
    request: requestOf(kind, rpc, {
      parent: `workspaces/${workspace}`,
      [names.idField]: id,
      [names.field]: fields,
    }),
  };
}

function updateCall(kind: ResourceKind, before: CustomResource, after: CustomResource): ApiCall | undefined {
  const name = apiName(kind, before);
  const old = splitSpec(kind, before.spec);
  const next = splitSpec(kind, after.spec);
  keepVersionNamedByAlias(kind, before, old.fields, next.fields);
  const changed = changedKeys(old.fields, next.fields);
  const intentChanged = changedKeys(old.intent, next.intent);
  if (changed.length === 0 && intentChanged.length === 0) return undefined;
  const [field] = intentChanged;
  if (field !== undefined) {
    if (changed.length > 0 || intentChanged.length > 1)
      throw invalidArgument(`spec.${field}`, 'change it alone, not together with other fields');
    return lifecycleCall(kind, name, field, next.intent[field] === true);
  }
  return (
    dedicatedCall(kind, name, next.fields, changed) ??
    maskedUpdate(kind, { name, fields: next.fields, changed })
  );
}

/** The dedicated call of the one field that changed, if it has one (storage resize, upgrade, aliases). */
function dedicatedCall(
  kind: ResourceKind,
  name: string,
  fields: Record<string, Json>,
  changed: readonly string[],
): ApiCall | undefined {
  const [field = ''] = changed;
  const dedicated = changed.length === 1 ? DEDICATED[kind.kind]?.[field] : undefined;
  if (dedicated === undefined) return undefined;
  return {
    rpc: rpcKey(kind, dedicated.rpc),
    request: requestOf(kind, dedicated.rpc, {
      [dedicated.nameField]: name,
      [dedicated.valueField]: fields[field] ?? null,
    }),
  };
}

/** Pause, resume or terminate: the call that sets the intent `field` to `value`. */
function lifecycleCall(kind: ResourceKind, name: string, field: string, value: boolean): ApiCall {
  const action = LIFECYCLE[field]?.[value ? 'true' : 'false'];
  if (action === undefined)
    throw new ApiError(
      Code.FAILED_PRECONDITION,
      `Cannot undo spec.${field}: a terminated engine stays terminated`,
      {
        reason: 'INVALID_STATE',
      },
    );
  const rpc = `${action}${kind.kind}`;
  return { rpc: rpcKey(kind, rpc), request: requestOf(kind, rpc, { name }) };
}

function maskedUpdate(
  kind: ResourceKind,
  update: { name: string; fields: Record<string, Json>; changed: readonly string[] },
): ApiCall {
  const names = wireNames(kind);
  const allowed: readonly string[] = UPDATE_PATHS[names.field as MaskedResource];
  const paths = update.changed.map(protoPath);
  const fixed = update.changed.filter((_, i) => !allowed.includes(paths[i] ?? ''));
  if (fixed.length > 0) {
    const more = Object.keys(DEDICATED[kind.kind] ?? {}).filter((key) => fixed.includes(key));
    const why =
      more.length > 0
        ? `change ${more.map((k) => `spec.${k}`).join(', ')} alone`
        : 'cannot be changed after creation';
    throw invalidArgument(`spec.${fixed[0] ?? ''}`, why);
  }
  const rpc = `Update${kind.kind}`;
  return {
    rpc: rpcKey(kind, rpc),
    request: requestOf(kind, rpc, {
      [names.field]: { ...update.fields, name: update.name },
      updateMask: paths.join(','),
    }),
  };
}

/** Engine fields that name a version, which may be an alias, and the snapshot of that version. */
const VERSION_FIELDS: Readonly<Record<string, { field: string; snapshot: string }>> = {
  DAIEngine: { field: 'daiEngineVersion', snapshot: 'daiEngineVersionInfo' },
  H2OEngine: { field: 'h2oEngineVersion', snapshot: 'h2oEngineVersionInfo' },
};

/**
 * A manifest may name the version by an alias (`…/daiEngineVersions/latest`), which the API
 * resolved at creation. Applying the same manifest again names the alias again: when the version
 * the engine runs held that alias, that is no change (not an upgrade request), so the manifest
 * can be applied any number of times. Upgrades name the new version.
 */
function keepVersionNamedByAlias(
  kind: ResourceKind,
  before: CustomResource,
  old: Record<string, Json>,
  next: Record<string, Json>,
): void {
  const version = VERSION_FIELDS[kind.kind];
  if (version === undefined) return;
  const current = old[version.field];
  const named = next[version.field];
  if (typeof current !== 'string' || typeof named !== 'string' || current === named) return;
  if (namesAlias(current, named, outputFields(before)[version.snapshot])) next[version.field] = current;
}

/** Whether `named` is an alias, in the collection of `current`, that the version snapshot holds. */
function namesAlias(current: string, named: string, snapshot: unknown): boolean {
  const collection = current.slice(0, current.lastIndexOf('/') + 1);
  if (!named.startsWith(collection) || typeof snapshot !== 'object' || snapshot === null) return false;
  const aliases =
    'aliases' in snapshot && Array.isArray(snapshot.aliases) ? (snapshot.aliases as unknown[]) : [];
  return aliases.includes(named.slice(collection.length));
}

/** The API fields of a spec, and the lifecycle intent kept beside them. */
function splitSpec(
  kind: ResourceKind,
  spec: Record<string, Json> | undefined,
): { fields: Record<string, Json>; intent: Record<string, Json> } {
  const intentKeys = Object.keys(ENGINE_INTENT[kind.kind] ?? {});
  const fields: Record<string, Json> = {};
  const intent: Record<string, Json> = {};
  for (const [key, value] of Object.entries(spec ?? {}))
    (intentKeys.includes(key) ? intent : fields)[key] = value;
  for (const key of intentKeys) intent[key] = intent[key] === true;
  return { fields, intent };
}

function changedKeys(before: Record<string, Json>, after: Record<string, Json>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((key) => !isDeepStrictEqual(before[key], after[key])).sort();
}

/** Refuses changes of the metadata that makes the object an API resource. */
function checkOwnedMetadata(before: CustomResource, after: CustomResource): void {
  for (const label of OWNED_LABELS) {
    if (before.metadata.labels?.[label] !== after.metadata.labels?.[label])
      throw invalidArgument(
        `metadata.labels["${label}"]`,
        'is set by AI Engine Manager and cannot be changed',
      );
  }
  for (const annotation of OWNED_ANNOTATIONS) {
    if (before.metadata.annotations?.[annotation] !== after.metadata.annotations?.[annotation])
      throw invalidArgument(
        `metadata.annotations["${annotation}"]`,
        'is set by AI Engine Manager and cannot be changed',
      );
  }
}

function rpcKey(kind: ResourceKind, rpc: string): string {
  return `${wireNames(kind).service}.${rpc}`;
}

/** The request message of an RPC from its JSON, read as REST reads a body. */
function requestOf(kind: ResourceKind, rpc: string, json: Record<string, Json>): Record<string, unknown> {
  const service = wireNames(kind).service;
  const route = ROUTES.find((r) => r.service === service && r.rpc === rpc);
  if (route === undefined) throw new TypeError(`No route for ${service}.${rpc}`);
  try {
    return fromJson(route.requestType, json);
  } catch (error: unknown) {
    if (!(error instanceof JsonFieldError)) throw error;
    const field = protoPath(error.field);
    throw invalidArgument(field, error.message.slice(error.field.length + 2));
  }
}
