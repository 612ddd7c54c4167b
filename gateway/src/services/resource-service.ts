import type { ResourceKind } from '../../../shared/resources.ts';
import type { Authorizer, Caller } from '../auth/authorizer.ts';
import type { CallContext } from '../call/handler.ts';
import { invalidArgument } from '../errors/api-error.ts';
import { page } from '../list/pagination.ts';
import type { ClusterPlacement, Store } from '../store/store-interface.ts';
import { parseName, workspaceIdProblem } from '../validation/names.ts';
import { resolveUpdateMask, type MaskedResource } from '../validation/update-mask.ts';
import { applyMask } from './masks.ts';
import { messageOf, type MessageKind } from './message-kinds.ts';

/** What a service needs from the rest of the gateway. */
export interface ServiceDeps {
  store: Store;
  authorizer: Authorizer;
  now?: () => Date;
}

/** What services that reach into engines' pods need: the store, and where its resources live. */
export interface ClusterServiceDeps extends ServiceDeps {
  store: Store & ClusterPlacement;
}

/** A stored API resource: every one has a name and audit fields. */
export interface Resource {
  name: string;
  creator: string;
  creatorDisplayName: string;
  updater: string;
  updaterDisplayName: string;
  updateTime?: Date | undefined;
}

/**
 * How one resource kind is named on the wire, all derived from its kind: the service
 * `ai.h2o.engine.v1.DAIEngineProfileService`, RPCs `CreateDAIEngineProfile`…, the message field
 * `daiEngineProfile` (snake `dai_engine_profile` in errors), its list `daiEngineProfiles`, the
 * id query `daiEngineProfileId`, and permissions `actions/enginemanager/daiEngineProfiles/{ACTION}`.
 */
export interface WireNames {
  service: string;
  field: string;
  snakeField: string;
  listField: string;
  idField: string;
  permission: string;
}

export function wireNames(kind: ResourceKind): WireNames {
  const field = kind.collection.replace(/s$/, '');
  return {
    service: `ai.h2o.engine.v1.${kind.kind}Service`,
    field,
    snakeField: field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
    listField: kind.collection,
    idField: `${field}Id`,
    permission: `actions/enginemanager/${kind.collection}`,
  };
}

/** The workspace of a parent `workspaces/{workspace}`; `workspaces/-` is for the generic engine list only. */
export function parentWorkspace(parent: string, field = 'parent'): string {
  const match = /^workspaces\/([^/]+)$/.exec(parent);
  if (match?.[1] === undefined || match[1] === '-')
    throw invalidArgument(field, `"${parent}" is not a workspace name such as "workspaces/default"`);
  return checkedWorkspace(match[1], field);
}

/** `workspace` if it is a valid workspace id; INVALID_ARGUMENT naming `field` otherwise. */
export function checkedWorkspace(workspace: string, field: string): string {
  const problem = workspaceIdProblem(workspace);
  if (problem !== undefined) throw invalidArgument(field, problem);
  return workspace;
}

/** The workspace of a resource name of `kind`; INVALID_ARGUMENT naming `field` when it is not one. */
export function workspaceOf(kind: ResourceKind, name: string, field = 'name'): string {
  const parsed = parseName(name, kind.collection);
  if (parsed === undefined)
    throw invalidArgument(
      field,
      `"${name}" is not a name such as "workspaces/default/${kind.collection}/id"`,
    );
  return checkedWorkspace(parsed.workspace, field);
}

/** The audit fields of a new resource: created by the caller, never updated. */
export function created<T extends Resource>(message: T, name: string, caller: Caller): T {
  return {
    ...message,
    name,
    creator: caller.subject,
    creatorDisplayName: caller.displayName,
    updater: '',
    updaterDisplayName: '',
    updateTime: undefined,
  };
}

/** The audit fields of a changed resource. */
export function updated<T extends Resource>(message: T, caller: Caller, now: Date): T {
  return { ...message, updater: caller.subject, updaterDisplayName: caller.displayName, updateTime: now };
}

/** The behaviour that differs between resource kinds. */
export interface ResourceRules<T extends Resource> {
  kind: MessageKind<T>;
  mask: MaskedResource;
  /** The problem with a client-chosen id, or `undefined` when it is valid. */
  idProblem(id: string): string | undefined;
  /**
   * The resource with server defaults filled in, or INVALID_ARGUMENT naming the offending field
   * below `field` (e.g. `dai_engine_profile.cpu_constraint.max`).
   */
  prepare(message: T, field: string): T;
  /** List order. */
  compare(a: T, b: T): number;
  /** An id for creates that leave it empty; without it the id is required. */
  generateId?: () => string;
  /**
   * The merged resource of an update, given the stored one: for fields older clients leave out
   * of their bodies, which the update must then keep rather than clear.
   */
  keepAbsent?: (merged: T, current: T) => T;
}

/** Typed access to one resource kind's handlers' shared steps. */
export class ResourceService<T extends Resource> {
  readonly names: WireNames;
  private readonly deps: ServiceDeps;
  private readonly rules: ResourceRules<T>;

  constructor(deps: ServiceDeps, rules: ResourceRules<T>) {
    this.deps = deps;
    this.rules = rules;
    this.names = wireNames(rules.kind);
  }

  get kind(): ResourceKind {
    return this.rules.kind;
  }

  get store(): Store {
    return this.deps.store;
  }

  now(): Date {
    return this.deps.now?.() ?? new Date();
  }

