/** DAIEngineService, H2OEngineService and NotebookEngineService on the shared engine machinery. */
import { withoutReservedKeys } from '../../../shared/dai-config.ts';
import { LAST_ACTIVITY_ANNOTATION, RESOURCE_KINDS } from '../../../shared/resources.ts';
import type { CallContext, Handler, Handlers } from '../call/handler.ts';
import { ApiError, invalidArgument, type FieldViolation } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { DAIEngine_State } from '../gen/ai/h2o/engine/v1/dai_engine.pb.ts';
import { DAIEngineProfile_ConfigEditability } from '../gen/ai/h2o/engine/v1/dai_engine_profile.pb.ts';
import { H2OEngine_State } from '../gen/ai/h2o/engine/v1/h2o_engine.pb.ts';
import { NotebookEngine_State } from '../gen/ai/h2o/engine/v1/notebook_engine.pb.ts';
import { checkChangeable, checkResize } from '../engines/lifecycle.ts';
import { daiListSchemas, h2oListSchemas } from '../engines/list-fields.ts';
import { engineLogs } from '../engines/logs.ts';
import { compressedDatasetMemory, rawDatasetMemory, sizeFor, type SizeLimits } from '../engines/sizing.ts';
import { PodLogs, type PodLogSource } from '../store/pod-logs.ts';
import { compareVersions } from '../../../shared/semver.ts';
import { upgradeAvailable, type VersionSummary } from '../engines/upgrades.ts';
import { engineHandlers, EngineStore, type Engine } from './engine-service.ts';
import { resolveReference } from './references.ts';
import type { ClusterServiceDeps } from './resource-service.ts';
import { idOf } from '../../../shared/resource-name.ts';

/** What the engine services need beyond the store and the authorizer. */
export interface EngineServiceDeps extends ClusterServiceDeps {
  /** Engines may be reached at this base URL (the platform's public address). */
  publicUrl?: string;
  /** Where engines' pod logs are read; by default the pod log API of the store's namespace. */
  podLogs?: PodLogSource;
}

