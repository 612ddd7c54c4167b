import type { ResourceKind } from '../../../shared/resources.ts';
import { ApiError, invalidArgument, notFound } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import type { Store, Stored } from '../store/store-interface.ts';
import { parseName, VERSION_ID } from '../validation/names.ts';

/** The workspace where administrators keep what every workspace may use. */
export const GLOBAL_WORKSPACE = 'global';

/**
 * The version or image of `name`, whose id may be an alias of a version
 * (`workspaces/global/daiEngineVersions/latest`); NOT_FOUND when there is none.
 */
export async function getByNameOrAlias(store: Store, kind: ResourceKind, name: string): Promise<Stored> {
  const parsed = parseName(name, kind.collection);
  if (parsed === undefined || VERSION_ID.test(parsed.id) || !kind.kind.endsWith('Version')) {
    return store.get(kind, name);
  }
  const holder = (await store.list(kind, parsed.workspace)).find((v) =>
    (v.message['aliases'] as string[] | undefined)?.includes(parsed.id),
  );
  if (holder === undefined) throw notFound(name);
  return holder;
}

/**
 * What an engine refers to (its profile, version or image): a resource of `kind` in the engine's
 * own workspace or in `workspaces/global`. A malformed or missing reference is INVALID_ARGUMENT
 * naming `field`.
 */
export async function resolveReference(
  store: Store,
  kind: ResourceKind,
  reference: { name: string; field: string; engineWorkspace: string },
): Promise<Stored> {
  const { name, field, engineWorkspace } = reference;
  if (name === '') throw invalidArgument(field, 'is required');
  const parsed = parseName(name, kind.collection);
  if (parsed === undefined)
    throw invalidArgument(field, `"${name}" is not a name such as "workspaces/global/${kind.collection}/id"`);
  if (parsed.workspace !== engineWorkspace && parsed.workspace !== GLOBAL_WORKSPACE) {
    throw invalidArgument(
      field,
      `must be in the engine's workspace (workspaces/${engineWorkspace}) or in workspaces/${GLOBAL_WORKSPACE}`,
    );
  }
  try {
    return await getByNameOrAlias(store, kind, name);
  } catch (error: unknown) {
    if (error instanceof ApiError && error.code === Code.NOT_FOUND)
      throw invalidArgument(field, `"${name}" does not exist`);
    throw error;
  }
}
