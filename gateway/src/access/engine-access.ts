/**
 * Who may open an engine through the access proxy, decided from the gateway's caches on every
 * request and upgrade, by the API's own rule: the permission to look at (DAI, H2O: GET) or open
 * (notebooks: ACCESS, as `:access`) engines of the workspace, then the engine itself must be the
 * caller's, or any engine for a workspace administrator, or a shared notebook. Another user's
 * engine is NOT_FOUND exactly like a missing one, as in the API.
 */
import { RESOURCE_KINDS, type ResourceKind } from '../../../shared/resources.ts';
import { workloadName } from '../../../shared/workloads.ts';
import type { Authorizer, Caller } from '../auth/authorizer.ts';
import { allowsUse, engineAccess } from '../engines/ownership.ts';
import { notFound } from '../errors/api-error.ts';
import { DAIEngine_State } from '../gen/ai/h2o/engine/v1/dai_engine.pb.ts';
import { H2OEngine_State } from '../gen/ai/h2o/engine/v1/h2o_engine.pb.ts';
import { NotebookEngine_State } from '../gen/ai/h2o/engine/v1/notebook_engine.pb.ts';
import { earlierObjectNames, objectName } from '../store/names.ts';
import type { Store } from '../store/store-interface.ts';
import type { AccessCollection, EnginePath } from './engine-path.ts';

/** What the proxy needs to know of an engine kind. */
export interface AccessKind {
  kind: ResourceKind;
  /** The permission action that lets a caller open engines of this kind. */
  action: 'GET' | 'ACCESS';
  /** The workload prefix the operator names the engine's StatefulSet and Services with. */
  prefix: string;
  /** The port the engine serves on (operator/src/kinds). */
  port: number;
  /** Whether only the leader serves clients: then its `<set>-api` Service of ready pods. */
  leaderServed: boolean;
  /** The kind's state enum: names by number. */
  states: Readonly<Record<string, number>>;
  /** The API's RPC that resumes a paused engine of the kind (none: H2O engines end when they stop). */
  resumeRpc?: string;
}

/** The kinds of the proxy, as the operator runs them (operator/src/kinds/*.ts). */
export const ACCESS_KINDS: Readonly<Record<AccessCollection, AccessKind>> = {
  daiEngines: {
    kind: RESOURCE_KINDS.DAIEngine,
    action: 'GET',
    prefix: 'dai',
    port: 12345,
    leaderServed: false,
    states: DAIEngine_State,
    resumeRpc: 'ai.h2o.engine.v1.DAIEngineService.ResumeDAIEngine',
  },
  h2oEngines: {
    kind: RESOURCE_KINDS.H2OEngine,
    action: 'GET',
    prefix: 'h2o',
    port: 54321,
    leaderServed: true,
    states: H2OEngine_State,
  },
  notebookEngines: {
    kind: RESOURCE_KINDS.NotebookEngine,
    action: 'ACCESS',
    prefix: 'nb',
    port: 8888,
    leaderServed: false,
    states: NotebookEngine_State,
    resumeRpc: 'ai.h2o.engine.v1.NotebookEngineService.ResumeNotebookEngine',
  },
};

/** An engine the caller may open. */
export interface ReachedEngine {
  name: string;
  access: AccessKind;
  uid: string;
  /** Its state's enum name, e.g. `STATE_RUNNING`. */
  state: string;
  /** The Services that may serve it: under its object name, or one an earlier release gave it. */
  services: string[];
  /** Whether the caller may change it (resume it): its creator or a workspace administrator. */
  mayChange: boolean;
}

/** The enum name of a message's state, whichever form it has (stored messages keep names). */
export function stateName(states: Readonly<Record<string, number>>, state: unknown): string {
  if (typeof state === 'string') return state;
  const found = Object.entries(states).find(([, value]) => value === state);
  return found?.[0] ?? 'STATE_UNSPECIFIED';
}

/** The Services an engine's clients connect to, by the operator's naming (operator/src/desired/workload.ts). */
export function serviceNames(access: AccessKind, path: EnginePath): string[] {
  const current = objectName(path.workspace, path.engineId);
  const objects =
    current === undefined ? [] : [current, ...earlierObjectNames(path.workspace, path.engineId)];
  return objects.map(
    (object) => `${workloadName(access.prefix, object)}${access.leaderServed ? '-api' : ''}`,
  );
}

/**
 * The engine of `path`, if `caller` may open it.
 *
 * @throws ApiError PERMISSION_DENIED without the permission, NOT_FOUND for an engine that does
 *   not exist or is not the caller's to see
 */
export async function reachEngine(
  deps: { store: Store; authorizer: Authorizer },
  caller: Caller,
  path: EnginePath,
): Promise<ReachedEngine> {
  const access = ACCESS_KINDS[path.collection];
  await deps.authorizer.check(
    caller,
    `actions/enginemanager/${path.collection}/${access.action}`,
    path.workspace,
  );
  const [stored, administrator] = await Promise.all([
    deps.store.get(access.kind, path.name),
    deps.authorizer.isAdministrator(caller, path.workspace),
  ]);
  const engine = stored.message;
  const creator = typeof engine['creator'] === 'string' ? engine['creator'] : '';
  const allowed = engineAccess({ creator, shared: engine['shared'] }, caller, administrator);
  if (!allowsUse(allowed, 'see')) throw notFound(path.name);
  return {
    name: path.name,
    access,
    uid: typeof engine['uid'] === 'string' ? engine['uid'] : '',
    state: stateName(access.states, engine['state']),
    services: serviceNames(access, path),
    mayChange: allowsUse(allowed, 'act'),
  };
}
