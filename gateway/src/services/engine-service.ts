/**
 * The engine services (DAI, H2O, notebook): one implementation driven by each kind's
 * description. Engines are created from a profile and a version or image, found in the engine's
 * workspace or in workspaces/global; the profile fills what the user leaves unset and bounds what
 * the user sets; lifecycle calls record the wanted state in the spec for the operator.
 */
import type { Caller } from '../auth/authorizer.ts';
import type { CallContext } from '../call/handler.ts';
import {
  ApiError,
  invalidArgument,
  invalidFields,
  notFound,
  type FieldViolation,
} from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { MESSAGES } from '../gen/messages.ts';
import {
  applyConstraints,
  hasCaps,
  quotaProblem,
  type EngineSettings,
  type ProfileConstraints,
} from '../engines/settings.ts';
import {
  NEWEST_FIRST,
  NEWEST_FIRST_SCHEMA,
  type ListedEngine,
  type ListSchemas,
} from '../engines/list-fields.ts';
import { checkChangeable, checkPause, checkResume, checkTerminate } from '../engines/lifecycle.ts';
import { allowsUse, engineAccess, type EngineUse } from '../engines/ownership.ts';
import { compileFilter } from '../list/filter.ts';
import { compileOrdering } from '../list/ordering.ts';
import { keysetPage } from '../list/pagination.ts';
import type { Intent } from '../store/objects.ts';
import { annotationProblem, checkDisplayName, resourceIdProblem } from '../validation/names.ts';
import { resolveUpdateMask, type MaskedResource } from '../validation/update-mask.ts';
import { isAssigned } from '../validation/profile.ts';
import { applyMask } from './masks.ts';
import { messageOf, type MessageKind, type StoredMessage } from './message-kinds.ts';
import { resolveReference } from './references.ts';
import {
  parentWorkspace,
  wireNames,
  workspaceOf,
  type ServiceDeps,
  type WireNames,
} from './resource-service.ts';
import { idOf, parentOf } from '../../../shared/resource-name.ts';

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

/** Status fields the gateway writes after creation; the operator owns the rest (state, urls…). */
const GATEWAY_STATUS = [
  'creator',
  'creatorDisplayName',
  'updater',
  'updaterDisplayName',
  'updateTime',
  'resumeTime',
  'profileInfo',
  'daiEngineVersionInfo',
  'h2oEngineVersionInfo',
  'notebookImageInfo',
];

/** States in which an engine counts against its user's running caps. */
const STOPPED_STATES = [
  'STATE_PAUSED',
  'STATE_FAILED',
  'STATE_DELETING',
  'STATE_TERMINATED',
  'STATE_TERMINATING',
];

/** A stored engine with the resourceVersion that guards its next write and its wanted lifecycle. */
export interface StoredEngine<E> {
  engine: E;
  resourceVersion: string;
  intent: Intent;
}

function storedEngine<E>(stored: StoredMessage<E>): StoredEngine<E> {
  return { engine: stored.message, resourceVersion: stored.resourceVersion, intent: stored.intent };
}

/** The shared machinery of one engine kind's RPCs. */
export class EngineStore<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion> {
  readonly rules: EngineApiRules<E, P, V>;
  readonly names: WireNames;
  readonly deps: ServiceDeps;
  private readonly gatewayStatus: string[];
  private readonly stateNames: Record<number, string>;

  constructor(deps: ServiceDeps, rules: EngineApiRules<E, P, V>) {
    this.deps = deps;
    this.rules = rules;
    this.names = wireNames(rules.kind);
    const fields = new Set((MESSAGES[rules.kind.message] ?? []).map((f) => f.json));
    this.gatewayStatus = GATEWAY_STATUS.filter((f) => fields.has(f));
    this.stateNames = Object.fromEntries(Object.entries(rules.states).map(([name, value]) => [value, name]));
  }

  now(): Date {
    return this.deps.now?.() ?? new Date();
  }

  authorize(context: CallContext, action: string, workspace: string): Promise<void> {
    return this.deps.authorizer.check(context.caller, `${this.names.permission}/${action}`, workspace);
  }

  /**
   * The workspace of an engine name, which must be well formed: an id no engine can have is
   * INVALID_ARGUMENT (naming `field`), not NOT_FOUND, also where allowMissing would hide it.
   */
  workspaceOf(name: string, field = 'name'): string {
    const workspace = workspaceOf(this.rules.kind, name, field);
    const problem = resourceIdProblem(idOf(name));
    if (problem !== undefined) throw invalidArgument(field, `the engine id ${problem}`);
    return workspace;
  }

