/**
 * Who may see or change an engine of one kind: the permission a call needs on the workspace,
 * and, per engine, the ownership rules of `engines/ownership.ts` (users reach their own engines,
 * administrators every engine of their workspaces, everyone a shared notebook engine to see).
 */
import type { Authorizer } from '../auth/authorizer.ts';
import type { CallContext } from '../call/handler.ts';
import { ApiError, invalidArgument, notFound } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { allowsUse, engineAccess, type EngineUse } from '../engines/ownership.ts';
import type { ResourceKind } from '../../../shared/resources.ts';
import { resourceIdProblem } from '../validation/names.ts';
import type { EngineMessage } from './engine-service.ts';
import type { EngineRecords, StoredEngine } from './engine-records.ts';
import { workspaceOf, type WireNames } from './resource-service.ts';
import { idOf } from '../../../shared/resource-name.ts';

/**
 * The workspace of an engine name, which must be well formed: an id no engine can have is
 * INVALID_ARGUMENT (naming `field`), not NOT_FOUND, also where allowMissing would hide it.
 */
export function engineWorkspace(kind: ResourceKind, name: string, field = 'name'): string {
  const workspace = workspaceOf(kind, name, field);
  const problem = resourceIdProblem(idOf(name));
  if (problem !== undefined) throw invalidArgument(field, `the engine id ${problem}`);
  return workspace;
}

/** Who may see or change the engines of one kind. */
export class EnginePermissions<E extends EngineMessage> {
  private readonly authorizer: Authorizer;
  private readonly kind: ResourceKind;
  private readonly names: WireNames;
  private readonly records: EngineRecords<E>;

  constructor(authorizer: Authorizer, kind: ResourceKind, names: WireNames, records: EngineRecords<E>) {
    this.authorizer = authorizer;
    this.kind = kind;
    this.names = names;
    this.records = records;
  }

  authorize(context: CallContext, action: string, workspace: string): Promise<void> {
    return this.authorizer.check(context.caller, `${this.names.permission}/${action}`, workspace);
  }

  /** {@link engineWorkspace} of this kind. */
  workspaceOf(name: string, field = 'name'): string {
    return engineWorkspace(this.kind, name, field);
  }

  /** Whether the caller administers `workspace`: reaches every user's engines there. */
  administers(context: CallContext, workspace: string): Promise<boolean> {
    return this.authorizer.isAdministrator(context.caller, workspace);
  }

  /**
   * The engine of `name`, if the caller may `use` it (see `engines/ownership.ts`). Another
   * user's engine is NOT_FOUND, exactly as a missing one, so that nobody learns which engines
   * others have; a shared notebook engine, which every user of the workspace sees, is
   * PERMISSION_DENIED to act on for anyone but its creator and administrators.
   */
  async reach(name: string, context: CallContext, use: EngineUse): Promise<StoredEngine<E>> {
    const [found, administrator] = await Promise.all([
      this.records.get(name),
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

  /**
   * Which engines of a workspace the caller sees (as {@link visible} does): all of them (an
   * administrator), or those `sees` passes; `creator` names the caller when it sees nothing but
   * its own engines (a kind that shares none).
   */
  async seen(
    workspace: string,
    context: CallContext,
  ): Promise<{ sees: (engine: E) => boolean; all: boolean; creator?: string | undefined }> {
    const administrator = await this.administers(context, workspace);
    return {
      sees: (engine) => engineAccess(engine, context.caller, administrator) !== 'none',
      all: administrator,
      creator: this.records.shares ? undefined : context.caller.subject,
    };
  }

  /** The engines of a workspace that the caller sees: its own and shared ones, or all for administrators. */
  async visible(workspace: string, context: CallContext): Promise<StoredEngine<E>[]> {
    const [all, administrator] = await Promise.all([
      this.records.all(workspace),
      this.administers(context, workspace),
    ]);
    return all.filter((s) => engineAccess(s.engine, context.caller, administrator) !== 'none');
  }
}
