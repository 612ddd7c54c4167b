/**
 * SandboxEngineService: sandboxes built from an administrator's image and template. A create
 * snapshots both (later edits of the template change no existing engine) and records the wish
 * to run; the operator runs the pod and reports the state. Terminate records the wish to stop
 * for good; there is no resume. Only the creator (and administrators of the workspace) see an
 * engine: to anyone else it does not exist.
 */
import type { CallContext, Handlers } from '../call/handler.ts';
import { serviceHandlers } from '../call/service-impl.ts';
import { invalidArgument, invalidFields, notFound, type FieldViolation } from '../errors/api-error.ts';
import {
  SandboxEngine_PendingReason,
  SandboxEngine_State,
  type SandboxEngine,
} from '../gen/ai/h2o/engine/v1/sandbox_engine.pb.ts';
import type { SandboxEngineImage } from '../gen/ai/h2o/engine/v1/sandbox_engine_image.pb.ts';
import {
  SandboxEngineServiceService,
  type CreateSandboxEngineRequest,
  type ListSandboxEnginesRequest,
  type ListSandboxEnginesResponse,
} from '../gen/ai/h2o/engine/v1/sandbox_engine_service.pb.ts';
import type {
  SandboxEngineTemplate,
  SandboxEngineTemplateInfo,
} from '../gen/ai/h2o/engine/v1/sandbox_engine_template.pb.ts';
import { NEWEST_FIRST } from '../engines/list-fields.ts';
import { checkTerminate } from '../engines/lifecycle.ts';
import { engineAccess } from '../engines/ownership.ts';
import type { FilterSchema } from '../list/filter.ts';
import { compileOrdering } from '../list/ordering.ts';
import { keysetPage } from '../list/pagination.ts';
import { annotationProblem, checkDisplayName, resourceIdProblem } from '../validation/names.ts';
import { SANDBOX_CONTAINER, sandboxPodName } from '../../../shared/workloads.ts';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import type { ReachSandbox, ResolveSandbox, SandboxTarget } from '../sandbox/target.ts';
import { objectName } from '../store/names.ts';
import { MESSAGE_KINDS, messageOf, type StoredMessage } from './message-kinds.ts';
import { resolveReference } from './references.ts';
import { engineWorkspace } from './engine-permissions.ts';
import { parentWorkspace, wireNames, type ClusterServiceDeps, type ServiceDeps } from './resource-service.ts';
import { idOf } from '../../../shared/resource-name.ts';

const KIND = MESSAGE_KINDS.SandboxEngine;
const NAMES = wireNames(KIND);
const FIELD = 'sandbox_engine';

/** A stored sandbox engine, with the version that guards its next write and its wanted stop. */
export interface StoredSandbox {
  engine: SandboxEngine;
  resourceVersion: string;
  terminated: boolean;
}

/** The state's name, however the stored message spells the enum. */
export function sandboxStateName(engine: SandboxEngine): string {
  const state: unknown = engine.state;
  if (typeof state === 'string') return state;
  const entry = Object.entries(SandboxEngine_State).find(([, value]) => value === state);
  return entry?.[0] ?? 'STATE_UNSPECIFIED';
}

function stored(found: StoredMessage<SandboxEngine>): StoredSandbox {
  return {
    engine: found.message,
    resourceVersion: found.resourceVersion,
    terminated: found.intent['terminated'] === true,
  };
}

/** The sandbox engines as one caller may reach them. */
export class SandboxEngines {
  private readonly deps: ClusterServiceDeps;

  constructor(deps: ClusterServiceDeps) {
    this.deps = deps;
  }

  /** The workspace of a well-formed engine name; INVALID_ARGUMENT naming `field` otherwise. */
  workspaceOf(name: string, field = 'name'): string {
    return engineWorkspace(KIND, name, field);
  }

  authorize(context: CallContext, action: string, workspace: string): Promise<void> {
    return this.deps.authorizer.check(context.caller, `${NAMES.permission}/${action}`, workspace);
  }

  /**
   * The engine of `name` if the caller created it or administers its workspace; NOT_FOUND
   * otherwise, exactly as for a missing one, so that nobody learns which sandboxes others have.
   */
  async reach(name: string, context: CallContext): Promise<StoredSandbox> {
    const [found, administrator] = await Promise.all([
      this.deps.store.get(KIND, name),
      this.deps.authorizer.isAdministrator(context.caller, this.workspaceOf(name)),
    ]);
    const engine = stored(messageOf(KIND, found));
    if (engineAccess(engine.engine, context.caller, administrator) !== 'all') throw notFound(name);
    return engine;
  }

