import type { CallContext, Handlers } from '../call/handler.ts';
import { serviceHandlers } from '../call/service-impl.ts';
import { invalidFields, notFound } from '../errors/api-error.ts';
import { DAIEngineVersionServiceService } from '../gen/ai/h2o/engine/v1/dai_engine_version_service.pb.ts';
import { H2OEngineVersionServiceService } from '../gen/ai/h2o/engine/v1/h2o_engine_version_service.pb.ts';
import { MESSAGE_KINDS, type MessageKind, type StoredMessage } from './message-kinds.ts';
import { getByNameOrAlias } from './references.ts';
import { aliasProblems, versionIdProblem } from '../validation/names.ts';
import type { MaskedResource } from '../validation/update-mask.ts';
import { compareVersions } from '../../../shared/semver.ts';
import { checkImageReference } from './image-service.ts';
import {
  created,
  parentWorkspace,
  ResourceService,
  standardOperations,
  updated,
  type Resource,
  type ServiceDeps,
  type StandardOperations,
} from './resource-service.ts';
import { idOf } from '../../../shared/resource-name.ts';

type Version = Resource & {
  deprecated: boolean;
  aliases: string[];
  image: string;
  imagePullSecrets: string[];
};

/** Newest version first. */
function newestFirst(a: { name: string }, b: { name: string }): number {
  return compareVersions(idOf(b.name), idOf(a.name));
}

function checkAliases(aliases: readonly string[], field: string): void {
  const problems = aliasProblems(aliases);
  if (problems.length > 0)
    throw invalidFields(problems.map((p) => ({ field: `${field}[${p.index}]`, description: p.problem })));
}

/** A version kind's operations: the standard ones (alias-aware), and the alias assignment. */
interface VersionOperations<T> extends StandardOperations<T> {
  assignAliases(request: { name: string; aliases: string[] }, context: CallContext): Promise<T[]>;
}

/**
 * Versions of one kind. Aliases are unique within a workspace: giving a version an alias that
 * another version holds moves it. Alias changes of a workspace run one at a time, and in an order
 * that can lose an alias if interrupted but never leaves it on two versions.
 */
function versionOperations<T extends Version>(
  deps: ServiceDeps,
  kind: MessageKind<T>,
  mask: MaskedResource,
): VersionOperations<T> {
  const service = new ResourceService<T>(deps, {
    kind,
    mask,
    idProblem: versionIdProblem,
    prepare(version, field) {
      checkImageReference(version, field);
      checkAliases(version.aliases, `${field}.aliases`);
      return version;
    },
    compare: newestFirst,
  });
  /**
   * Alias changes of a workspace one at a time across every replica (a Lease), each reading
   * versions that include the previous holder's writes.
   */
  const underLock = <R>(workspace: string, action: () => Promise<R>): Promise<R> =>
    deps.store.locks.run(`${kind.kind}/${workspace}`, async (held) => {
      if (held.lastWrite !== undefined) await deps.store.caughtUp(kind, held.lastWrite);
      const result = await action();
      return { result, wrote: deps.store.newestWrite(kind) };
    });

  /** The version of `name`, whose id may be an alias, e.g. `workspaces/global/daiEngineVersions/latest`. */
  const resolve = (name: string): Promise<StoredMessage<T>> => getByNameOrAlias(deps.store, kind, name);

  /** Gives `target` exactly `aliases`, taking them from the versions of its workspace that hold them. */
  async function assign(
    workspace: string,
    targetName: string,
    aliases: string[],
    context: CallContext,
  ): Promise<T> {
    const all = await service.allStored(workspace);
    const target = all.find((v) => v.message.name === targetName);
    if (target === undefined) throw notFound(targetName);
    const now = service.now();
    for (const holder of all) {
      const kept = holder.message.aliases.filter((a) => !aliases.includes(a));
      if (holder !== target && kept.length !== holder.message.aliases.length) {
        await service.save(
          updated({ ...holder.message, aliases: kept }, context.caller, now),
          holder.resourceVersion,
        );
      }
    }
    return service.save(updated({ ...target.message, aliases }, context.caller, now), target.resourceVersion);
  }

  return {
    ...standardOperations(service),

    async create(request, context) {
      const workspace = parentWorkspace(request.parent);
      await service.authorize(context, 'CREATE', workspace);
      const id = service.newId(request.id);
      const version = service.prepare(service.required(request.resource));
      const name = service.nameIn(workspace, id);
      return underLock(workspace, async () => {
        const held = new Set((await service.all(workspace)).flatMap((v) => v.aliases));
        const free = version.aliases.filter((a) => !held.has(a));
        // Created first with the aliases nobody holds, so that a failed create changes nothing.
        const saved = await service.insert(created({ ...version, aliases: free }, name, context.caller));
        return free.length === version.aliases.length
          ? saved
          : await assign(workspace, name, version.aliases, context);
      });
    },

    async get(name, context) {
      await service.authorize(context, 'GET', service.workspaceOf(name));
      return (await resolve(name)).message;
    },

    async assignAliases(request, context) {
      const { name, aliases } = request;
      const workspace = service.workspaceOf(name);
      await service.authorize(context, 'ASSIGN_ALIASES', workspace);
      checkAliases(aliases, 'aliases');
      await underLock(workspace, async () => {
        const target = await resolve(name);
        await assign(workspace, target.message.name, aliases, context);
      });
      return service.all(workspace);
    },
  };
}

