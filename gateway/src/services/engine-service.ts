/**
 * The engine services (DAI, H2O, notebook): one implementation driven by each kind's
 * description. Engines are created from a profile and a version or image, found in the engine's
 * workspace or in workspaces/global; the profile fills what the user leaves unset and bounds what
 * the user sets; lifecycle calls record the wanted state in the spec for the operator.
 */
import { RESOURCE_KINDS, type ResourceKind } from '../../../shared/resources.ts';
import type { CallContext, Handler, Handlers } from '../call/handler.ts';
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
import type { Stored } from '../store/store.ts';
import { annotationProblem, checkDisplayName, resourceIdProblem } from '../validation/names.ts';
import { resolveUpdateMask, type MaskedResource } from '../validation/update-mask.ts';
import { isAssigned } from '../validation/profile.ts';
import { applyMask } from './masks.ts';
import { resolveReference } from './references.ts';
import {
  parentWorkspace,
  updated,
  wireNames,
  workspaceOf,
  type ServiceDeps,
  type WireNames,
} from './resource-service.ts';
import { idOf, parentOf } from '../../../shared/resource-name.ts';

/** An engine message as the services handle it. */
export type Engine = ListedEngine &
  EngineSettings & {
    profile: string;
    annotations?: Record<string, string>;
    [field: string]: unknown;
  };

type Profile = ProfileConstraints & {
  name: string;
  enabled: boolean;
  assignedOidcRolesEnabled: boolean;
  assignedOidcRoles: string[];
  maxRunningEngines?: number | undefined;
};

/** What differs between engine kinds. */
export interface EngineKind {
  kind: ResourceKind;
  mask: MaskedResource;
  profileKind: ResourceKind;
  /** The field naming the version or image, e.g. `daiEngineVersion`, and its kind. */
  versionField: string;
  versionKind: ResourceKind;
  /** Snapshot fields copied at creation. */
  profileInfoField: string;
  versionInfoField: string;
  /** The sizing fields the kind has. */
  settings: readonly (
    'cpu' | 'gpu' | 'memoryBytes' | 'storageBytes' | 'nodeCount' | 'maxIdleDuration' | 'maxRunningDuration'
  )[];
  /** The spec field recording the wanted stop: `paused` or `terminated`. */
  stopIntent: 'paused' | 'terminated';
  /** Lists with filter and order_by (DAI, H2O); notebook lists page only. */
  lists?: ListSchemas;
  /** Kind-specific checks and defaults on create and update (e.g. DAI configuration). */
  shape?: (
    engine: Engine,
    profile: Record<string, unknown>,
    prefix: string,
  ) => { engine: Engine; violations: FieldViolation[] };
  /** Kind-specific fields copied from the profile at creation (e.g. storage classes). */
  fromProfile?: (profile: Record<string, unknown>) => Record<string, unknown>;
}

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

/** The shared machinery of one engine kind's RPCs. */
export class EngineStore {
  readonly kind: EngineKind;
  readonly names: WireNames;
  readonly deps: ServiceDeps;
  private readonly gatewayStatus: string[];
  private readonly stateNames: Record<number, string>;

  constructor(deps: ServiceDeps, kind: EngineKind, states: Record<string, number>) {
    this.deps = deps;
    this.kind = kind;
    this.names = wireNames(kind.kind);
    const fields = new Set((MESSAGES[kind.kind.message] ?? []).map((f) => f.json));
    this.gatewayStatus = GATEWAY_STATUS.filter((f) => fields.has(f));
    this.stateNames = Object.fromEntries(Object.entries(states).map(([name, value]) => [value, name]));
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
    const workspace = workspaceOf(this.kind.kind, name, field);
    const problem = resourceIdProblem(idOf(name));
    if (problem !== undefined) throw invalidArgument(field, `the engine id ${problem}`);
    return workspace;
  }

  stateValue(name: string): number {
    const entry = Object.entries(this.stateNames).find(([, n]) => n === name);
    return entry === undefined ? 0 : Number(entry[0]);
  }

  stateName(engine: Engine): string {
    return typeof engine.state === 'string'
      ? engine.state
      : (this.stateNames[engine.state] ?? 'STATE_UNSPECIFIED');
  }

