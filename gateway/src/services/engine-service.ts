/**
 * The engine services (DAI, H2O, notebook): one implementation driven by each kind's
 * description. Engines are created from a profile and a version or image, found in the engine's
 * workspace or in workspaces/global; the profile fills what the user leaves unset and bounds what
 * the user sets; lifecycle calls record the wanted state in the spec for the operator.
 */
import type { Caller } from '../auth/authorizer.ts';
import type { CallContext } from '../call/handler.ts';
import { ApiError, invalidArgument, type FieldViolation } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import type { EngineSettings, ProfileConstraints } from '../engines/settings.ts';
import {
  GROUPING_FIELDS,
  NEWEST_FIRST,
  NEWEST_FIRST_SCHEMA,
  type ListedEngine,
  type ListSchemas,
} from '../engines/list-fields.ts';
import { checkChangeable, checkPause, checkResume, checkTerminate } from '../engines/lifecycle.ts';
import { compileFilter, type FilterField } from '../list/filter.ts';
import { groupValue, narrowest, pageGroups } from '../list/index-plan.ts';
import { EMPTY_RUN, type IndexSpec } from '../list/ordered-index.ts';
import { compileOrdering, type Ordering } from '../list/ordering.ts';
import { runPage } from '../list/pagination.ts';
import { resourceIdProblem } from '../validation/names.ts';
import { resolveUpdateMask, type MaskedResource } from '../validation/update-mask.ts';
import { EngineCatalogue, shapeEngine } from './engine-catalogue.ts';
import { EnginePermissions } from './engine-permissions.ts';
import { RunningQuota } from './engine-quota.ts';
import { EngineRecords, type StoredEngine } from './engine-records.ts';
import { applyMask } from './masks.ts';
import type { MessageKind } from './message-kinds.ts';
import { parentWorkspace, wireNames, type ServiceDeps, type WireNames } from './resource-service.ts';
import { idOf, parentOf } from '../../../shared/resource-name.ts';

export type { StoredEngine } from './engine-records.ts';

/** What every engine message has, as the shared engine code handles it. */
export type EngineMessage = ListedEngine &
  EngineSettings & {
    profile: string;
    annotations?: Record<string, string>;
  };

/** What every engine profile has: the constraints, and who may use it. */
export type EngineProfile = ProfileConstraints & {
  name: string;
  enabled: boolean;
  assignedOidcRolesEnabled: boolean;
  assignedOidcRoles: string[];
  maxRunningEngines?: number | undefined;
};

/** What every engine version or image has; a disabled one creates no engines. */
export interface EngineVersion {
  name: string;
  deprecated?: boolean;
  enabled?: boolean;
}

/**
 * The API rules of one engine kind: its messages (the engine `E`, its profile `P` and its
 * version or image `V`) and what differs between kinds.
 */
export interface EngineApiRules<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion> {
  kind: MessageKind<E>;
  mask: MaskedResource;
  profileKind: MessageKind<P>;
  versionKind: MessageKind<V>;
  /** The kind's state enum, by name. */
  states: Readonly<Record<string, number>>;
  /** The field naming the version or image, as errors name it, e.g. `dai_engine_version`. */
  versionField: string;
  /** The version or image an engine names. */
  versionOf(engine: E): string;
  /** Whether the version or image the engine was created with was deprecated then. */
  versionDeprecated(engine: E): boolean;
  /**
   * A new engine with its version or image and the snapshots of it and of its profile, and
   * anything else the kind copies from the profile at creation (e.g. storage classes).
   */
  created(engine: E, profile: P, version: V): E;
  /** An engine moved to another profile, with that profile's snapshot. */
  withProfile(engine: E, profile: P): E;
  /** The sizing fields the kind has. */
  settings: readonly (
    'cpu' | 'gpu' | 'memoryBytes' | 'storageBytes' | 'nodeCount' | 'maxIdleDuration' | 'maxRunningDuration'
  )[];
  /** The spec field recording the wanted stop: `paused` or `terminated`. */
  stopIntent: 'paused' | 'terminated';
  /** Lists with filter and order_by (DAI, H2O); notebook lists page only. */
  lists?: ListSchemas;
  /** Kind-specific checks and defaults on create and update (e.g. DAI configuration). */
  shape?(engine: E, profile: P, prefix: string): { engine: E; violations: FieldViolation[] };
}