  /**
   * A sandbox as an in-engine call reaches it: with the service's own permission `action` on the
   * workspace, only an engine the caller reaches (else NOT_FOUND), and, when the call acts in the
   * engine, only while it runs (else FAILED_PRECONDITION). Says where its code runs.
   */
  async inEngine(
    name: string,
    context: CallContext,
    { action, running }: { action: string; running: boolean },
  ): Promise<{ engine: SandboxEngine; objectName: string; target: SandboxTarget }> {
    const workspace = this.workspaceOf(name);
    await this.authorize(context, action, workspace);
    const { engine } = await this.reach(name, context);
    const state = sandboxStateName(engine);
    if (running && state !== 'STATE_RUNNING')
      throw new ApiError(
        Code.FAILED_PRECONDITION,
        `The sandbox engine "${name}" is not running (it is ${state}); in-engine calls need a running engine`,
        { reason: 'ENGINE_NOT_RUNNING' },
      );
    const object = objectName(workspace, idOf(name)) ?? '';
    const target = {
      namespace: this.deps.store.namespace,
      pod: sandboxPodName(object),
      container: SANDBOX_CONTAINER,
    };
    return { engine, objectName: object, target };
  }

  /** {@link inEngine} for calls that act in a running engine, as the in-engine services take it. */
  resolver(action: string): ResolveSandbox {
    return async (name, context) => (await this.reacher(action)(name, context)).target;
  }

  /** {@link resolver}, answering the engine too. */
  reacher(action: string): ReachSandbox {
    return (name, context) => this.inEngine(name, context, { action, running: true });
  }

  async visible(workspace: string, context: CallContext): Promise<SandboxEngine[]> {
    const [all, administrator] = await Promise.all([
      this.deps.store.list(KIND, workspace),
      this.deps.authorizer.isAdministrator(context.caller, workspace),
    ]);
    return all
      .map((s) => messageOf(KIND, s).message)
      .filter((e) => engineAccess(e, context.caller, administrator) === 'all');
  }

  /** The image and template an engine in `workspace` is created from (see {@link catalogue}). */
  madeFrom(
    engine: SandboxEngine,
    workspace: string,
  ): Promise<{ image: SandboxEngineImage; template: SandboxEngineTemplate }> {
    return catalogue(this.deps, engine, workspace);
  }

  /** Stores a new engine with the wish to run it. */
  async create(engine: SandboxEngine): Promise<SandboxEngine> {
    const saved = await this.deps.store.create(KIND, engine, { intent: { terminated: false } });
    return messageOf(KIND, saved).message;
  }

  /** Stores the wish to stop an engine for good, with the stopping state the call itself decides. */
  async terminate(engine: SandboxEngine, resourceVersion: string): Promise<SandboxEngine> {
    const saved = await this.deps.store.update(KIND, engine, resourceVersion, {
      intent: { terminated: true },
      statusFields: ['state', 'pendingReason', 'pendingMessage'],
    });
    return messageOf(KIND, saved).message;
  }

  delete(name: string, resourceVersion: string): Promise<void> {
    return this.deps.store.delete(KIND, name, resourceVersion);
  }
}

function engineViolations(engine: SandboxEngine): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const display = checkDisplayName(`${FIELD}.display_name`, engine.displayName);
  if (display) violations.push(...display.violations);
  const annotation = annotationProblem(engine.annotations);
  if (annotation)
    violations.push({ field: `${FIELD}.annotations["${annotation.key}"]`, description: annotation.problem });
  return violations;
}

/** The image and template an engine is created from: in its workspace or global, and enabled. */
async function catalogue(
  deps: ServiceDeps,
  engine: SandboxEngine,
  workspace: string,
): Promise<{ image: SandboxEngineImage; template: SandboxEngineTemplate }> {
  const [image, template] = await Promise.all([
    resolveReference(deps.store, MESSAGE_KINDS.SandboxEngineImage, {
      name: engine.sandboxEngineImage,
      field: `${FIELD}.sandbox_engine_image`,
      engineWorkspace: workspace,
    }),
    resolveReference(deps.store, MESSAGE_KINDS.SandboxEngineTemplate, {
      name: engine.sandboxEngineTemplate,
      field: `${FIELD}.sandbox_engine_template`,
      engineWorkspace: workspace,
    }),
  ]);
  const chosen = { image: image.message, template: template.message };
  if (!chosen.image.enabled)
    throw invalidArgument(`${FIELD}.sandbox_engine_image`, `"${chosen.image.name}" is disabled`);
  if (!chosen.template.enabled)
    throw invalidArgument(`${FIELD}.sandbox_engine_template`, `"${chosen.template.name}" is disabled`);
  return chosen;
}

