import { randomBytes } from 'node:crypto';
import { RESOURCE_KINDS } from '../../../shared/resources.ts';
import type { Handlers } from '../call/handler.ts';
import { invalidArgument } from '../errors/api-error.ts';
import type { NotebookEngineImage } from '../gen/ai/h2o/engine/v1/notebook_engine_image.pb.ts';
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

/** The RPCs of NotebookEngineImageService, keyed as REST and gRPC look them up. */
export function notebookEngineImageService(deps: ServiceDeps): Handlers {
  const service = new ResourceService<NotebookEngineImage>(deps, {
    kind: RESOURCE_KINDS.NotebookEngineImage,
    mask: 'notebookEngineImage',
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