/** Any engine kind's rules, where only what all kinds share is read. */
export type AnyEngineApiRules = EngineApiRules<EngineMessage, EngineProfile, EngineVersion>;

/**
 * One engine kind's parts, which its RPCs compose: who may see or change an engine, the stored
 * records, the profiles and versions engines are made from, and the running-engine caps.
 */
export interface EngineParts<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion> {
  readonly rules: EngineApiRules<E, P, V>;
  readonly names: WireNames;
  readonly permissions: EnginePermissions<E>;
  readonly records: EngineRecords<E>;
  readonly catalogue: EngineCatalogue<E, P, V>;
  readonly quota: RunningQuota<E, P>;
  now(): Date;
}

/** The parts of one engine kind, on the given store and authorizer. */
export function engineParts<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion>(
  deps: ServiceDeps,
  rules: EngineApiRules<E, P, V>,
): EngineParts<E, P, V> {
  const names = wireNames(rules.kind);
  const records = new EngineRecords(deps.store, rules.kind, rules.states);
  return {
    rules,
    names,
    permissions: new EnginePermissions(deps.authorizer, rules.kind, names, records),
    records,
    catalogue: new EngineCatalogue(deps.store, rules),
    quota: new RunningQuota(deps.store.locks, rules.kind, rules.stopIntent, records),
    now: () => deps.now?.() ?? new Date(),
  };
}

/** A create request, whatever its kind names the engine and its id. */
export interface EngineCreateRequest<E> {
  parent: string;
  id: string;
  engine: E | undefined;
  validateOnly: boolean;
}

/** A list request; kinds without filter or order_by leave them empty. */
export interface EngineListRequest {
  parent: string;
  pageSize: number;
  pageToken: string;
  filter: string;
  orderBy: string;
}

/** An update request; kinds without allowMissing or validateOnly leave them false. */
export interface EngineUpdateRequest<E> {
  engine: E | undefined;
  updateMask: string[] | undefined;
  allowMissing: boolean;
  validateOnly: boolean;
}

/** Create: validate, resolve references, fill defaults, snapshot, check caps, write. */
export async function createEngine<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion>(
  parts: EngineParts<E, P, V>,
  request: EngineCreateRequest<E>,
  context: CallContext,
): Promise<E> {
  const { rules, names, permissions, records, catalogue } = parts;
  const workspace = parentWorkspace(request.parent);
  await permissions.authorize(context, 'CREATE', workspace);
  const idProblem = resourceIdProblem(request.id);
  if (idProblem) throw invalidArgument(`${names.snakeField}_id`, idProblem);
  const input = request.engine;
  if (input === undefined) throw invalidArgument(names.snakeField, 'is required');
  const prefix = names.snakeField;
  const name = `workspaces/${workspace}/${rules.kind.collection}/${request.id}`;
  const draft: E = {
    ...input,
    name,
    // Audit fields come from the verified identity only, never from the request.
    creator: context.caller.subject,
    creatorDisplayName: context.caller.displayName,
    updater: '',
    updaterDisplayName: '',
  };
  const profile = await catalogue.profile(draft, prefix, context);
  const versionField = `${prefix}.${rules.versionField}`;
  const version = await catalogue.version(rules.versionOf(draft), versionField, workspace);
  if (version.enabled === false) throw invalidArgument(versionField, `"${version.name}" is disabled`);
  const engine = shapeEngine(
    rules,
    {
      ...rules.created(draft, profile, version),
      state: records.stateValue('STATE_STARTING'),
      reconciling: true,
      updateTime: undefined,
    },
    profile,
    prefix,
  );
  if (request.validateOnly) return engine;
  const saved = await parts.quota.withinQuota(engine, profile, () =>
    records.create(engine, { [rules.stopIntent]: false }),
  );
  return saved.engine;
}