async function createSandboxEngine(
  engines: SandboxEngines,
  request: CreateSandboxEngineRequest,
  context: CallContext,
): Promise<SandboxEngine> {
  const workspace = parentWorkspace(request.parent);
  await engines.authorize(context, 'CREATE', workspace);
  const id = request.sandboxEngineId;
  const idProblem = resourceIdProblem(id);
  if (idProblem) throw invalidArgument(`${FIELD}_id`, idProblem);
  const input = request.sandboxEngine;
  if (input === undefined) throw invalidArgument(FIELD, 'is required');
  const violations = engineViolations(input);
  if (violations.length > 0) throw invalidFields(violations);
  const { image, template } = await engines.madeFrom(input, workspace);
  const templateInfo: SandboxEngineTemplateInfo = { ...template, storageClassName: '' };
  const engine: SandboxEngine = {
    name: `workspaces/${workspace}/${KIND.collection}/${id}`,
    displayName: input.displayName,
    uid: '',
    annotations: input.annotations,
    sandboxEngineImage: image.name,
    sandboxEngineTemplate: template.name,
    // Audit fields come from the verified identity only, never from the request.
    creator: context.caller.subject,
    creatorDisplayName: context.caller.displayName,
    sandboxEngineImageInfo: image,
    sandboxEngineTemplateInfo: templateInfo,
    state: SandboxEngine_State.STATE_STARTING,
    pendingReason: SandboxEngine_PendingReason.PENDING_REASON_CREATING_RESOURCES,
    pendingMessage: 'The engine pod is being created',
    currentIdleDuration: undefined,
    createTime: undefined,
  };
  return engines.create(engine);
}

/** The fields lists order by: newest first, then by name. */
const ORDER_FIELDS: FilterSchema<SandboxEngine> = {
  name: { type: 'string', get: (e) => e.name },
  create_time: { type: 'timestamp', get: (e) => e.createTime },
};

const ORDERING = compileOrdering('', ORDER_FIELDS, NEWEST_FIRST);

async function listSandboxEngines(
  engines: SandboxEngines,
  request: ListSandboxEnginesRequest,
  context: CallContext,
): Promise<ListSandboxEnginesResponse> {
  const { parent } = request;
  const workspace = parentWorkspace(parent);
  await engines.authorize(context, 'LIST', workspace);
  const visible = await engines.visible(workspace, context);
  const { items, nextPageToken } = keysetPage(visible, request, `parent=${parent}`, ORDERING);
  return { sandboxEngines: items, nextPageToken };
}

async function terminateSandboxEngine(
  engines: SandboxEngines,
  name: string,
  context: CallContext,
): Promise<SandboxEngine> {
  await engines.authorize(context, 'TERMINATE', engines.workspaceOf(name));
  const current = await engines.reach(name, context);
  checkTerminate(sandboxStateName(current.engine), current.terminated);
  // The engine reads as stopping from this answer on, until the operator reports it stopped.
  const engine: SandboxEngine = {
    ...current.engine,
    state: SandboxEngine_State.STATE_TERMINATING,
    pendingReason: SandboxEngine_PendingReason.PENDING_REASON_DELETING_RESOURCES,
    pendingMessage: 'The engine pod is being stopped',
  };
  return engines.terminate(engine, current.resourceVersion);
}

async function deleteSandboxEngine(
  engines: SandboxEngines,
  name: string,
  context: CallContext,
): Promise<void> {
  await engines.authorize(context, 'DELETE', engines.workspaceOf(name));
  const current = await engines.reach(name, context);
  await engines.delete(name, current.resourceVersion);
}

/** The RPCs of SandboxEngineService. */
export function sandboxEngineService(deps: ClusterServiceDeps): Handlers {
  const engines = new SandboxEngines(deps);
  return serviceHandlers(SandboxEngineServiceService, {
    createSandboxEngine: async (request, context) => ({
      sandboxEngine: await createSandboxEngine(engines, request, context),
    }),
    getSandboxEngine: async (request, context) => {
      const { name } = request;
      await engines.authorize(context, 'GET', engines.workspaceOf(name));
      return { sandboxEngine: (await engines.reach(name, context)).engine };
    },
    listSandboxEngines: (request, context) => listSandboxEngines(engines, request, context),
    terminateSandboxEngine: async (request, context) => ({
      sandboxEngine: await terminateSandboxEngine(engines, request.name, context),
    }),
    deleteSandboxEngine: async (request, context) => {
      await deleteSandboxEngine(engines, request.name, context);
      return {};
    },
  });
}
