/** DAIEngineService, H2OEngineService and NotebookEngineService on the shared engine machinery. */
import { withoutReservedKeys } from '../../../shared/dai-config.ts';
import { LAST_ACTIVITY_ANNOTATION } from '../../../shared/resources.ts';
import type { CallContext, Handlers } from '../call/handler.ts';
import { serviceHandlers } from '../call/service-impl.ts';
import { ApiError, invalidArgument, type FieldViolation } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { DAIEngine_State, type DAIEngine } from '../gen/ai/h2o/engine/v1/dai_engine.pb.ts';
import {
  DAIEngineProfile_ConfigEditability,
  type DAIEngineProfile,
} from '../gen/ai/h2o/engine/v1/dai_engine_profile.pb.ts';
import { DAIEngineServiceService } from '../gen/ai/h2o/engine/v1/dai_engine_service.pb.ts';
import type { DAIEngineVersion } from '../gen/ai/h2o/engine/v1/dai_engine_version.pb.ts';
import { Engine_Type } from '../gen/ai/h2o/engine/v1/engine.pb.ts';
import type { HttpBody } from '../gen/google/api/httpbody.pb.ts';
import { H2OEngine_State, type H2OEngine } from '../gen/ai/h2o/engine/v1/h2o_engine.pb.ts';
import type { H2OEngineProfile } from '../gen/ai/h2o/engine/v1/h2o_engine_profile.pb.ts';
import { H2OEngineServiceService } from '../gen/ai/h2o/engine/v1/h2o_engine_service.pb.ts';
import type { H2OEngineVersion } from '../gen/ai/h2o/engine/v1/h2o_engine_version.pb.ts';
import { NotebookEngine_State, type NotebookEngine } from '../gen/ai/h2o/engine/v1/notebook_engine.pb.ts';
import type { NotebookEngineImage } from '../gen/ai/h2o/engine/v1/notebook_engine_image.pb.ts';
import type { NotebookEngineProfile } from '../gen/ai/h2o/engine/v1/notebook_engine_profile.pb.ts';
import { NotebookEngineServiceService } from '../gen/ai/h2o/engine/v1/notebook_engine_service.pb.ts';
import { checkChangeable, checkResize } from '../engines/lifecycle.ts';
import { daiListSchemas, h2oListSchemas } from '../engines/list-fields.ts';
import { engineLogs } from '../engines/logs.ts';
import { compressedDatasetMemory, rawDatasetMemory, sizeFor } from '../engines/sizing.ts';
import { PodLogs, type PodLogSource } from '../store/pod-logs.ts';
import { compareVersions } from '../../../shared/semver.ts';
import { upgradeAvailable } from '../engines/upgrades.ts';
import { withUpgradeAvailable } from '../engines/upgrade-flag.ts';
import {
  changeLifecycle,
  createEngine,
  deleteEngine,
  engineParts,
  getEngine,
  listEngines,
  updateEngine,
  type AnyEngineApiRules,
  type EngineApiRules,
  type EngineParts,
  type EngineMessage,
  type EngineProfile,
  type EngineVersion,
} from './engine-service.ts';
import { MESSAGE_KINDS } from './message-kinds.ts';
import type { ClusterServiceDeps } from './resource-service.ts';
import { idOf, workspaceOf } from '../../../shared/resource-name.ts';

/** What the engine services need beyond the store and the authorizer. */
export interface EngineServiceDeps extends ClusterServiceDeps {
  /** Engines may be reached at this base URL (the platform's public address). */
  publicUrl?: string;
  /** Where engines' pod logs are read; by default the pod log API of the store's namespace. */
  podLogs?: PodLogSource;
}

/** Keeps the DAI configuration the profile allows, without the keys the service sets itself. */
function shapeDaiConfig(
  engine: DAIEngine,
  profile: DAIEngineProfile,
  prefix: string,
): { engine: DAIEngine; violations: FieldViolation[] } {
  const config = withoutReservedKeys(engine.config);
  const editability = profile.configEditability;
  const base = profile.baseConfiguration;
  const keys = Object.keys(config);
  const violations: FieldViolation[] = [];
  if (editability === DAIEngineProfile_ConfigEditability.CONFIG_EDITABILITY_DISABLED && keys.length > 0) {
    violations.push({
      field: `${prefix}.config`,
      description: 'the profile does not allow engine configuration',
    });
  }
  if (editability === DAIEngineProfile_ConfigEditability.CONFIG_EDITABILITY_BASE_CONFIG_ONLY) {
    for (const key of keys.filter((k) => !(k in base))) {
      violations.push({
        field: `${prefix}.config["${key}"]`,
        description: 'the profile allows only keys of its base configuration',
      });
    }
  }
  return { engine: { ...engine, config }, violations };
}