/** Get: the engine, if the caller sees it. */
export async function getEngine<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion>(
  { permissions }: EngineParts<E, P, V>,
  name: string,
  context: CallContext,
): Promise<E> {
  await permissions.authorize(context, 'GET', permissions.workspaceOf(name));
  return (await permissions.reach(name, context, 'see')).engine;
}

/**
 * List: one workspace, filtered and ordered where the kind allows, newest first by default. The
 * page is read from an ordered index the store keeps (see list/ordered-index.ts): of the whole
 * workspace, or of the smallest group an equality of the filter names (`state = STATE_RUNNING`).
 */
export async function listEngines<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion>(
  { rules, permissions, records }: EngineParts<E, P, V>,
  request: EngineListRequest,
  context: CallContext,
): Promise<{ items: E[]; nextPageToken: string; totalSize: number }> {
  const { parent, filter, orderBy } = request;
  const workspace = parentWorkspace(parent);
  await permissions.authorize(context, 'LIST', workspace);
  const schema = rules.lists?.filter;
  const matches = schema ? compileFilter(filter, schema) : () => true;
  const ordering = compileOrdering(orderBy, rules.lists?.order ?? NEWEST_FIRST_SCHEMA, NEWEST_FIRST);
  const viewer = await permissions.seen(workspace, context);
  const candidates = await Promise.all(
    pageGroups(filter, schema, GROUPING_FIELDS, viewer).map(async ({ field, value, everyMatches }) => ({
      run: await records.ordered(
        workspace,
        indexSpec(ordering, field, field === undefined ? undefined : schema?.[field]),
        value,
      ),
      everyMatches,
    })),
  );
  // Read nothing but the runs, which may be live, from here on: no await until the page is read.
  const { run, everyMatches } = narrowest(candidates) ?? { run: EMPTY_RUN, everyMatches: true };
  return runPage<E>(run, request, {
    query: `parent=${parent}&filter=${filter}&order_by=${orderBy}`,
    ordering,
    matches: (engine) => viewer.sees(engine) && matches(engine),
    everyMatches,
  });
}

/**
 * The index of engines in `ordering`, grouped by the value of a field (`state`…), or one group
 * ('') of a whole workspace when no field is named.
 */
function indexSpec<E extends EngineMessage>(
  ordering: Ordering<E>,
  field?: string,
  spec?: FilterField<ListedEngine>,
): IndexSpec<E> {
  return {
    id: `${ordering.id}|${field ?? ''}`,
    key: (engine) => ordering.key(engine),
    compare: (a, b) => ordering.compare(a, b),
    group: spec === undefined ? () => '' : (engine) => groupValue(spec, engine),
  };
}

/** The audit fields of a changed engine. */
function engineUpdated<E extends EngineMessage>(engine: E, caller: Caller, now: Date): E {
  return { ...engine, updater: caller.subject, updaterDisplayName: caller.displayName, updateTime: now };
}