  /** The one permission check of a call, before anything is looked up. */
  authorize(context: CallContext, action: string, workspace: string): Promise<void> {
    return this.deps.authorizer.check(context.caller, `${this.names.permission}/${action}`, workspace);
  }

  workspaceOf(name: string, field = 'name'): string {
    return workspaceOf(this.rules.kind, name, field);
  }

  /** The validated id of a create, generated when allowed and absent. */
  newId(id: string): string {
    const chosen = id === '' && this.rules.generateId ? this.rules.generateId() : id;
    const problem = this.rules.idProblem(chosen);
    if (problem) throw invalidArgument(this.snake(this.names.idField), problem);
    return chosen;
  }

  /** The request's resource message, which is required. */
  required(message: T | undefined): T {
    if (message === undefined) throw invalidArgument(this.names.snakeField, 'is required');
    return message;
  }

  prepare(message: T): T {
    return this.rules.prepare(message, this.names.snakeField);
  }

  nameIn(workspace: string, id: string): string {
    return `workspaces/${workspace}/${this.rules.kind.collection}/${id}`;
  }

  async get(name: string): Promise<{ message: T; resourceVersion: string }> {
    const { message, resourceVersion } = messageOf(
      this.rules.kind,
      await this.deps.store.get(this.rules.kind, name),
    );
    return { message, resourceVersion };
  }

  /** Every resource of the kind in a workspace, in list order. */
  async all(workspace: string): Promise<T[]> {
    return (await this.allStored(workspace)).map((s) => s.message);
  }

  /** Every resource of the kind in a workspace, in list order, with the versions that guard updates. */
  async allStored(workspace: string): Promise<{ message: T; resourceVersion: string }[]> {
    const stored = await this.deps.store.list(this.rules.kind, workspace);
    return stored
      .map((s) => messageOf(this.rules.kind, s))
      .sort((a, b) => this.rules.compare(a.message, b.message));
  }

  /** One page of `items`. */
  page(items: readonly T[], request: PageRequest, query: string): Page<T> {
    return page(items, request, query);
  }

  /** The current resource with the masked fields of the update applied and re-validated. */
  async merged(request: UpdateRequest<T>): Promise<{ next: T; resourceVersion: string }> {
    const update = this.required(request.resource);
    const paths = resolveUpdateMask(this.rules.mask, request.updateMask);
    if (paths instanceof Error) throw paths;
    const current = await this.get(update.name);
    const merged = applyMask(current.message, update, paths);
    return {
      next: this.prepare(this.rules.keepAbsent?.(merged, current.message) ?? merged),
      resourceVersion: current.resourceVersion,
    };
  }

  async save(message: T, resourceVersion: string): Promise<T> {
    return messageOf(this.rules.kind, await this.deps.store.update(this.rules.kind, message, resourceVersion))
      .message;
  }

  async insert(message: T): Promise<T> {
    return messageOf(this.rules.kind, await this.deps.store.create(this.rules.kind, message)).message;
  }

  /** `daiEngineProfileId` → `dai_engine_profile_id`, as fields are named in errors. */
  snake(field: string): string {
    return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  }
}

/** A page of a list request. */
export interface PageRequest {
  pageSize: number;
  pageToken: string;
}

/** One page of a list, and the token of the next (empty on the last). */
export interface Page<T> {
  items: T[];
  nextPageToken: string;
}

/** A create request, whatever its kind names the resource and its id. */
export interface CreateRequest<T> {
  parent: string;
  id: string;
  resource: T | undefined;
}

/** An update request, whatever its kind names the resource. */
export interface UpdateRequest<T> {
  resource: T | undefined;
  updateMask: string[] | undefined;
}

/** Create, Get, List, Update and Delete of one kind, on the kind's messages. */
export interface StandardOperations<T> {
  create(request: CreateRequest<T>, context: CallContext): Promise<T>;
  get(name: string, context: CallContext): Promise<T>;
  list(request: PageRequest & { parent: string }, context: CallContext): Promise<Page<T>>;
  update(request: UpdateRequest<T>, context: CallContext): Promise<T>;
  delete(name: string, context: CallContext): Promise<void>;
}

/**
 * Create, Get, List, Update and Delete of one kind, with the same steps for every kind:
 * authorize on the workspace first, validate, fill audit fields from the caller, write with
 * optimistic concurrency.
 */
export function standardOperations<T extends Resource>(service: ResourceService<T>): StandardOperations<T> {
  const { kind, names } = service;
  return {
    async create(request, context) {
      const workspace = parentWorkspace(request.parent);
      await service.authorize(context, 'CREATE', workspace);
      const id = service.newId(request.id);
      const message = service.prepare(service.required(request.resource));
      return service.insert(created(message, service.nameIn(workspace, id), context.caller));
    },

    async get(name, context) {
      await service.authorize(context, 'GET', service.workspaceOf(name));
      return (await service.get(name)).message;
    },

    async list(request, context) {
      const workspace = parentWorkspace(request.parent);
      await service.authorize(context, 'LIST', workspace);
      return service.page(await service.all(workspace), request, `parent=${request.parent}`);
    },

    async update(request, context) {
      const name = service.required(request.resource).name;
      await service.authorize(context, 'UPDATE', service.workspaceOf(name, `${names.snakeField}.name`));
      const { next, resourceVersion } = await service.merged(request);
      return service.save(updated(next, context.caller, service.now()), resourceVersion);
    },

    async delete(name, context) {
      await service.authorize(context, 'DELETE', service.workspaceOf(name));
      await service.store.delete(kind, name);
    },
  };
}
