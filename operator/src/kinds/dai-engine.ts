/**
 * Driverless AI engines: one pod with a data volume, configured by a config.toml built from the
 * profile, the service's core keys and the engine's own configuration.
 */
import { CORE_DAI_CONFIG_KEYS } from '../../../shared/dai-config.ts';
import { RESOURCE_KINDS } from '../../../shared/resources.ts';
import { compareVersions } from '../../../shared/semver.ts';
import { daiConfiguration, toToml } from '../desired/dai-config.ts';
import { engineUrl, type EngineKind, type EngineResource } from './kind.ts';
import { profileSizing } from './profile-sizing.ts';
import { idOf } from '../../../shared/resource-name.ts';

const PORT = 12345;
const DATA = '/data';
/** The first release that reports its disk usage. */
const DISK_REPORT_SINCE = '1.10.6';

function versionOf(engine: EngineResource<'DAIEngine'>): string {
  return idOf(engine.spec.daiEngineVersion ?? '');
}

export const daiEngineKind: EngineKind<'DAIEngine'> = {
  kind: 'DAIEngine',
  plural: RESOURCE_KINDS.DAIEngine.plural,
  collection: RESOURCE_KINDS.DAIEngine.collection,
  prefix: 'dai',
  container: 'driverless-ai',
  port: PORT,
  dataMountPath: DATA,
  storageBytes: (engine) => engine.spec.storageBytes,
  snapshots: (engine) => ({
    profile: engine.status?.profileInfo,
    version: engine.status?.daiEngineVersionInfo,
  }),
  sizing: profileSizing,
  queuePriority: (engine) => engine.status?.profileInfo?.queuePriority ?? 0,
  stopIntent: 'paused',
  stopStates: { stopping: 'STATE_PAUSING', stopped: 'STATE_PAUSED' },
  hasConnectingState: true,
  runningReplicas: () => 1,
  env: () => [],
  files: (engine, settings) => ({
    'config.toml': toToml(
      daiConfiguration({
        profile: engine.status?.profileInfo ?? {},
        engineConfig: engine.spec.config ?? {},
        core: {
          ip: '0.0.0.0',
          port: String(PORT),
          data_directory: DATA,
          log_directory: `${DATA}/log`,
          authentication_method: 'openid',
          base_url: new URL(engineUrl(daiEngineKind, engine, settings)).pathname,
          enable_triton_server_local: String(engine.status?.profileInfo?.tritonEnabled === true),
        },
        reservedKeys: CORE_DAI_CONFIG_KEYS,
      }),
    ),
  }),
  filesMount: { path: '/etc/dai', env: { name: 'DRIVERLESS_AI_CONFIG_FILE', file: 'config.toml' } },
  // The installation's license, where Driverless AI looks for it; an engine starts without one
  // (the Secret is optional) and asks its user for a license then.
  secretFiles: (settings) =>
    settings.daiLicenseSecret
      ? {
          secret: settings.daiLicenseSecret,
          path: '/license',
          env: { name: 'DRIVERLESS_AI_LICENSE_FILE', file: 'license.sig' },
        }
      : undefined,
  urls: (engine, settings) => {
    const url = engineUrl(daiEngineKind, engine, settings);
    return { apiUrl: url, loginUrl: `${url}openid/login` };
  },
  storageClass: (engine) => {
    const name = engine.status?.dataDirectoryStorageClass;
    return typeof name === 'string' && name !== '' ? name : undefined;
  },
  reportsDiskUsage: (engine) => compareVersions(versionOf(engine), DISK_REPORT_SINCE) >= 0,
  // No activity probe: Driverless AI's image is proprietary and documents no call that tells
  // whether an experiment runs, and none can be tried here. Its idle time rests on the activity
  // it reports itself (client requests, logins, experiment events, uploads) and on requests
  // through its address, both in the last-activity annotation.
};