/** Update: masked fields re-checked against the (possibly new) profile. */
export async function updateEngine<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion>(
  parts: EngineParts<E, P, V>,
  request: EngineUpdateRequest<E>,
  context: CallContext,
): Promise<E> {
  const { rules, names, permissions, records, catalogue } = parts;
  const input = request.engine;
  if (input === undefined) throw invalidArgument(names.snakeField, 'is required');
  await permissions.authorize(
    context,
    'UPDATE',
    permissions.workspaceOf(input.name, `${names.snakeField}.name`),
  );
  const paths = resolveUpdateMask(rules.mask, request.updateMask);
  if (paths instanceof Error) throw paths;
  const current = await permissions.reach(input.name, context, 'act').catch((error: unknown) => {
    if (request.allowMissing && error instanceof ApiError && error.code === Code.NOT_FOUND) return undefined;
    throw error;
  });
  // allowMissing: a missing engine is created from every field of the body; the mask is ignored.
  if (current === undefined)
    return createEngine(
      parts,
      {
        parent: parentOf(input.name),
        id: idOf(input.name),
        engine: input,
        validateOnly: request.validateOnly,
      },
      context,
    );
  checkChangeable('update', records.stateName(current.engine));
  const next = applyMask(current.engine, input, paths);
  const profile = await catalogue.profile(next, names.snakeField, context);
  const shaped = shapeEngine(rules, next, profile, names.snakeField);
  const changedProfile = next.profile !== current.engine.profile;
  const engine = engineUpdated(
    changedProfile ? rules.withProfile(shaped, profile) : shaped,
    context.caller,
    parts.now(),
  );
  if (request.validateOnly) return engine;
  return records.save(engine, current.resourceVersion, current.intent);
}

/**
 * Delete: the apiserver deletes, the operator's finalizer cleans up; the answer shows DELETING,
 * or nothing where allowMissing found no engine.
 */
export async function deleteEngine<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion>(
  parts: EngineParts<E, P, V>,
  request: { name: string; allowMissing: boolean; validateOnly: boolean },
  context: CallContext,
): Promise<E | undefined> {
  const { permissions, records } = parts;
  const { name } = request;
  await permissions.authorize(context, 'DELETE', permissions.workspaceOf(name));
  let current: StoredEngine<E>;
  try {
    current = await permissions.reach(name, context, 'act');
  } catch (error: unknown) {
    if (request.allowMissing && error instanceof ApiError && error.code === Code.NOT_FOUND) return undefined;
    throw error;
  }
  const deleting = {
    ...current.engine,
    state: records.stateValue('STATE_DELETING'),
    deleteTime: parts.now(),
  };
  if (!request.validateOnly) await records.delete(name, current.resourceVersion);
  return deleting;
}

/** The state an engine reads as right after each lifecycle call. */
const TRANSITIONS = {
  PAUSE: 'STATE_PAUSING',
  TERMINATE: 'STATE_TERMINATING',
  RESUME: 'STATE_STARTING',
} as const;

/** A lifecycle call of the engine kinds. */
export type StopAction = keyof typeof TRANSITIONS;

/** Pause, resume or terminate: records the wanted stop in the spec. */
export async function changeLifecycle<
  E extends EngineMessage,
  P extends EngineProfile,
  V extends EngineVersion,
>(
  parts: EngineParts<E, P, V>,
  action: StopAction,
  request: { name: string; validateOnly: boolean },
  context: CallContext,
): Promise<E> {
  const { rules, names, permissions, records } = parts;
  const { name } = request;
  await permissions.authorize(context, action, permissions.workspaceOf(name));
  const current = await permissions.reach(name, context, 'act');
  const state = records.stateName(current.engine);
  const stopped = current.intent[rules.stopIntent] === true;
  if (action === 'PAUSE') checkPause(state, stopped);
  else if (action === 'TERMINATE') checkTerminate(state, stopped);
  else checkResume(state, stopped);
  const resuming = action === 'RESUME';
  // The call starts a transition: the engine reads as moving until the operator reports the
  // outcome, so a client polling for a final state never mistakes the old one for it.
  const moving = { state: records.stateValue(TRANSITIONS[action]), reconciling: true };
  const engine = { ...current.engine, ...moving, ...(resuming ? { resumeTime: parts.now() } : {}) };
  if (request.validateOnly) return engine;
  const write = (): Promise<StoredEngine<E>> =>
    records.write(engine, current.resourceVersion, { [rules.stopIntent]: !resuming }, [
      'state',
      'reconciling',
    ]);
  if (!resuming) return (await write()).engine;
  const profile = await parts.catalogue.profile(engine, names.snakeField, context);
  return (await parts.quota.withinQuota(engine, profile, write)).engine;
}
