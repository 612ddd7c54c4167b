import type { KubeConfig } from '@kubernetes/client-node';
import type { CallContext, Handlers } from '../call/handler.ts';
import type { SandboxEngine } from '../gen/ai/h2o/engine/v1/sandbox_engine.pb.ts';
import { KubeUsageSource, metricsService } from '../sandbox/metrics-service.ts';
import { PodExec } from '../sandbox/pod-exec.ts';
import { portService, type PublicPorts } from '../sandbox/port-service.ts';
import { imageService } from './image-service.ts';
import {
  daiEngineProfileService,
  h2oEngineProfileService,
  notebookEngineProfileService,
} from './profile-service.ts';
import {
  daiEngineService,
  h2oEngineService,
  notebookEngineService,
  type EngineServiceDeps,
} from './engine-kinds.ts';
import { engineService } from './generic-engine-service.ts';
import { retryingAllOnConflict } from './retry.ts';
import type { LicenseSource } from '../license/license-source.ts';
import { daiLicenseService } from './dai-license-service.ts';
import { h2oDriveService, h2oSecureStoreService } from './external-stores.ts';
import { SandboxEngines, sandboxEngineService } from './sandbox-engine-service.ts';
import { sandboxEngineTemplateService } from './sandbox-engine-template-service.ts';
import { daiEngineVersionService, h2oEngineVersionService } from './version-service.ts';

/** What the API needs beyond the engines' needs. */
export interface ApiDeps extends EngineServiceDeps {
  /**
   * The cluster, for the in-engine services that reach sandbox pods and their objects (ports,
   * metrics); those services are not served without it.
   */
  kubeConfig?: KubeConfig;
  /** Where public sandbox ports are published; ports can only be internal when unset. */
  publicPorts?: PublicPorts;
  /** The Driverless AI license of the installation; none when unset. */
  daiLicense?: LicenseSource;
}

/** Every RPC of the API. */
export function apiHandlers(deps: ApiDeps): Handlers {
  const sandboxes = new SandboxEngines(deps);
  return {
    ...retryingAllOnConflict(daiEngineService(deps)),
    ...retryingAllOnConflict(h2oEngineService(deps)),
    ...retryingAllOnConflict(notebookEngineService(deps)),
    ...engineService(deps),
    ...daiEngineProfileService(deps),
    ...h2oEngineProfileService(deps),
    ...notebookEngineProfileService(deps),
    ...daiEngineVersionService(deps),
    ...h2oEngineVersionService(deps),
    ...imageService(deps, 'NotebookEngineImage'),
    ...imageService(deps, 'SandboxEngineImage'),
    ...sandboxEngineTemplateService(deps),
    ...retryingAllOnConflict(sandboxEngineService(deps)),
    ...h2oDriveService(sandboxes.resolver('TRANSFER_DRIVE_FILES')),
    ...h2oSecureStoreService(sandboxes.resolver('REVEAL_SECRETS')),
    ...daiLicenseService(deps.daiLicense),
    ...(deps.kubeConfig === undefined ? {} : sandboxResourceServices(deps, deps.kubeConfig, sandboxes)),
  };
}

/** PortService and MetricsService: in-engine services that also read the engine's limits or uid. */
function sandboxResourceServices(deps: ApiDeps, kubeConfig: KubeConfig, sandboxes: SandboxEngines): Handlers {
  const engine = async (name: string, context: CallContext): Promise<SandboxEngine> =>
    (await sandboxes.reach(name, context)).engine;
  const exec = new PodExec(kubeConfig);
  return {
    ...portService({
      resolve: sandboxes.resolver('EXPOSE_PORTS'),
      engine,
      kubeConfig,
      namespace: deps.store.namespace,
      publicPorts: deps.publicPorts,
      ...(deps.now === undefined ? {} : { now: deps.now }),
    }),
    ...metricsService({
      resolve: sandboxes.resolver('READ_METRICS'),
      engine,
      exec,
      usage: new KubeUsageSource(kubeConfig),
      ...(deps.now === undefined ? {} : { now: deps.now }),
    }),
  };
}