/** DAIEngineVersionService. */
export function daiEngineVersionService(deps: ServiceDeps): Handlers {
  const versions = versionOperations(deps, MESSAGE_KINDS.DAIEngineVersion, 'daiEngineVersion');
  return serviceHandlers(DAIEngineVersionServiceService, {
    createDaiEngineVersion: async (request, context) => ({
      daiEngineVersion: await versions.create(
        { parent: request.parent, id: request.daiEngineVersionId, resource: request.daiEngineVersion },
        context,
      ),
    }),
    getDaiEngineVersion: async (request, context) => ({
      daiEngineVersion: await versions.get(request.name, context),
    }),
    listDaiEngineVersions: async (request, context) => {
      const { items, nextPageToken } = await versions.list(request, context);
      return { daiEngineVersions: items, nextPageToken };
    },
    updateDaiEngineVersion: async (request, context) => ({
      daiEngineVersion: await versions.update(
        { resource: request.daiEngineVersion, updateMask: request.updateMask },
        context,
      ),
    }),
    deleteDaiEngineVersion: async (request, context) => {
      await versions.delete(request.name, context);
      return {};
    },
    assignDaiEngineVersionAliases: async (request, context) => ({
      daiEngineVersions: await versions.assignAliases(request, context),
    }),
  });
}

/** H2OEngineVersionService. */
export function h2oEngineVersionService(deps: ServiceDeps): Handlers {
  const versions = versionOperations(deps, MESSAGE_KINDS.H2OEngineVersion, 'h2oEngineVersion');
  return serviceHandlers(H2OEngineVersionServiceService, {
    createH2OEngineVersion: async (request, context) => ({
      h2oEngineVersion: await versions.create(
        { parent: request.parent, id: request.h2oEngineVersionId, resource: request.h2oEngineVersion },
        context,
      ),
    }),
    getH2OEngineVersion: async (request, context) => ({
      h2oEngineVersion: await versions.get(request.name, context),
    }),
    listH2OEngineVersions: async (request, context) => {
      const { items, nextPageToken } = await versions.list(request, context);
      return { h2oEngineVersions: items, nextPageToken };
    },
    updateH2OEngineVersion: async (request, context) => ({
      h2oEngineVersion: await versions.update(
        { resource: request.h2oEngineVersion, updateMask: request.updateMask },
        context,
      ),
    }),
    deleteH2OEngineVersion: async (request, context) => {
      await versions.delete(request.name, context);
      return {};
    },
    assignH2OEngineVersionAliases: async (request, context) => ({
      h2oEngineVersions: await versions.assignAliases(request, context),
    }),
  });
}
