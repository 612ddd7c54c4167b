import { randomBytes } from 'node:crypto';
import type { Handlers } from '../call/handler.ts';
import { serviceHandlers } from '../call/service-impl.ts';
import { invalidArgument } from '../errors/api-error.ts';
import type { NotebookEngineImage } from '../gen/ai/h2o/engine/v1/notebook_engine_image.pb.ts';
import { NotebookEngineImageServiceService } from '../gen/ai/h2o/engine/v1/notebook_engine_image_service.pb.ts';
import type { SandboxEngineImage } from '../gen/ai/h2o/engine/v1/sandbox_engine_image.pb.ts';
import { SandboxEngineImageServiceService } from '../gen/ai/h2o/engine/v1/sandbox_engine_image_service.pb.ts';
import type { MaskedResource } from '../validation/update-mask.ts';
import { checkDisplayName, resourceIdProblem } from '../validation/names.ts';
import { imagePullSecretsProblem } from '../validation/kubernetes.ts';
import { MESSAGE_KINDS, type MessageKind } from './message-kinds.ts';
import {
  ResourceService,
  standardOperations,
  type ServiceDeps,
  type StandardOperations,
} from './resource-service.ts';

/** A server-chosen id: a letter, then lowercase letters and digits. */
function generatedId(): string {
  return `image-${randomBytes(5).toString('hex')}`;
}

/** Checks the fields an administrator sets on a container image reference. */
export function checkImageReference(
  image: { image: string; imagePullSecrets: readonly string[] },
  field: string,
): void {
  if (image.image.trim() === '') throw invalidArgument(`${field}.image`, 'is required');
  if (/\s/.test(image.image))
    throw invalidArgument(`${field}.image`, `"${image.image}" must not contain spaces`);
  const secrets = imagePullSecretsProblem(image.imagePullSecrets);
  if (secrets) throw invalidArgument(`${field}.image_pull_secrets[${secrets.index}]`, secrets.problem);
}

/** The image catalogues: an administrator's list of container images that engines may run. */
type ImageKind = 'NotebookEngineImage' | 'SandboxEngineImage';

function imageOperations<T extends NotebookEngineImage | SandboxEngineImage>(
  deps: ServiceDeps,
  kind: MessageKind<T>,
  mask: MaskedResource,
): StandardOperations<T> {
  const service = new ResourceService<T>(deps, {
    kind,
    mask,
    idProblem: resourceIdProblem,
    generateId: generatedId,
    prepare(image, field) {
      checkImageReference(image, field);
      const displayName = checkDisplayName(`${field}.display_name`, image.displayName);
      if (displayName) throw displayName;
      return image;
    },
    compare: (a, b) => a.name.localeCompare(b.name),
  });
  return standardOperations(service);
}

function notebookEngineImageService(deps: ServiceDeps): Handlers {
  const images = imageOperations(deps, MESSAGE_KINDS.NotebookEngineImage, 'notebookEngineImage');
  return serviceHandlers(NotebookEngineImageServiceService, {
    createNotebookEngineImage: async (request, context) => ({
      notebookEngineImage: await images.create(
        { parent: request.parent, id: request.notebookEngineImageId, resource: request.notebookEngineImage },
        context,
      ),
    }),
    getNotebookEngineImage: async (request, context) => ({
      notebookEngineImage: await images.get(request.name, context),
    }),
    listNotebookEngineImages: async (request, context) => {
      const { items, nextPageToken } = await images.list(request, context);
      return { notebookEngineImages: items, nextPageToken };
    },
    updateNotebookEngineImage: async (request, context) => ({
      notebookEngineImage: await images.update(
        { resource: request.notebookEngineImage, updateMask: request.updateMask },
        context,
      ),
    }),
    deleteNotebookEngineImage: async (request, context) => {
      await images.delete(request.name, context);
      return {};
    },
  });
}

function sandboxEngineImageService(deps: ServiceDeps): Handlers {
  const images = imageOperations(deps, MESSAGE_KINDS.SandboxEngineImage, 'sandboxEngineImage');
  return serviceHandlers(SandboxEngineImageServiceService, {
    createSandboxEngineImage: async (request, context) => ({
      sandboxEngineImage: await images.create(
        { parent: request.parent, id: request.sandboxEngineImageId, resource: request.sandboxEngineImage },
        context,
      ),
    }),
    getSandboxEngineImage: async (request, context) => ({
      sandboxEngineImage: await images.get(request.name, context),
    }),
    listSandboxEngineImages: async (request, context) => {
      const { items, nextPageToken } = await images.list(request, context);
      return { sandboxEngineImages: items, nextPageToken };
    },
    updateSandboxEngineImage: async (request, context) => ({
      sandboxEngineImage: await images.update(
        { resource: request.sandboxEngineImage, updateMask: request.updateMask },
        context,
      ),
    }),
    deleteSandboxEngineImage: async (request, context) => {
      await images.delete(request.name, context);
      return {};
    },
  });
}

/** The RPCs of NotebookEngineImageService or SandboxEngineImageService, keyed as REST and gRPC look them up. */
export function imageService(deps: ServiceDeps, kind: ImageKind): Handlers {
  return kind === 'NotebookEngineImage' ? notebookEngineImageService(deps) : sandboxEngineImageService(deps);
}
