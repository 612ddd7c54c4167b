import type { Handlers } from '../call/handler.ts';
import { notebookEngineImageService } from './notebook-engine-image-service.ts';
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
import { daiEngineVersionService, h2oEngineVersionService } from './version-service.ts';

/** Every RPC of the API. */
export function apiHandlers(deps: EngineServiceDeps): Handlers {
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
    ...notebookEngineImageService(deps),
  };
}