/** The API rules of DAI engines. */
export const DAI_ENGINE_RULES: EngineApiRules<DAIEngine, DAIEngineProfile, DAIEngineVersion> = {
  kind: MESSAGE_KINDS.DAIEngine,
  mask: 'daiEngine',
  profileKind: MESSAGE_KINDS.DAIEngineProfile,
  versionKind: MESSAGE_KINDS.DAIEngineVersion,
  states: DAIEngine_State,
  versionField: 'dai_engine_version',
  versionOf: (engine) => engine.daiEngineVersion,
  versionDeprecated: (engine) => engine.daiEngineVersionInfo?.deprecated === true,
  created: (engine, profile, version) => ({
    ...engine,
    dataDirectoryStorageClass: profile.dataDirectoryStorageClass,
    daiEngineVersion: version.name,
    profileInfo: profile,
    daiEngineVersionInfo: version,
  }),
  withProfile: (engine, profile) => ({ ...engine, profileInfo: profile }),
  settings: ['cpu', 'gpu', 'memoryBytes', 'storageBytes', 'maxIdleDuration', 'maxRunningDuration'],
  stopIntent: 'paused',
  lists: daiListSchemas(DAIEngine_State),
  shape: shapeDaiConfig,
};

/** The API rules of H2O engines. */
export const H2O_ENGINE_RULES: EngineApiRules<H2OEngine, H2OEngineProfile, H2OEngineVersion> = {
  kind: MESSAGE_KINDS.H2OEngine,
  mask: 'h2oEngine',
  profileKind: MESSAGE_KINDS.H2OEngineProfile,
  versionKind: MESSAGE_KINDS.H2OEngineVersion,
  states: H2OEngine_State,
  versionField: 'h2o_engine_version',
  versionOf: (engine) => engine.h2oEngineVersion,
  versionDeprecated: (engine) => engine.h2oEngineVersionInfo?.deprecated === true,
  created: (engine, profile, version) => ({
    ...engine,
    h2oEngineVersion: version.name,
    profileInfo: profile,
    h2oEngineVersionInfo: version,
  }),
  withProfile: (engine, profile) => ({ ...engine, profileInfo: profile }),
  settings: ['nodeCount', 'cpu', 'gpu', 'memoryBytes', 'maxIdleDuration', 'maxRunningDuration'],
  stopIntent: 'terminated',
  lists: h2oListSchemas(H2OEngine_State),
};

/** The API rules of notebook engines. */
export const NOTEBOOK_ENGINE_RULES: EngineApiRules<
  NotebookEngine,
  NotebookEngineProfile,
  NotebookEngineImage
> = {
  kind: MESSAGE_KINDS.NotebookEngine,
  mask: 'notebookEngine',
  profileKind: MESSAGE_KINDS.NotebookEngineProfile,
  versionKind: MESSAGE_KINDS.NotebookEngineImage,
  states: NotebookEngine_State,
  versionField: 'notebook_image',
  versionOf: (engine) => engine.notebookImage,
  // Notebook images are enabled or disabled, never deprecated.
  versionDeprecated: () => false,
  created: (engine, profile, image) => ({
    ...engine,
    storageClassName: profile.storageClassName,
    notebookImage: image.name,
    profileInfo: profile,
    notebookImageInfo: image,
  }),
  withProfile: (engine, profile) => ({ ...engine, profileInfo: profile }),
  settings: ['cpu', 'gpu', 'memoryBytes', 'storageBytes', 'maxIdleDuration', 'maxRunningDuration'],
  stopIntent: 'paused',
};

/**
 * The engine kinds of the API, with how each shows in the generic engine list: its type there,
 * whether its versions can be upgraded in place (DAI), and whether cpu, gpu and memory are per
 * node, of `nodeCount` nodes (H2O).
 */
export const ENGINE_KINDS: readonly {
  rules: AnyEngineApiRules;
  type: Engine_Type;
  upgradable?: boolean;
  perNode?: boolean;
}[] = [
  { rules: DAI_ENGINE_RULES, type: Engine_Type.TYPE_DRIVERLESS_AI, upgradable: true },
  { rules: H2O_ENGINE_RULES, type: Engine_Type.TYPE_H2O, perNode: true },
  { rules: NOTEBOOK_ENGINE_RULES, type: Engine_Type.TYPE_NOTEBOOK },
];

