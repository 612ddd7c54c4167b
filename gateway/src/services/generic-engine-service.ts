/** EngineService: one read-only list over DAI, H2O and notebook engines, in one or all workspaces. */
import { upgradeAvailable, type VersionSummary } from '../engines/upgrades.ts';
import { RESOURCE_KINDS, type ResourceKind } from '../../../shared/resources.ts';
import { ALL_WORKSPACES, LIST_ALL, type Authorizer } from '../auth/authorizer.ts';
import type { CallContext, Handlers } from '../call/handler.ts';
import { invalidArgument } from '../errors/api-error.ts';
import { Engine_State, Engine_Type } from '../gen/ai/h2o/engine/v1/engine.pb.ts';
import { DAIEngine_State } from '../gen/ai/h2o/engine/v1/dai_engine.pb.ts';
import { H2OEngine_State } from '../gen/ai/h2o/engine/v1/h2o_engine.pb.ts';
import { NotebookEngine_State } from '../gen/ai/h2o/engine/v1/notebook_engine.pb.ts';
import { engineListSchemas, NEWEST_FIRST, type ListedEngine } from '../engines/list-fields.ts';
import { engineAccess } from '../engines/ownership.ts';
import { compileFilter } from '../list/filter.ts';
import { compileOrdering } from '../list/ordering.ts';
import { keysetPage } from '../list/pagination.ts';
import type { Store } from '../store/store-interface.ts';
import { checkedWorkspace, type ServiceDeps } from './resource-service.ts';
import { idOf, workspaceOf } from '../../../shared/resource-name.ts';

const SERVICE = 'ai.h2o.engine.v1.EngineService';
const SCHEMAS = engineListSchemas(Engine_State, Engine_Type);

interface Source {
  kind: ResourceKind;
  type: number;
  states: Record<string, number>;
  versionField: string;
  infoField: string;
  versionKind: ResourceKind;
  /** Whether the kind's versions can be upgraded in place (DAI). */
  upgradable?: boolean;
  /** Whether cpu, gpu and memory are per node, of `nodeCount` nodes (H2O). */
  perNode?: boolean;
}

const SOURCES: readonly Source[] = [
  {
    kind: RESOURCE_KINDS.DAIEngine,
    type: Engine_Type.TYPE_DRIVERLESS_AI,
    states: DAIEngine_State,
    versionField: 'daiEngineVersion',
    infoField: 'daiEngineVersionInfo',
    versionKind: RESOURCE_KINDS.DAIEngineVersion,
    upgradable: true,
  },
  {
    kind: RESOURCE_KINDS.H2OEngine,
    type: Engine_Type.TYPE_H2O,
    states: H2OEngine_State,
    versionField: 'h2oEngineVersion',
    infoField: 'h2oEngineVersionInfo',
    versionKind: RESOURCE_KINDS.H2OEngineVersion,
    perNode: true,
  },
  {
    kind: RESOURCE_KINDS.NotebookEngine,
    type: Engine_Type.TYPE_NOTEBOOK,
    states: NotebookEngine_State,
    versionField: 'notebookImage',
    infoField: 'notebookImageInfo',
    versionKind: RESOURCE_KINDS.NotebookEngineImage,
  },
];

/** One engine of any kind as the generic Engine message. */
function toEngine(
  source: Source,
  message: Record<string, unknown>,
  versions: readonly VersionSummary[],
): ListedEngine {
  const stateName =
    Object.entries(source.states).find(([, v]) => v === message['state'])?.[0] ?? 'STATE_UNSPECIFIED';
  const versionName =
    typeof message[source.versionField] === 'string' ? (message[source.versionField] as string) : '';
  const info = message[source.infoField] as { deprecated?: boolean } | undefined;
  return {
    ...(message as unknown as ListedEngine),
    type: source.type,
    state: Engine_State[stateName as keyof typeof Engine_State],
    version: idOf(versionName),
    deprecatedVersion: info?.deprecated === true,
    deletedVersion: !versions.some((v) => v.name === versionName),
    upgradeAvailable:
      source.upgradable === true && upgradeAvailable(String(message['name']), versionName, versions),
    ...engineTotals(source, message),
    storageBytes: (message['storageBytes'] as string | undefined) ?? '0',
    visitable: stateName === 'STATE_RUNNING',
  } as ListedEngine;
}

/**
 * The engine's cpu, gpu and memory in all: the generic list reports totals, and an H2O engine
 * keeps them per node.
 */
function engineTotals(
  source: Source,
  message: Record<string, unknown>,
): { cpu: number; gpu: number; memoryBytes: string } {
  const nodes = source.perNode === true ? ((message['nodeCount'] as number | undefined) ?? 1) : 1;
  return {
    cpu: ((message['cpu'] as number | undefined) ?? 0) * nodes,
    gpu: ((message['gpu'] as number | undefined) ?? 0) * nodes,
    memoryBytes: String(BigInt((message['memoryBytes'] as string | undefined) ?? '0') * BigInt(nodes)),
  };
}

async function enginesIn(store: Store, workspace: string): Promise<ListedEngine[]> {
  const lists = await Promise.all(
    SOURCES.map(async (source) => {
      const [engines, versions] = await Promise.all([
        store.list(source.kind, workspace),
        store.list(source.versionKind, '-'),
      ]);
      const summaries = versions.map((v) => v.message as unknown as VersionSummary);
      return engines.map((e) => toEngine(source, e.message, summaries));
    }),
  );
  return lists.flat();
}

/**
 * The engines the caller sees: its own and shared notebook engines, and every engine of the
 * workspaces it administers.
 */
async function visibleEngines(
  engines: readonly ListedEngine[],
  authorizer: Authorizer,
  context: CallContext,
): Promise<ListedEngine[]> {
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
  return {
    [`${SERVICE}.ListEngines`]: async (request, context) => {
      const parent = request['parent'] as string;
      const match = /^workspaces\/([^/]+)$/.exec(parent);
      if (match?.[1] === undefined)
        throw invalidArgument(
          'parent',
          `"${parent}" is not a workspace name such as "workspaces/default" or "workspaces/-"`,
        );
      const workspace = match[1] === ALL_WORKSPACES ? ALL_WORKSPACES : checkedWorkspace(match[1], 'parent');
      const permission = workspace === ALL_WORKSPACES ? LIST_ALL : 'actions/enginemanager/engines/LIST';
      await deps.authorizer.check(context.caller, permission, workspace);
      const filter = (request['filter'] as string | undefined) ?? '';
      const orderBy = (request['orderBy'] as string | undefined) ?? '';
      const matches = compileFilter(filter, SCHEMAS.filter);
      const ordering = compileOrdering(orderBy, SCHEMAS.order, NEWEST_FIRST);
      const all = await enginesIn(deps.store, workspace);
      const engines = (await visibleEngines(all, deps.authorizer, context)).filter(matches);
      const { items, nextPageToken } = keysetPage(
        engines,
        request as { pageSize?: number; pageToken?: string },
        `parent=${parent}&filter=${filter}&order_by=${orderBy}`,
        ordering,
      );
      return { engines: items, nextPageToken, totalSize: engines.length };
    },
  };
}
