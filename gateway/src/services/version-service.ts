import { RESOURCE_KINDS, type ResourceKind } from '../../../shared/resources.ts';
import type { CallContext, Handlers } from '../call/handler.ts';
import { invalidFields, notFound } from '../errors/api-error.ts';
import { getByNameOrAlias } from './references.ts';
import { aliasProblems, versionIdProblem } from '../validation/names.ts';
import type { MaskedResource } from '../validation/update-mask.ts';
import { compareVersions } from '../../../shared/semver.ts';
import { checkImageReference } from './image-service.ts';
import {
  created,
  parentWorkspace,
  ResourceService,
  standardHandlers,
  updated,
  type Resource,
  type ServiceDeps,
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

/**
 * Versions of one kind. Aliases are unique within a workspace: giving a version an alias that
 * another version holds moves it. Alias changes of a workspace run one at a time, and in an order
 * that can lose an alias if interrupted but never leaves it on two versions.
 */
function versionService(deps: ServiceDeps, kind: ResourceKind, mask: MaskedResource): Handlers {
  const service = new ResourceService<Version>(deps, {
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
  const { names } = service;
  /**
   * Alias changes of a workspace one at a time across every replica (a Lease), each reading
   * versions that include the previous holder's writes.
   */
  const underLock = <T>(workspace: string, action: () => Promise<T>): Promise<T> =>
    deps.store.locks.run(`${kind.kind}/${workspace}`, async (held) => {
      if (held.lastWrite !== undefined) await deps.store.caughtUp(kind, held.lastWrite);
      const result = await action();
      return { result, wrote: deps.store.newestWrite(kind) };
    });

  /** The version of `name`, whose id may be an alias, e.g. `workspaces/global/daiEngineVersions/latest`. */
  async function resolve(name: string): Promise<{ message: Version; resourceVersion: string }> {
    const found = await getByNameOrAlias(deps.store, kind, name);
    return { message: found.message as unknown as Version, resourceVersion: found.resourceVersion };
  }

  /** Gives `target` exactly `aliases`, taking them from the versions of its workspace that hold them. */
  async function assign(
    workspace: string,
    targetName: string,
    aliases: string[],
    context: CallContext,
  ): Promise<Version> {
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
    ...standardHandlers(service),

    [`${names.service}.Create${kind.kind}`]: async (request, context) => {
      const workspace = parentWorkspace(request['parent'] as string);
      await service.authorize(context, 'CREATE', workspace);
      const id = service.newId(request[names.idField] as string);
      const version = service.prepare(service.message(request));
      const name = service.nameIn(workspace, id);
      return underLock(workspace, async () => {
        const held = new Set((await service.all(workspace)).flatMap((v) => v.aliases));
        const free = version.aliases.filter((a) => !held.has(a));
        // Created first with the aliases nobody holds, so that a failed create changes nothing.
        const saved = await service.insert(created({ ...version, aliases: free }, name, context.caller));
        const result =
          free.length === version.aliases.length
            ? saved
            : await assign(workspace, name, version.aliases, context);
        return { [names.field]: result };
      });
    },

    [`${names.service}.Get${kind.kind}`]: async (request, context) => {
      const name = request['name'] as string;
      await service.authorize(context, 'GET', service.workspaceOf(name));
      return { [names.field]: (await resolve(name)).message };
    },

    [`${names.service}.Assign${kind.kind}Aliases`]: async (request, context) => {
      const name = request['name'] as string;
      const workspace = service.workspaceOf(name);
      await service.authorize(context, 'ASSIGN_ALIASES', workspace);
      const aliases = (request['aliases'] as string[] | undefined) ?? [];
      checkAliases(aliases, 'aliases');
      await underLock(workspace, async () => {
        const target = await resolve(name);
        await assign(workspace, target.message.name, aliases, context);
      });
      return { [names.listField]: await service.all(workspace) };
    },
  };
}

/** DAIEngineVersionService. */
export function daiEngineVersionService(deps: ServiceDeps): Handlers {
  return versionService(deps, RESOURCE_KINDS.DAIEngineVersion, 'daiEngineVersion');
}

/** H2OEngineVersionService. */
export function h2oEngineVersionService(deps: ServiceDeps): Handlers {
  return versionService(deps, RESOURCE_KINDS.H2OEngineVersion, 'h2oEngineVersion');
}