  async get(name: string): Promise<Stored & { engine: Engine }> {
    const stored = await this.deps.store.get(this.kind.kind, name);
    return { ...stored, engine: stored.message as unknown as Engine };
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
  async reach(name: string, context: CallContext, use: EngineUse): Promise<Stored & { engine: Engine }> {
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
  async visible(workspace: string, context: CallContext): Promise<(Stored & { engine: Engine })[]> {
    const [all, administrator] = await Promise.all([
      this.all(workspace),
      this.administers(context, workspace),
    ]);
    return all.filter((s) => engineAccess(s.engine, context.caller, administrator) !== 'none');
  }

  async all(workspace: string): Promise<(Stored & { engine: Engine })[]> {
    return (await this.deps.store.list(this.kind.kind, workspace)).map((s) => ({
      ...s,
      engine: s.message as unknown as Engine,
    }));
  }

  /**
   * Writes a change; the status keeps what the operator reported, except `alsoStatus` fields
   * the change itself decides (a lifecycle call's transitional state).
   */
  async save(
    engine: Engine,
    resourceVersion: string,
    intent: Intent,
    alsoStatus: readonly string[] = [],
  ): Promise<Engine> {
    return (await this.write(engine, resourceVersion, intent, alsoStatus)).message as unknown as Engine;
  }

  /** {@link save}, answering the stored resource with its new resourceVersion. */
  write(
    engine: Engine,
    resourceVersion: string,
    intent: Intent,
    alsoStatus: readonly string[] = [],
  ): Promise<Stored> {
    return this.deps.store.update(this.kind.kind, engine, resourceVersion, {
      intent,
      statusFields: [...this.gatewayStatus, ...alsoStatus],
    });
  }

  /** The profile an engine uses, checked usable by the caller. */
  async profile(engine: Engine, prefix: string, context: CallContext): Promise<Profile> {
    const found = await resolveReference(this.deps.store, this.kind.profileKind, {
      name: engine.profile,
      field: `${prefix}.profile`,
      engineWorkspace: this.workspaceOf(engine.name),
    });
    const profile = found.message as unknown as Profile;
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
  shape(engine: Engine, profile: Profile, prefix: string): Engine {
    const constrained = applyConstraints(engine, profile, { prefix, fields: this.kind.settings });
    const violations = [...constrained.violations, ...commonViolations(engine, prefix)];
    let shaped = constrained.engine;
    if (this.kind.shape) {
      const result = this.kind.shape(shaped, profile as unknown as Record<string, unknown>, prefix);
      shaped = result.engine;
      violations.push(...result.violations);
    }
    if (violations.length > 0) throw invalidFields(violations);
    return shaped;
  }

  /** Whether an engine counts as running against its user's caps. */
  isRunning(stored: { engine: Engine; intent: Intent }): boolean {
    return !stored.intent[this.kind.stopIntent] && !STOPPED_STATES.includes(this.stateName(stored.engine));
  }

  /**
   * Runs `write` (which starts `engine`) only if the user's running engines of the same profile
   * leave room under the profile's caps. Checks and writes of one user and profile run one at a
   * time across every gateway replica (a Lease per user and profile, store/lease-lock.ts), each
   * counting on data that includes the previous holder's write, so concurrent creates and
   * resumes cannot overrun the caps together, wherever they arrive.
   */
  async withinQuota(engine: Engine, profile: Profile, write: () => Promise<Stored>): Promise<Stored> {
    // Without caps there is nothing to count, nor to serialise: creates run side by side.
    if (!hasCaps(profile)) return write();
    const workspace = this.workspaceOf(engine.name);
    const key = `${workspace}/${engine.creator}/${profile.name}`;
    const { store } = this.deps;
    return store.locks.run(key, async (held) => {
      // The previous holder may be another replica: count on data that has its write.
      const engines = await store.listHeld(this.kind.kind, workspace, held);
      const running = engines
        .map((s) => ({ ...s, engine: s.message as unknown as Engine }))
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

function commonViolations(engine: Engine, prefix: string): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const display = checkDisplayName(`${prefix}.display_name`, engine.displayName);
  if (display) violations.push(...display.violations);
  const annotation = annotationProblem(engine.annotations ?? {});
  if (annotation)
    violations.push({ field: `${prefix}.annotations["${annotation.key}"]`, description: annotation.problem });
  return violations;
}

/** Create: validate, resolve references, fill defaults, snapshot, check caps, write. */
function createHandler(store: EngineStore): Handler {
  const { kind, names } = store;
  return async (request, context) => {
    const workspace = parentWorkspace(request['parent'] as string);
    await store.authorize(context, 'CREATE', workspace);
    const id = request[names.idField] as string;
    const idProblem = resourceIdProblem(id);
    if (idProblem) throw invalidArgument(`${names.snakeField}_id`, idProblem);
    const input = request[names.field] as Engine | undefined;
    if (input === undefined) throw invalidArgument(names.snakeField, 'is required');
    const prefix = names.snakeField;
    const name = `workspaces/${workspace}/${kind.kind.collection}/${id}`;
    const draft: Engine = {
      ...input,
      name,
      // Audit fields come from the verified identity only, never from the request.
      creator: context.caller.subject,
      creatorDisplayName: context.caller.displayName,
      updater: '',
      updaterDisplayName: '',
    };
    const profile = await store.profile(draft, prefix, context);
    const version = await resolveReference(store.deps.store, kind.versionKind, {
      name: typeof draft[kind.versionField] === 'string' ? (draft[kind.versionField] as string) : '',
      field: `${prefix}.${snake(kind.versionField)}`,
      engineWorkspace: workspace,
    });
    if (version.message['enabled'] === false)
      throw invalidArgument(
        `${prefix}.${snake(kind.versionField)}`,
        `"${String(version.message['name'])}" is disabled`,
      );
    const engine = store.shape(
      {
        ...draft,
        ...(kind.fromProfile?.(profile as unknown as Record<string, unknown>) ?? {}),
        [kind.versionField]: version.message['name'],
        [kind.profileInfoField]: profile,
        [kind.versionInfoField]: version.message,
        state: store.stateValue('STATE_STARTING'),
        reconciling: true,
        updateTime: undefined,
      },
      profile,
      prefix,
    );
    if (request['validateOnly'] === true) return { [names.field]: engine };
    const saved = await store.withinQuota(engine, profile, () =>
      store.deps.store.create(kind.kind, engine, { intent: { [kind.stopIntent]: false } }),
    );
    return { [names.field]: saved.message };
  };
}

/** List: one workspace, filtered and ordered where the kind allows, newest first by default. */
function listHandler(store: EngineStore): Handler {
  const { kind, names } = store;
  return async (request, context) => {
    const parent = request['parent'] as string;
    const workspace = parentWorkspace(parent);
    await store.authorize(context, 'LIST', workspace);
    const filter = (request['filter'] as string | undefined) ?? '';
    const orderBy = (request['orderBy'] as string | undefined) ?? '';
    const matches = kind.lists ? compileFilter(filter, kind.lists.filter) : () => true;
    const ordering = compileOrdering(orderBy, kind.lists?.order ?? NEWEST_FIRST_SCHEMA, NEWEST_FIRST);
    const engines = (await store.visible(workspace, context)).map((s) => s.engine).filter(matches);
    const { items, nextPageToken } = keysetPage(
      engines,
      request as { pageSize?: number; pageToken?: string },
      `parent=${parent}&filter=${filter}&order_by=${orderBy}`,
      ordering,
    );
    return { [names.listField]: items, nextPageToken, ...(kind.lists ? { totalSize: engines.length } : {}) };
  };
}

function createMissing(
  store: EngineStore,
  input: Engine,
  request: Record<string, unknown>,
  context: CallContext,
): Promise<object> {
  return createHandler(store)(
    {
      parent: parentOf(input.name),
      [store.names.idField]: idOf(input.name),
      [store.names.field]: input,
      validateOnly: request['validateOnly'],
    },
    context,
  );
}

/** Update: masked fields re-checked against the (possibly new) profile. */
function updateHandler(store: EngineStore): Handler {
  const { kind, names } = store;
  return async (request, context) => {
    const input = request[names.field] as Engine | undefined;
    if (input === undefined) throw invalidArgument(names.snakeField, 'is required');
    await store.authorize(context, 'UPDATE', store.workspaceOf(input.name, `${names.snakeField}.name`));
    const paths = resolveUpdateMask(kind.mask, request['updateMask'] as string[] | undefined);
    if (paths instanceof Error) throw paths;
    const current = await store.reach(input.name, context, 'act').catch((error: unknown) => {
      if (request['allowMissing'] === true && error instanceof ApiError && error.code === Code.NOT_FOUND)
        return undefined;
      throw error;
    });
    // allowMissing: a missing engine is created from every field of the body; the mask is ignored.
    if (current === undefined) return createMissing(store, input, request, context);
    checkChangeable('update', store.stateName(current.engine));
    const next = applyMask(current.engine, input, paths);
    const profile = await store.profile(next, names.snakeField, context);
    const shaped = store.shape(next, profile, names.snakeField);
    const changedProfile = next.profile !== current.engine.profile;
    const engine = updated(
      { ...shaped, ...(changedProfile ? { [kind.profileInfoField]: profile } : {}) } as Engine & {
        creator: string;
        creatorDisplayName: string;
        updater: string;
        updaterDisplayName: string;
      },
      context.caller,
      store.now(),
    );
    if (request['validateOnly'] === true) return { [names.field]: engine };
    return { [names.field]: await store.save(engine, current.resourceVersion, current.intent) };
  };
}

/** Delete: the apiserver deletes, the operator's finalizer cleans up; the answer shows DELETING. */
function deleteHandler(store: EngineStore): Handler {
  const { kind, names } = store;
  return async (request, context) => {
    const name = request['name'] as string;
    await store.authorize(context, 'DELETE', store.workspaceOf(name));
    let current: Stored & { engine: Engine };
    try {
      current = await store.reach(name, context, 'act');
    } catch (error: unknown) {
      if (request['allowMissing'] === true && error instanceof ApiError && error.code === Code.NOT_FOUND)
        return {};
      throw error;
    }
    const deleting = {
      ...current.engine,
      state: store.stateValue('STATE_DELETING'),
      deleteTime: store.now(),
    };
    if (request['validateOnly'] !== true)
      await store.deps.store.delete(kind.kind, name, current.resourceVersion);
    return { [names.field]: deleting };
  };
}

/** The state an engine reads as right after each lifecycle call. */
const TRANSITIONS = {
  PAUSE: 'STATE_PAUSING',
  TERMINATE: 'STATE_TERMINATING',
  RESUME: 'STATE_STARTING',
} as const;

/** Pause, resume or terminate: records the wanted stop in the spec. */
function stopHandler(store: EngineStore, action: 'PAUSE' | 'RESUME' | 'TERMINATE'): Handler {
  const { kind, names } = store;
  return async (request, context) => {
    const name = request['name'] as string;
    await store.authorize(context, action, store.workspaceOf(name));
    const current = await store.reach(name, context, 'act');
    const state = store.stateName(current.engine);
    const stopped = current.intent[kind.stopIntent] === true;
    if (action === 'PAUSE') checkPause(state, stopped);
    else if (action === 'TERMINATE') checkTerminate(state, stopped);
    else checkResume(state, stopped);
    const resuming = action === 'RESUME';
    // The call starts a transition: the engine reads as moving until the operator reports the
    // outcome, so a client polling for a final state never mistakes the old one for it.
    const moving = { state: store.stateValue(TRANSITIONS[action]), reconciling: true };
    const engine = { ...current.engine, ...moving, ...(resuming ? { resumeTime: store.now() } : {}) };
    if (request['validateOnly'] === true) return { [names.field]: engine };
    const write = (): Promise<Stored> =>
      store.write(engine, current.resourceVersion, { [kind.stopIntent]: !resuming }, [
        'state',
        'reconciling',
      ]);
    if (!resuming) return { [names.field]: (await write()).message };
    const profile = await store.profile(engine, names.snakeField, context);
    return { [names.field]: (await store.withinQuota(engine, profile, write)).message };
  };
}

function snake(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Create, Get, List, Update and Delete of an engine kind, plus its stop calls. */
export function engineHandlers(
  store: EngineStore,
  stops: readonly ('PAUSE' | 'RESUME' | 'TERMINATE')[],
): Record<string, Handler> {
  const { kind, names } = store;
  const rpc = (name: string): string => `${names.service}.${name}`;
  const handlers: Record<string, Handler> = {
    [rpc(`Create${kind.kind.kind}`)]: createHandler(store),
    [rpc(`Get${kind.kind.kind}`)]: async (request, context) => {
      const name = request['name'] as string;
      await store.authorize(context, 'GET', store.workspaceOf(name));
      return { [names.field]: (await store.reach(name, context, 'see')).engine };
    },
    [rpc(`List${kind.kind.kind}s`)]: listHandler(store),
    [rpc(`Update${kind.kind.kind}`)]: updateHandler(store),
    [rpc(`Delete${kind.kind.kind}`)]: deleteHandler(store),
  };
  const verbs = { PAUSE: 'Pause', RESUME: 'Resume', TERMINATE: 'Terminate' } as const;
  for (const action of stops) handlers[rpc(`${verbs[action]}${kind.kind.kind}`)] = stopHandler(store, action);
  return handlers;
}

export const ENGINE_KINDS = {
  DAIEngine: RESOURCE_KINDS.DAIEngine,
  H2OEngine: RESOURCE_KINDS.H2OEngine,
  NotebookEngine: RESOURCE_KINDS.NotebookEngine,
};

export type { Handlers };