  stateValue(name: string): number {
    const entry = Object.entries(this.stateNames).find(([, n]) => n === name);
    return entry === undefined ? 0 : Number(entry[0]);
  }

  stateName(engine: E): string {
    return typeof engine.state === 'string'
      ? engine.state
      : (this.stateNames[engine.state] ?? 'STATE_UNSPECIFIED');
  }

  async get(name: string): Promise<StoredEngine<E>> {
    return storedEngine(messageOf(this.rules.kind, await this.deps.store.get(this.rules.kind, name)));
  }

  /** Whether the caller administers `workspace`: reaches every user's engines there. */
  administers(context: CallContext, workspace: string): Promise<boolean> {
    return this.deps.authorizer.isAdministrator(context.caller, workspace);
  }

  /**
   * The engine of `name`, if the caller may `use` it (see `engines/ownership.ts`). Another
   * user's engine is NOT_FOUND, exactly as a missing one, so that nobody learns which engines
   * others have; a shared notebook engine, which every user of the workspace sees, is
   * PERMISSION_DENIED to act on for anyone but its creator and administrators.
   */
  async reach(name: string, context: CallContext, use: EngineUse): Promise<StoredEngine<E>> {
    const [found, administrator] = await Promise.all([
      this.get(name),
      this.administers(context, this.workspaceOf(name)),
    ]);
    const access = engineAccess(found.engine, context.caller, administrator);
    if (allowsUse(access, use)) return found;
    if (access === 'none') throw notFound(name);
    throw new ApiError(
      Code.PERMISSION_DENIED,
      `Only the creator of "${name}" or an administrator may change it; it is shared to see and open only`,
      { reason: 'NOT_ENGINE_CREATOR' },
    );
  }

  /** The engines of a workspace that the caller sees: its own and shared ones, or all for administrators. */
  async visible(workspace: string, context: CallContext): Promise<StoredEngine<E>[]> {
    const [all, administrator] = await Promise.all([
      this.all(workspace),
      this.administers(context, workspace),
    ]);
    return all.filter((s) => engineAccess(s.engine, context.caller, administrator) !== 'none');
  }

  async all(workspace: string): Promise<StoredEngine<E>[]> {
    return (await this.deps.store.list(this.rules.kind, workspace)).map((s) =>
      storedEngine(messageOf(this.rules.kind, s)),
    );
  }

  /**
   * Writes a change; the status keeps what the operator reported, except `alsoStatus` fields
   * the change itself decides (a lifecycle call's transitional state).
   */
  async save(
    engine: E,
    resourceVersion: string,
    intent: Intent,
    alsoStatus: readonly string[] = [],
  ): Promise<E> {
    return (await this.write(engine, resourceVersion, intent, alsoStatus)).engine;
  }

  /** {@link save}, answering the stored engine with its new resourceVersion. */
  async write(
    engine: E,
    resourceVersion: string,
    intent: Intent,
    alsoStatus: readonly string[] = [],
  ): Promise<StoredEngine<E>> {
    const stored = await this.deps.store.update(this.rules.kind, engine, resourceVersion, {
      intent,
      statusFields: [...this.gatewayStatus, ...alsoStatus],
    });
    return storedEngine(messageOf(this.rules.kind, stored));
  }

  /** The profile an engine uses, checked usable by the caller. */
  async profile(engine: E, prefix: string, context: CallContext): Promise<P> {
    const found = await resolveReference(this.deps.store, this.rules.profileKind, {
      name: engine.profile,
      field: `${prefix}.profile`,
      engineWorkspace: this.workspaceOf(engine.name),
    });
    const profile = found.message;
    if (!profile.enabled) throw invalidArgument(`${prefix}.profile`, `"${profile.name}" is disabled`);
    if (!isAssigned(profile, context.caller.roles)) {
      throw new ApiError(
        Code.PERMISSION_DENIED,
        `The profile "${profile.name}" is not assigned to any of your roles`,
        {
          reason: 'PROFILE_NOT_ASSIGNED',
        },
      );
    }
    return profile;
  }

  /** Fills defaults from the profile and checks every engine rule; INVALID_ARGUMENT with all violations. */
  shape(engine: E, profile: P, prefix: string): E {
    const constrained = applyConstraints(engine, profile, { prefix, fields: this.rules.settings });
    const violations = [...constrained.violations, ...commonViolations(engine, prefix)];
    let shaped = constrained.engine;
    if (this.rules.shape) {
      const result = this.rules.shape(shaped, profile, prefix);
      shaped = result.engine;
      violations.push(...result.violations);
    }
    if (violations.length > 0) throw invalidFields(violations);
    return shaped;
  }