/** Keeps the DAI configuration the profile allows, without the keys the service sets itself. */
function shapeDaiConfig(
  engine: Engine,
  profile: Record<string, unknown>,
  prefix: string,
): { engine: Engine; violations: FieldViolation[] } {
  const config = withoutReservedKeys((engine['config'] as Record<string, string> | undefined) ?? {});
  const editability = profile['configEditability'];
  const base = (profile['baseConfiguration'] as Record<string, string> | undefined) ?? {};
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

/** The engine's new storage size, checked against its state and its profile's storage maximum. */
async function resized(
  store: EngineStore,
  { request, field, context }: { request: Record<string, unknown>; field: string; context: CallContext },
): Promise<{ engine: Engine; rv: string; intent: Record<string, boolean> }> {
  const name = request[field] as string;
  const newBytes = request['newStorageBytes'] as string;
  if (newBytes === '0') throw invalidArgument('new_storage_bytes', 'is required');
  const current = await store.reach(name, context, 'act');
  const engine = current.engine;
  checkResize(
    BigInt(engine.storageBytes ?? '0'),
    BigInt(newBytes),
    engine['storageResizing'] === true,
    store.stateName(engine),
  );
  const max = (engine['profileInfo'] as { storageBytesConstraint?: { max?: string } } | undefined)
    ?.storageBytesConstraint?.max;
  if (max !== undefined && BigInt(newBytes) > BigInt(max))
    throw invalidArgument('new_storage_bytes', `must be at most ${max} (the profile's limit)`);
  return {
    engine: { ...engine, storageBytes: newBytes },
    rv: current.resourceVersion,
    intent: current.intent,
  };
}

function resizeHandler(store: EngineStore, nameField: string): Handler {
  return async (request, context) => {
    await store.authorize(
      context,
      'RESIZE_STORAGE',
      store.workspaceOf(request[nameField] as string, nameField),
    );
    const { engine, rv, intent } = await resized(store, { request, field: nameField, context });
    return { [store.names.field]: await store.save(engine, rv, intent) };
  };
}

/** An upgrade moves a paused engine to a newer version of the same workspace or global. */
function upgradeHandler(store: EngineStore): Handler {
  return async (request, context) => {
    const name = request['daiEngine'] as string;
    const workspace = store.workspaceOf(name, 'dai_engine');
    await store.authorize(context, 'UPGRADE_DAI_ENGINE_VERSION', workspace);
    const current = await store.reach(name, context, 'act');
    checkChangeable('upgrade', store.stateName(current.engine));
    const version = await resolveReference(store.deps.store, RESOURCE_KINDS.DAIEngineVersion, {
      name: request['newDaiEngineVersion'] as string,
      field: 'new_dai_engine_version',
      engineWorkspace: workspace,
    });
    const from = idOf(String(current.engine['daiEngineVersion']));
    const to = idOf(String(version.message['name']));
    if (compareVersions(to, from) <= 0)
      throw invalidArgument(
        'new_dai_engine_version',
        `must be newer than the engine's version ${from}, got ${to}`,
      );
    if (store.stateName(current.engine) !== 'STATE_PAUSED' && !current.intent['paused']) {
      throw new ApiError(
        Code.FAILED_PRECONDITION,
        `Pause the engine before upgrading it (it is ${store.stateName(current.engine)})`,
        {
          reason: 'INVALID_STATE',
        },
      );
    }
    const engine = {
      ...current.engine,
      daiEngineVersion: version.message['name'],
      daiEngineVersionInfo: version.message,
    };
    return { daiEngine: await store.save(engine, current.resourceVersion, current.intent) };
  };
}

function migrateCreatorHandler(store: EngineStore): Handler {
  return async (request, context) => {
    const name = request['daiEngine'] as string;
    const workspace = store.workspaceOf(name, 'dai_engine');
    await store.authorize(context, 'MIGRATE_CREATOR', workspace);
    // Handing an engine to someone else acts for two users: administrators only, whatever the
    // policy grants, and decided before anything is looked up.
    if (!(await store.administers(context, workspace)))
      throw new ApiError(
        Code.PERMISSION_DENIED,
        `Only administrators of "workspaces/${workspace}" may hand engines to other users`,
        { reason: 'ADMINISTRATORS_ONLY' },
      );
    const newCreator = request['newCreator'] as string;
    if (!/^users\/[^/]+$/.test(newCreator))
      throw invalidArgument('new_creator', `"${newCreator}" is not a user name such as "users/123"`);
    const current = await store.get(name);
    const engine = { ...current.engine, creator: newCreator, creatorDisplayName: '' };
    return { daiEngine: await store.save(engine, current.resourceVersion, current.intent) };
  };
}

/**
 * Logs of an engine's pods (the operator labels them with the engine's uid), as one text
 * download: see `engines/logs.ts` for its layout and bounds. A stopped engine has no pods, and
 * its download is empty.
 */
function downloadLogsHandler(store: EngineStore, nameField: string, source: PodLogSource): Handler {
  return async (request, context) => {
    const name = request[nameField] as string;
    await store.authorize(context, 'DOWNLOAD_LOGS', store.workspaceOf(name, nameField));
    const { engine } = await store.reach(name, context, 'act');
    const text = await engineLogs(source, engine.uid);
    return { logs: { contentType: 'text/plain', data: new TextEncoder().encode(text), extensions: [] } };
  };
}

function podLogSource(deps: EngineServiceDeps): PodLogSource {
  return deps.podLogs ?? new PodLogs(deps.store.kubeConfig, deps.store.namespace);
}

/** Reads of DAI engines say whether a newer version is available, from the versions as they are now. */
function withUpgradesShown(store: EngineStore, handler: Handler | undefined): Handler {
  if (handler === undefined) throw new TypeError('DAIEngineService lacks a standard read');
  return async (request, context) => {
    const response = (await handler(request, context)) as { daiEngine?: Engine; daiEngines?: Engine[] };
    const engines = response.daiEngine ? [response.daiEngine] : (response.daiEngines ?? []);
    if (engines.length === 0) return response;
    const versions = (await store.deps.store.list(RESOURCE_KINDS.DAIEngineVersion, '-')).map(
      (v) => v.message as unknown as VersionSummary,
    );
    // Engines as read may be shared (the cache's): answer copies.
    const shown = engines.map((engine) => ({
      ...engine,
      upgradeAvailable: upgradeAvailable(engine.name, engine['daiEngineVersion'] as string, versions),
    }));
    return response.daiEngine ? { ...response, daiEngine: shown[0] } : { ...response, daiEngines: shown };
  };
}

/** DAIEngineService. */
export function daiEngineService(deps: EngineServiceDeps): Handlers {
  const store = new EngineStore(
    deps,
    {
      kind: RESOURCE_KINDS.DAIEngine,
      mask: 'daiEngine',
      profileKind: RESOURCE_KINDS.DAIEngineProfile,
      versionField: 'daiEngineVersion',
      versionKind: RESOURCE_KINDS.DAIEngineVersion,
      profileInfoField: 'profileInfo',
      versionInfoField: 'daiEngineVersionInfo',
      settings: ['cpu', 'gpu', 'memoryBytes', 'storageBytes', 'maxIdleDuration', 'maxRunningDuration'],
      stopIntent: 'paused',
      lists: daiListSchemas(DAIEngine_State),
      shape: shapeDaiConfig,
      fromProfile: (p) => ({ dataDirectoryStorageClass: p['dataDirectoryStorageClass'] }),
    },
    DAIEngine_State,
  );
  const rpc = (name: string): string => `${store.names.service}.${name}`;
  const standard = engineHandlers(store, ['PAUSE', 'RESUME']);
  const read = (handler: Handler | undefined): Handler => withUpgradesShown(store, handler);
  return {
    ...standard,
    [rpc('GetDAIEngine')]: read(standard[rpc('GetDAIEngine')]),
    [rpc('ListDAIEngines')]: read(standard[rpc('ListDAIEngines')]),
    [rpc('ResizeStorage')]: resizeHandler(store, 'daiEngine'),
    [rpc('UpgradeDAIEngineVersion')]: upgradeHandler(store),
    [rpc('MigrateCreator')]: migrateCreatorHandler(store),
    [rpc('DownloadLogs')]: downloadLogsHandler(store, 'daiEngine', podLogSource(deps)),
  };
}

/** H2OEngineService, with the size recommendations. */
export function h2oEngineService(deps: EngineServiceDeps): Handlers {
  const store = new EngineStore(
    deps,
    {
      kind: RESOURCE_KINDS.H2OEngine,
      mask: 'h2oEngine',
      profileKind: RESOURCE_KINDS.H2OEngineProfile,
      versionField: 'h2oEngineVersion',
      versionKind: RESOURCE_KINDS.H2OEngineVersion,
      profileInfoField: 'profileInfo',
      versionInfoField: 'h2oEngineVersionInfo',
      settings: ['nodeCount', 'cpu', 'gpu', 'memoryBytes', 'maxIdleDuration', 'maxRunningDuration'],
      stopIntent: 'terminated',
      lists: h2oListSchemas(H2OEngine_State),
    },
    H2OEngine_State,
  );
  const rpc = (name: string): string => `${store.names.service}.${name}`;
  const positive = (field: string, value: string): bigint => {
    if (BigInt(value) <= 0n) throw invalidArgument(field, 'must be more than 0');
    return BigInt(value);
  };
  return {
    ...engineHandlers(store, ['TERMINATE']),
    [rpc('DownloadLogs')]: downloadLogsHandler(store, 'h2oEngine', podLogSource(deps)),
    [rpc('CalculateH2OEngineSizeCompressedDataset')]: (request) => {
      const rows = positive('rows_count', request['rowsCount'] as string);
      const columns = positive('columns_count', request['columnsCount'] as string);
      const size = sizeFor(
        compressedDatasetMemory(rows, columns),
        request['limits'] as SizeLimits | undefined,
      );
      return Promise.resolve({ h2oEngineSize: size });
    },
    [rpc('CalculateH2OEngineSizeRawDataset')]: (request) => {
      const bytes = positive('dataset_size_bytes', request['datasetSizeBytes'] as string);
      return Promise.resolve({
        h2oEngineSize: sizeFor(rawDatasetMemory(bytes), request['limits'] as SizeLimits | undefined),
      });
    },
  };
}

/** NotebookEngineService, with access to a notebook's address. */
export function notebookEngineService(deps: EngineServiceDeps): Handlers {
  const store = new EngineStore(
    deps,
    {
      kind: RESOURCE_KINDS.NotebookEngine,
      mask: 'notebookEngine',
      profileKind: RESOURCE_KINDS.NotebookEngineProfile,
      versionField: 'notebookImage',
      versionKind: RESOURCE_KINDS.NotebookEngineImage,
      profileInfoField: 'profileInfo',
      versionInfoField: 'notebookImageInfo',
      settings: ['cpu', 'gpu', 'memoryBytes', 'storageBytes', 'maxIdleDuration', 'maxRunningDuration'],
      stopIntent: 'paused',
      fromProfile: (p) => ({ storageClassName: p['storageClassName'] }),
    },
    NotebookEngine_State,
  );
  const rpc = (name: string): string => `${store.names.service}.${name}`;
  const base = (deps.publicUrl ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
  return {
    ...engineHandlers(store, ['PAUSE', 'RESUME']),
    [rpc('ResizeNotebookEngineStorage')]: resizeHandler(store, 'name'),
    [rpc('AccessNotebookEngine')]: async (request, context: CallContext) => {
      const name = request['notebookEngine'] as string;
      await store.authorize(context, 'ACCESS', store.workspaceOf(name, 'notebook_engine'));
      await store.reach(name, context, 'see');
      // Opening a notebook is user activity: it restarts the engine's idle time.
      await store.deps.store.annotate(store.kind.kind, name, {
        [LAST_ACTIVITY_ANNOTATION]: store.now().toISOString(),
      });
      return { uri: `${base}/${name}/` };
    },
  };
}
