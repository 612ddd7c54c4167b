import { ApiError, invalidArgument, notFound } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import type { Store } from '../store/store-interface.ts';
import { parseName, VERSION_ID } from '../validation/names.ts';
import { messageOf, type MessageKind, type StoredMessage } from './message-kinds.ts';

/** The workspace where administrators keep what every workspace may use. */
export const GLOBAL_WORKSPACE = 'global';

/**
 * The version or image of `name`, whose id may be an alias of a version
 * (`workspaces/global/daiEngineVersions/latest`); NOT_FOUND when there is none.
 */
export async function getByNameOrAlias<M extends object>(
  store: Store,
  kind: MessageKind<M>,
  name: string,
): Promise<StoredMessage<M>> {
  const parsed = parseName(name, kind.collection);
  if (parsed === undefined || VERSION_ID.test(parsed.id) || !kind.kind.endsWith('Version')) {
    return messageOf(kind, await store.get(kind, name));
  }
  const holder = (await store.list(kind, parsed.workspace))
    .map((v) => messageOf(kind, v))
    .find((v) => aliasesOf(v.message).includes(parsed.id));
  if (holder === undefined) throw notFound(name);
  return holder;
}

/** The aliases of a version; other kinds have none. */
function aliasesOf(message: object): readonly unknown[] {
  return 'aliases' in message && Array.isArray(message.aliases) ? message.aliases : [];
}

/**
 * What an engine refers to (its profile, version or image): a resource of `kind` in the engine's
 * own workspace or in `workspaces/global`. A malformed or missing reference is INVALID_ARGUMENT
 * naming `field`.
 */
export async function resolveReference<M extends object>(
  store: Store,
  kind: MessageKind<M>,
  reference: { name: string; field: string; engineWorkspace: string },
): Promise<StoredMessage<M>> {
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