  /** Whether an engine counts as running against its user's caps. */
  isRunning(stored: { engine: E; intent: Intent }): boolean {
    return !stored.intent[this.rules.stopIntent] && !STOPPED_STATES.includes(this.stateName(stored.engine));
  }

  /**
   * Runs `write` (which starts `engine`) only if the user's running engines of the same profile
   * leave room under the profile's caps. Checks and writes of one user and profile run one at a
   * time across every gateway replica (a Lease per user and profile, store/lease-lock.ts), each
   * counting on data that includes the previous holder's write, so concurrent creates and
   * resumes cannot overrun the caps together, wherever they arrive.
   */
  async withinQuota(engine: E, profile: P, write: () => Promise<StoredEngine<E>>): Promise<StoredEngine<E>> {
    // Without caps there is nothing to count, nor to serialise: creates run side by side.
    if (!hasCaps(profile)) return write();
    const workspace = this.workspaceOf(engine.name);
    const key = `${workspace}/${engine.creator}/${profile.name}`;
    const { store } = this.deps;
    return store.locks.run(key, async (held) => {
      // The previous holder may be another replica: count on data that has its write.
      const engines = await store.listHeld(this.rules.kind, workspace, held);
      const running = engines
        .map((s) => storedEngine(messageOf(this.rules.kind, s)))
        .filter((s) => s.engine.name !== engine.name && s.engine.creator === engine.creator)
        .filter((s) => s.engine.profile === engine.profile && this.isRunning(s))
        .map((s) => s.engine);
      const problem = quotaProblem(running, engine, profile);
      if (problem)
        throw new ApiError(Code.RESOURCE_EXHAUSTED, `Cannot start the engine: ${problem}`, {
          reason: 'QUOTA_EXCEEDED',
        });
      const saved = await write();
      return { result: saved, wrote: saved.resourceVersion };
    });
  }
}

function commonViolations(engine: EngineMessage, prefix: string): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const display = checkDisplayName(`${prefix}.display_name`, engine.displayName);
  if (display) violations.push(...display.violations);
  const annotation = annotationProblem(engine.annotations ?? {});
  if (annotation)
    violations.push({ field: `${prefix}.annotations["${annotation.key}"]`, description: annotation.problem });
  return violations;
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
  store: EngineStore<E, P, V>,
  request: EngineCreateRequest<E>,
  context: CallContext,
): Promise<E> {
  const { rules, names } = store;
  const workspace = parentWorkspace(request.parent);
  await store.authorize(context, 'CREATE', workspace);
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
  const profile = await store.profile(draft, prefix, context);
  const version = await resolveReference(store.deps.store, rules.versionKind, {
    name: rules.versionOf(draft),
    field: `${prefix}.${rules.versionField}`,
    engineWorkspace: workspace,
  });
  if (version.message.enabled === false)
    throw invalidArgument(`${prefix}.${rules.versionField}`, `"${version.message.name}" is disabled`);
  const engine = store.shape(
    {
      ...rules.created(draft, profile, version.message),
      state: store.stateValue('STATE_STARTING'),
      reconciling: true,
      updateTime: undefined,
    },
    profile,
    prefix,
  );
  if (request.validateOnly) return engine;
  const saved = await store.withinQuota(engine, profile, async () =>
    storedEngine(
      messageOf(
        rules.kind,
        await store.deps.store.create(rules.kind, engine, { intent: { [rules.stopIntent]: false } }),
      ),
    ),
  );
  return saved.engine;
}

/** Get: the engine, if the caller sees it. */
export async function getEngine<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion>(
  store: EngineStore<E, P, V>,
  name: string,
  context: CallContext,
): Promise<E> {
  await store.authorize(context, 'GET', store.workspaceOf(name));
  return (await store.reach(name, context, 'see')).engine;
}

/** List: one workspace, filtered and ordered where the kind allows, newest first by default. */
export async function listEngines<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion>(
  store: EngineStore<E, P, V>,
  request: EngineListRequest,
  context: CallContext,
): Promise<{ items: E[]; nextPageToken: string; totalSize: number }> {
  const { rules } = store;
  const { parent, filter, orderBy } = request;
  const workspace = parentWorkspace(parent);
  await store.authorize(context, 'LIST', workspace);
  const matches = rules.lists ? compileFilter(filter, rules.lists.filter) : () => true;
  const ordering = compileOrdering(orderBy, rules.lists?.order ?? NEWEST_FIRST_SCHEMA, NEWEST_FIRST);
  const engines = (await store.visible(workspace, context)).map((s) => s.engine).filter(matches);
  const { items, nextPageToken } = keysetPage<E>(
    engines,
    request,
    `parent=${parent}&filter=${filter}&order_by=${orderBy}`,
    ordering,
  );
  return { items, nextPageToken, totalSize: engines.length };
}