/** An engine whose storage can be resized (DAI, notebook). */
type ResizableEngine = EngineMessage & {
  storageResizing: boolean;
  profileInfo?: { storageBytesConstraint?: { max?: string | undefined } | undefined } | undefined;
};

/**
 * The engine with its new storage size, checked against its state and its profile's storage
 * maximum, and written. `field` is how errors name the request's engine field.
 */
async function resizeStorage<E extends ResizableEngine, P extends EngineProfile, V extends EngineVersion>(
  { permissions, records }: EngineParts<E, P, V>,
  request: { name: string; newStorageBytes: string; field: string },
  context: CallContext,
): Promise<E> {
  const { name, newStorageBytes: newBytes } = request;
  await permissions.authorize(context, 'RESIZE_STORAGE', permissions.workspaceOf(name, request.field));
  if (newBytes === '0') throw invalidArgument('new_storage_bytes', 'is required');
  const current = await permissions.reach(name, context, 'act');
  const engine = current.engine;
  checkResize(
    BigInt(engine.storageBytes ?? '0'),
    BigInt(newBytes),
    engine.storageResizing,
    records.stateName(engine),
  );
  const max = engine.profileInfo?.storageBytesConstraint?.max;
  if (max !== undefined && BigInt(newBytes) > BigInt(max))
    throw invalidArgument('new_storage_bytes', `must be at most ${max} (the profile's limit)`);
  return records.save({ ...engine, storageBytes: newBytes }, current.resourceVersion, current.intent);
}

type DaiEngineParts = EngineParts<DAIEngine, DAIEngineProfile, DAIEngineVersion>;

/** An upgrade moves a paused engine to a newer version of the same workspace or global. */
async function upgradeVersion(
  { permissions, records, catalogue }: DaiEngineParts,
  request: { daiEngine: string; newDaiEngineVersion: string },
  context: CallContext,
): Promise<DAIEngine> {
  const name = request.daiEngine;
  const workspace = permissions.workspaceOf(name, 'dai_engine');
  await permissions.authorize(context, 'UPGRADE_DAI_ENGINE_VERSION', workspace);
  const current = await permissions.reach(name, context, 'act');
  checkChangeable('upgrade', records.stateName(current.engine));
  const version = await catalogue.version(request.newDaiEngineVersion, 'new_dai_engine_version', workspace);
  const from = idOf(current.engine.daiEngineVersion);
  const to = idOf(version.name);
  if (compareVersions(to, from) <= 0)
    throw invalidArgument(
      'new_dai_engine_version',
      `must be newer than the engine's version ${from}, got ${to}`,
    );
  if (records.stateName(current.engine) !== 'STATE_PAUSED' && !current.intent['paused']) {
    throw new ApiError(
      Code.FAILED_PRECONDITION,
      `Pause the engine before upgrading it (it is ${records.stateName(current.engine)})`,
      {
        reason: 'INVALID_STATE',
      },
    );
  }
  const engine = { ...current.engine, daiEngineVersion: version.name, daiEngineVersionInfo: version };
  return records.save(engine, current.resourceVersion, current.intent);
}

async function migrateCreator(
  { permissions, records }: DaiEngineParts,
  request: { daiEngine: string; newCreator: string },
  context: CallContext,
): Promise<DAIEngine> {
  const name = request.daiEngine;
  const workspace = permissions.workspaceOf(name, 'dai_engine');
  await permissions.authorize(context, 'MIGRATE_CREATOR', workspace);
  // Handing an engine to someone else acts for two users: administrators only, whatever the
  // policy grants, and decided before anything is looked up.
  if (!(await permissions.administers(context, workspace)))
    throw new ApiError(
      Code.PERMISSION_DENIED,
      `Only administrators of "workspaces/${workspace}" may hand engines to other users`,
      { reason: 'ADMINISTRATORS_ONLY' },
    );
  const { newCreator } = request;
  if (!/^users\/[^/]+$/.test(newCreator))
    throw invalidArgument('new_creator', `"${newCreator}" is not a user name such as "users/123"`);
  const current = await records.get(name);
  const engine = { ...current.engine, creator: newCreator, creatorDisplayName: '' };
  return records.save(engine, current.resourceVersion, current.intent);
}

/**
 * Logs of an engine's pods (the operator labels them with the engine's uid), as one text
 * download: see `engines/logs.ts` for its layout and bounds. A stopped engine has no pods, and
 * its download is empty. `field` is how errors name the request's engine field.
 */
