import { randomBytes } from 'node:crypto';
import { RESOURCE_KINDS } from '../../../shared/resources.ts';
import type { Handlers } from '../call/handler.ts';
import { invalidArgument } from '../errors/api-error.ts';
import type { NotebookEngineImage } from '../gen/ai/h2o/engine/v1/notebook_engine_image.pb.ts';
import type { SandboxEngineImage } from '../gen/ai/h2o/engine/v1/sandbox_engine_image.pb.ts';
import type { MaskedResource } from '../validation/update-mask.ts';
import { checkDisplayName, resourceIdProblem } from '../validation/names.ts';
import { imagePullSecretsProblem } from '../validation/kubernetes.ts';
import { ResourceService, standardHandlers, type ServiceDeps } from './resource-service.ts';

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
type Image = NotebookEngineImage | SandboxEngineImage;

const MASKS: Readonly<Record<ImageKind, MaskedResource>> = {
  NotebookEngineImage: 'notebookEngineImage',
  SandboxEngineImage: 'sandboxEngineImage',
};

/** The RPCs of NotebookEngineImageService or SandboxEngineImageService, keyed as REST and gRPC look them up. */
export function imageService(deps: ServiceDeps, kind: ImageKind): Handlers {
  const service = new ResourceService<Image>(deps, {
    kind: RESOURCE_KINDS[kind],
    mask: MASKS[kind],
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
  return standardHandlers(service);
}
