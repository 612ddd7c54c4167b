import type { Handlers } from '../call/handler.ts';
import { notebookEngineImageService } from './notebook-engine-image-service.ts';
import {
  daiEngineProfileService,
  h2oEngineProfileService,
  notebookEngineProfileService,
} from './profile-service.ts';
import type { ServiceDeps } from './resource-service.ts';
import { daiEngineVersionService, h2oEngineVersionService } from './version-service.ts';

/** Every implemented RPC of the API; the others answer UNIMPLEMENTED. */
export function apiHandlers(deps: ServiceDeps): Handlers {
  return {
    ...daiEngineProfileService(deps),
    ...h2oEngineProfileService(deps),
    ...notebookEngineProfileService(deps),
    ...daiEngineVersionService(deps),
    ...h2oEngineVersionService(deps),
    ...notebookEngineImageService(deps),
  };
}