async function downloadLogs<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion>(
  { permissions }: EngineParts<E, P, V>,
  source: PodLogSource,
  request: { name: string; field: string },
  context: CallContext,
): Promise<HttpBody> {
  await permissions.authorize(context, 'DOWNLOAD_LOGS', permissions.workspaceOf(request.name, request.field));
  const { engine } = await permissions.reach(request.name, context, 'act');
  const text = await engineLogs(source, engine.uid);
  return { contentType: 'text/plain', data: new TextEncoder().encode(text), extensions: [] };
}

function podLogSource(deps: EngineServiceDeps): PodLogSource {
  return deps.podLogs ?? new PodLogs(deps.store.kubeConfig, deps.store.namespace);
}

/**
 * DAI engines as reads show them: whether a newer version is available, from the versions as
 * they are now. Engines of one workspace and version share the answer, so it is decided once
 * per pair; an engine whose stored flag already says so is answered as it is.
 */
async function withUpgradesShown(parts: DaiEngineParts, engines: DAIEngine[]): Promise<DAIEngine[]> {
  if (engines.length === 0) return engines;
  const versions = await parts.catalogue.versions();
  const decided = new Map<string, boolean>();
  return engines.map((engine) => {
    const key = `${workspaceOf(engine.name)}\u0000${engine.daiEngineVersion}`;
    let available = decided.get(key);
    if (available === undefined) {
      available = upgradeAvailable(engine.name, engine.daiEngineVersion, versions);
      decided.set(key, available);
    }
    return withUpgradeAvailable(engine, available);
  });
}

/** DAIEngineService. */
export function daiEngineService(deps: EngineServiceDeps): Handlers {
  const parts = engineParts(deps, DAI_ENGINE_RULES);
  const logs = podLogSource(deps);
  return serviceHandlers(DAIEngineServiceService, {
    createDaiEngine: async (request, context) => ({
      daiEngine: await createEngine(
        parts,
        {
          parent: request.parent,
          id: request.daiEngineId,
          engine: request.daiEngine,
          validateOnly: request.validateOnly,
        },
        context,
      ),
    }),
    getDaiEngine: async (request, context) => {
      const [engine] = await withUpgradesShown(parts, [await getEngine(parts, request.name, context)]);
      return { daiEngine: engine };
    },
    listDaiEngines: async (request, context) => {
      const { items, nextPageToken, totalSize } = await listEngines(parts, request, context);
      return { daiEngines: await withUpgradesShown(parts, items), nextPageToken, totalSize };
    },
    updateDaiEngine: async (request, context) => ({
      daiEngine: await updateEngine(
        parts,
        {
          engine: request.daiEngine,
          updateMask: request.updateMask,
          allowMissing: request.allowMissing,
          validateOnly: request.validateOnly,
        },
        context,
      ),
    }),
    deleteDaiEngine: async (request, context) => {
      const deleting = await deleteEngine(parts, request, context);
      return deleting === undefined ? {} : { daiEngine: deleting };
    },
    pauseDaiEngine: async (request, context) => ({
      daiEngine: await changeLifecycle(parts, 'PAUSE', request, context),
    }),
    resumeDaiEngine: async (request, context) => ({
      daiEngine: await changeLifecycle(parts, 'RESUME', request, context),
    }),
    resizeStorage: async (request, context) => ({
      daiEngine: await resizeStorage(
        parts,
        { name: request.daiEngine, newStorageBytes: request.newStorageBytes, field: 'daiEngine' },
        context,
      ),
    }),
    upgradeDaiEngineVersion: async (request, context) => ({
      daiEngine: await upgradeVersion(parts, request, context),
    }),
    migrateCreator: async (request, context) => ({
      daiEngine: await migrateCreator(parts, request, context),
    }),
    downloadLogs: async (request, context) => ({
      logs: await downloadLogs(parts, logs, { name: request.daiEngine, field: 'daiEngine' }, context),
    }),
  });
}

/** A positive count or size of a sizing request; INVALID_ARGUMENT naming `field` otherwise. */
function positive(field: string, value: string): bigint {
  if (BigInt(value) <= 0n) throw invalidArgument(field, 'must be more than 0');
  return BigInt(value);
}

