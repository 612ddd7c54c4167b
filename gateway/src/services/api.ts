import type { Handlers } from '../call/handler.ts';
import { KubeUsageSource, metricsService } from '../sandbox/metrics-service.ts';
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
import { filesystemService } from '../sandbox/filesystem-service.ts';
import { PodExec } from '../sandbox/pod-exec.ts';
import { processService } from '../sandbox/process-service.ts';
import { h2oDriveService, h2oSecureStoreService } from './external-stores.ts';
import { SandboxEngines, sandboxEngineService } from './sandbox-engine-service.ts';
import { sandboxEngineTemplateService } from './sandbox-engine-template-service.ts';
import { daiEngineVersionService, h2oEngineVersionService } from './version-service.ts';

/** What the API needs beyond the engines' needs. */
export interface ApiDeps extends EngineServiceDeps {
  /** Where public sandbox ports are published; ports can only be internal when unset. */
  publicPorts?: PublicPorts;
  /** The Driverless AI license of the installation; none when unset. */
  daiLicense?: LicenseSource;
  /** Runs commands in sandbox pods; by default through the store's cluster. */
  podExec?: PodExec;
  /** How often to settle processes whose gateway replica stopped; never when unset. */
  processSweepEveryMs?: number;
}

/** Every RPC of the API. */
export function apiHandlers(deps: ApiDeps): Handlers {
  const sandboxes = new SandboxEngines(deps);
  const exec = deps.podExec ?? new PodExec(deps.store.kubeConfig);
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
    ...filesystemService({ exec, resolve: sandboxes.resolver('ACCESS_FILES') }),
    ...processService({
      sandboxes,
      exec,
      store: deps.store,
      ...(deps.now ? { now: deps.now } : {}),
      ...(deps.processSweepEveryMs === undefined ? {} : { sweepEveryMs: deps.processSweepEveryMs }),
    }),
    ...h2oDriveService(sandboxes.resolver('TRANSFER_DRIVE_FILES')),
    ...h2oSecureStoreService(sandboxes.resolver('REVEAL_SECRETS')),
    ...daiLicenseService(deps.daiLicense),
    ...sandboxResourceServices(deps, { sandboxes, exec }),
  };
}

/** PortService and MetricsService: in-engine services that also read the engine's limits or uid. */
function sandboxResourceServices(
  deps: ApiDeps,
  { sandboxes, exec }: { sandboxes: SandboxEngines; exec: PodExec },
): Handlers {
  const { kubeConfig } = deps.store;
  return {
    ...portService({
      reach: sandboxes.reacher('EXPOSE_PORTS'),
      kubeConfig,
      namespace: deps.store.namespace,
      publicPorts: deps.publicPorts,
      ...(deps.now === undefined ? {} : { now: deps.now }),
    }),
    ...metricsService({
      reach: sandboxes.reacher('READ_METRICS'),
      exec,
      usage: new KubeUsageSource(kubeConfig),
      ...(deps.now === undefined ? {} : { now: deps.now }),
    }),
  };
}
