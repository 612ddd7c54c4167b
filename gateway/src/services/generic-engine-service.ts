/** EngineService: one read-only list over DAI, H2O and notebook engines, in one or all workspaces. */
import { upgradeAvailable, type VersionSummary } from '../engines/upgrades.ts';
import { ALL_WORKSPACES, LIST_ALL, type Authorizer } from '../auth/authorizer.ts';
import type { CallContext, Handlers } from '../call/handler.ts';
import { serviceHandlers } from '../call/service-impl.ts';
import { invalidArgument } from '../errors/api-error.ts';
import { Engine_State, Engine_Type, type Engine } from '../gen/ai/h2o/engine/v1/engine.pb.ts';
import { EngineServiceService } from '../gen/ai/h2o/engine/v1/engine_service.pb.ts';
import { engineListSchemas, NEWEST_FIRST } from '../engines/list-fields.ts';
import { engineAccess } from '../engines/ownership.ts';
import { compileFilter } from '../list/filter.ts';
import { compileOrdering } from '../list/ordering.ts';
import { keysetPage } from '../list/pagination.ts';
import type { Store } from '../store/store-interface.ts';
import { ENGINE_KINDS } from './engine-kinds.ts';
import type { EngineMessage } from './engine-service.ts';
import { messageOf } from './message-kinds.ts';
import { checkedWorkspace, type ServiceDeps } from './resource-service.ts';
import { idOf, workspaceOf } from '../../../shared/resource-name.ts';

const SCHEMAS = engineListSchemas(Engine_State, Engine_Type);

type ListedKind = (typeof ENGINE_KINDS)[number];

/** One engine of any kind as the generic Engine message. */
function toEngine(
  { rules, type, upgradable, perNode }: ListedKind,
  engine: EngineMessage,
  versions: readonly VersionSummary[],
): Engine {
  const stateName =
    Object.entries(rules.states).find(([, v]) => v === engine.state)?.[0] ?? 'STATE_UNSPECIFIED';
  const versionName = rules.versionOf(engine);
  return {
    // What not every kind has reads as its zero value, as in every answer.
    storageResizing: false,
    loginUrl: '',
    ...engine,
    type,
    annotations: engine.annotations ?? {},
    state: genericState(stateName),
    version: idOf(versionName),
    deprecatedVersion: rules.versionDeprecated(engine),
    deletedVersion: !versions.some((v) => v.name === versionName),
    upgradeAvailable: upgradable === true && upgradeAvailable(engine.name, versionName, versions),
    ...engineTotals(perNode === true ? (engine.nodeCount ?? 1) : 1, engine),
    storageBytes: engine.storageBytes ?? '0',
    visitable: stateName === 'STATE_RUNNING',
  };
}

/** The generic list's state of a kind's state name. */
function genericState(stateName: string): Engine_State {
  return (
    Object.entries(Engine_State).find(([name]) => name === stateName)?.[1] ?? Engine_State.STATE_UNSPECIFIED
  );
}

/**
 * The engine's cpu, gpu and memory in all: the generic list reports totals, and an H2O engine
 * keeps them per node.
 */
function engineTotals(
  nodes: number,
  engine: EngineMessage,
): { cpu: number; gpu: number; memoryBytes: string } {
  return {
    cpu: (engine.cpu ?? 0) * nodes,
    gpu: (engine.gpu ?? 0) * nodes,
    memoryBytes: String(BigInt(engine.memoryBytes ?? '0') * BigInt(nodes)),
  };
}

async function enginesIn(store: Store, workspace: string): Promise<Engine[]> {
  const lists = await Promise.all(
    ENGINE_KINDS.map(async (kind) => {
      const { rules } = kind;
      const [engines, versions] = await Promise.all([
        store.list(rules.kind, workspace),
        store.list(rules.versionKind, '-'),
      ]);
      const summaries = versions.map((v) => messageOf(rules.versionKind, v).message);
      return engines.map((e) => toEngine(kind, messageOf(rules.kind, e).message, summaries));
    }),
  );
  return lists.flat();
}

/**
 * The engines the caller sees: its own and shared notebook engines, and every engine of the
 * workspaces it administers.
 */
async function visibleEngines(
  engines: readonly Engine[],
  authorizer: Authorizer,
  context: CallContext,
): Promise<Engine[]> {
  const workspaces = [...new Set(engines.map((e) => workspaceOf(e.name)))];
  const administered = new Set<string>();
  await Promise.all(
    workspaces.map(async (w) => {
      if (await authorizer.isAdministrator(context.caller, w)) administered.add(w);
    }),
  );
  return engines.filter((e) => {
    return engineAccess(e, context.caller, administered.has(workspaceOf(e.name))) !== 'none';
  });
}

/** EngineService. Parent `workspaces/-` lists every workspace and needs LIST_ALL. */
export function engineService(deps: ServiceDeps): Handlers {
  return serviceHandlers(EngineServiceService, {
    listEngines: async (request, context) => {
      const { parent, filter, orderBy } = request;
      const match = /^workspaces\/([^/]+)$/.exec(parent);
      if (match?.[1] === undefined)
        throw invalidArgument(
          'parent',
          `"${parent}" is not a workspace name such as "workspaces/default" or "workspaces/-"`,
        );
      const workspace = match[1] === ALL_WORKSPACES ? ALL_WORKSPACES : checkedWorkspace(match[1], 'parent');
      const permission = workspace === ALL_WORKSPACES ? LIST_ALL : 'actions/enginemanager/engines/LIST';
      await deps.authorizer.check(context.caller, permission, workspace);
      const matches = compileFilter(filter, SCHEMAS.filter);
      const ordering = compileOrdering(orderBy, SCHEMAS.order, NEWEST_FIRST);
      const all = await enginesIn(deps.store, workspace);
      const engines = (await visibleEngines(all, deps.authorizer, context)).filter(matches);
      const { items, nextPageToken } = keysetPage<Engine>(
        engines,
        request,
        `parent=${parent}&filter=${filter}&order_by=${orderBy}`,
        ordering,
      );
      return { engines: items, nextPageToken, totalSize: engines.length };
    },
  });
}