/** H2OEngineService, with the size recommendations. */
export function h2oEngineService(deps: EngineServiceDeps): Handlers {
  const parts = engineParts(deps, H2O_ENGINE_RULES);
  const logs = podLogSource(deps);
  return serviceHandlers(H2OEngineServiceService, {
    createH2OEngine: async (request, context) => ({
      h2oEngine: await createEngine(
        parts,
        {
          parent: request.parent,
          id: request.h2oEngineId,
          engine: request.h2oEngine,
          validateOnly: request.validateOnly,
        },
        context,
      ),
    }),
    getH2OEngine: async (request, context) => ({ h2oEngine: await getEngine(parts, request.name, context) }),
    listH2OEngines: async (request, context) => {
      const { items, nextPageToken, totalSize } = await listEngines(parts, request, context);
      return { h2oEngines: items, nextPageToken, totalSize };
    },
    updateH2OEngine: async (request, context) => ({
      h2oEngine: await updateEngine(
        parts,
        {
          engine: request.h2oEngine,
          updateMask: request.updateMask,
          allowMissing: false,
          validateOnly: false,
        },
        context,
      ),
    }),
    deleteH2OEngine: async (request, context) => {
      const deleting = await deleteEngine(parts, request, context);
      return deleting === undefined ? {} : { h2oEngine: deleting };
    },
    terminateH2OEngine: async (request, context) => ({
      h2oEngine: await changeLifecycle(
        parts,
        'TERMINATE',
        { name: request.name, validateOnly: false },
        context,
      ),
    }),
    downloadLogs: async (request, context) => ({
      logs: await downloadLogs(parts, logs, { name: request.h2oEngine, field: 'h2oEngine' }, context),
    }),
    calculateH2OEngineSizeCompressedDataset: (request) => {
      const rows = positive('rows_count', request.rowsCount);
      const columns = positive('columns_count', request.columnsCount);
      return Promise.resolve({
        h2oEngineSize: sizeFor(compressedDatasetMemory(rows, columns), request.limits),
      });
    },
    calculateH2OEngineSizeRawDataset: (request) => {
      const bytes = positive('dataset_size_bytes', request.datasetSizeBytes);
      return Promise.resolve({ h2oEngineSize: sizeFor(rawDatasetMemory(bytes), request.limits) });
    },
  });
}

/** NotebookEngineService, with access to a notebook's address. */
export function notebookEngineService(deps: EngineServiceDeps): Handlers {
  const parts = engineParts(deps, NOTEBOOK_ENGINE_RULES);
  const base = (deps.publicUrl ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
  return serviceHandlers(NotebookEngineServiceService, {
    createNotebookEngine: async (request, context) => ({
      notebookEngine: await createEngine(
        parts,
        {
          parent: request.parent,
          id: request.notebookEngineId,
          engine: request.notebookEngine,
          validateOnly: false,
        },
        context,
      ),
    }),
    getNotebookEngine: async (request, context) => ({
      notebookEngine: await getEngine(parts, request.name, context),
    }),
    listNotebookEngines: async (request, context) => {
      const { items, nextPageToken } = await listEngines(
        parts,
        { ...request, filter: '', orderBy: '' },
        context,
      );
      return { notebookEngines: items, nextPageToken };
    },
    updateNotebookEngine: async (request, context) => ({
      notebookEngine: await updateEngine(
        parts,
        {
          engine: request.notebookEngine,
          updateMask: request.updateMask,
          allowMissing: false,
          validateOnly: false,
        },
        context,
      ),
    }),
    deleteNotebookEngine: async (request, context) => {
      const deleting = await deleteEngine(
        parts,
        { name: request.name, allowMissing: false, validateOnly: false },
        context,
      );
      return deleting === undefined ? {} : { notebookEngine: deleting };
    },
    pauseNotebookEngine: async (request, context) => ({
      notebookEngine: await changeLifecycle(
        parts,
        'PAUSE',
        { name: request.name, validateOnly: false },
        context,
      ),
    }),
    resumeNotebookEngine: async (request, context) => ({
      notebookEngine: await changeLifecycle(
        parts,
        'RESUME',
        { name: request.name, validateOnly: false },
        context,
      ),
    }),
    resizeNotebookEngineStorage: async (request, context) => ({
      notebookEngine: await resizeStorage(parts, { ...request, field: 'name' }, context),
    }),
    accessNotebookEngine: async (request, context) => {
      const name = request.notebookEngine;
      const { permissions } = parts;
      await permissions.authorize(context, 'ACCESS', permissions.workspaceOf(name, 'notebook_engine'));
      await permissions.reach(name, context, 'see');
      // Opening a notebook is user activity: it restarts the engine's idle time.
      await parts.records.annotate(name, {
        [LAST_ACTIVITY_ANNOTATION]: parts.now().toISOString(),
      });
      return { uri: `${base}/${name}/` };
    },
  });
}