/** The audit fields of a changed engine. */
function engineUpdated<E extends EngineMessage>(engine: E, caller: Caller, now: Date): E {
  return { ...engine, updater: caller.subject, updaterDisplayName: caller.displayName, updateTime: now };
}

/** Update: masked fields re-checked against the (possibly new) profile. */
export async function updateEngine<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion>(
  store: EngineStore<E, P, V>,
  request: EngineUpdateRequest<E>,
  context: CallContext,
): Promise<E> {
  const { rules, names } = store;
  const input = request.engine;
  if (input === undefined) throw invalidArgument(names.snakeField, 'is required');
  await store.authorize(context, 'UPDATE', store.workspaceOf(input.name, `${names.snakeField}.name`));
  const paths = resolveUpdateMask(rules.mask, request.updateMask);
  if (paths instanceof Error) throw paths;
  const current = await store.reach(input.name, context, 'act').catch((error: unknown) => {
    if (request.allowMissing && error instanceof ApiError && error.code === Code.NOT_FOUND) return undefined;
    throw error;
  });
  // allowMissing: a missing engine is created from every field of the body; the mask is ignored.
  if (current === undefined)
    return createEngine(
      store,
      {
        parent: parentOf(input.name),
        id: idOf(input.name),
        engine: input,
        validateOnly: request.validateOnly,
      },
      context,
    );
  checkChangeable('update', store.stateName(current.engine));
  const next = applyMask(current.engine, input, paths);
  const profile = await store.profile(next, names.snakeField, context);
  const shaped = store.shape(next, profile, names.snakeField);
  const changedProfile = next.profile !== current.engine.profile;
  const engine = engineUpdated(
    changedProfile ? rules.withProfile(shaped, profile) : shaped,
    context.caller,
    store.now(),
  );
  if (request.validateOnly) return engine;
  return store.save(engine, current.resourceVersion, current.intent);
}

/**
 * Delete: the apiserver deletes, the operator's finalizer cleans up; the answer shows DELETING,
 * or nothing where allowMissing found no engine.
 */
export async function deleteEngine<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion>(
  store: EngineStore<E, P, V>,
  request: { name: string; allowMissing: boolean; validateOnly: boolean },
  context: CallContext,
): Promise<E | undefined> {
  const { name } = request;
  await store.authorize(context, 'DELETE', store.workspaceOf(name));
  let current: StoredEngine<E>;
  try {
    current = await store.reach(name, context, 'act');
  } catch (error: unknown) {
    if (request.allowMissing && error instanceof ApiError && error.code === Code.NOT_FOUND) return undefined;
    throw error;
  }
  const deleting = {
    ...current.engine,
    state: store.stateValue('STATE_DELETING'),
    deleteTime: store.now(),
  };
  if (!request.validateOnly) await store.deps.store.delete(store.rules.kind, name, current.resourceVersion);
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
  store: EngineStore<E, P, V>,
  action: StopAction,
  request: { name: string; validateOnly: boolean },
  context: CallContext,
): Promise<E> {
  const { rules, names } = store;
  const { name } = request;
  await store.authorize(context, action, store.workspaceOf(name));
  const current = await store.reach(name, context, 'act');
  const state = store.stateName(current.engine);
  const stopped = current.intent[rules.stopIntent] === true;
  if (action === 'PAUSE') checkPause(state, stopped);
  else if (action === 'TERMINATE') checkTerminate(state, stopped);
  else checkResume(state, stopped);
  const resuming = action === 'RESUME';
  // The call starts a transition: the engine reads as moving until the operator reports the
  // outcome, so a client polling for a final state never mistakes the old one for it.
  const moving = { state: store.stateValue(TRANSITIONS[action]), reconciling: true };
  const engine = { ...current.engine, ...moving, ...(resuming ? { resumeTime: store.now() } : {}) };
  if (request.validateOnly) return engine;
  const write = (): Promise<StoredEngine<E>> =>
    store.write(engine, current.resourceVersion, { [rules.stopIntent]: !resuming }, ['state', 'reconciling']);
  if (!resuming) return (await write()).engine;
  const profile = await store.profile(engine, names.snakeField, context);
  return (await store.withinQuota(engine, profile, write)).engine;
}
