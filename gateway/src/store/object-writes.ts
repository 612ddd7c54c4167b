/**
 * What a write puts into a custom resource and what a read takes out of one: the layout every
 * store keeps (store.ts on the cluster, memory-store.ts in memory), so that they cannot differ.
 */
import { ENGINE_FINALIZER, ENGINE_INTENT, type ResourceKind } from '../../../shared/resources.ts';
import { RECORDED_ANNOTATION, recordAfterWrite, recordText } from '../../../shared/recorded.ts';
import { fromCustomResource, intentOf, type CustomResource } from './objects.ts';
import type { Stored } from './store-interface.ts';

/**
 * What a create writes: the object with its output fields recorded in an annotation, so that one
 * write makes the whole resource (shared/recorded.ts); or, when they are too large for that, the
 * object and the status left for a second write. An engine is written with the operator's
 * finalizer, so that the operator need not write it again before it starts the engine.
 */
export function creation(resource: CustomResource): {
  body: CustomResource;
  statusLeft?: CustomResource['status'];
} {
  const { status = {}, ...written } = resource;
  const object = ENGINE_INTENT[written.kind] === undefined ? written : withFinalizer(written);
  if (Object.keys(status).length === 0) return { body: object };
  const record = recordText(status);
  if (record === undefined) return { body: object, statusLeft: status };
  const annotations = { ...object.metadata.annotations, [RECORDED_ANNOTATION]: record };
  return { body: { ...object, metadata: { ...object.metadata, annotations } } };
}

/** The object with the engine finalizer, after those it has. */
function withFinalizer(object: CustomResource): CustomResource {
  const finalizers = object.metadata.finalizers ?? [];
  if (finalizers.includes(ENGINE_FINALIZER)) return object;
  return { ...object, metadata: { ...object.metadata, finalizers: [...finalizers, ENGINE_FINALIZER] } };
}

/**
 * What an update of `resource` writes over the object of `current` metadata: the object guarded
 * by `resourceVersion`, and the status fields it sets (the listed ones, or all). A replace
 * rewrites metadata too: it keeps what others keep there (the operator's finalizer, activity
 * annotations), and the object's name, which an earlier release may have chosen.
 */
export function replacement(
  resource: CustomResource,
  update: {
    current: CustomResource['metadata'];
    resourceVersion: string;
    statusFields: readonly string[] | undefined;
  },
): { body: CustomResource; status: CustomResource['status'] } {
  const { current, resourceVersion, statusFields } = update;
  const status = only(resource.status, statusFields);
  const body = {
    ...resource,
    metadata: {
      ...current,
      ...resource.metadata,
      name: current.name,
      resourceVersion,
      annotations: recordCleared(current.annotations, status, statusFields === undefined),
    },
  };
  return { body, status };
}

/** Annotations after a status write of `status`: fields it clears are no longer recorded. */
export function recordCleared(
  annotations: Readonly<Record<string, string>> | undefined,
  status: CustomResource['status'],
  clearsAbsent: boolean,
): Record<string, string> | undefined {
  if (annotations?.[RECORDED_ANNOTATION] === undefined) return annotations;
  const { [RECORDED_ANNOTATION]: _previous, ...others } = annotations;
  const record = recordAfterWrite(annotations, status ?? {}, clearsAbsent);
  return record === undefined ? others : { ...others, [RECORDED_ANNOTATION]: record };
}

export function stored(kind: ResourceKind, resource: CustomResource): Stored {
  return {
    message: fromCustomResource(kind, resource),
    resourceVersion: resource.metadata.resourceVersion ?? '',
    intent: intentOf(kind, resource),
  };
}

/**
 * The listed fields of a status, or all of them. A listed field that is unset becomes `null`,
 * which a merge patch reads as "remove".
 */
export function only(
  status: CustomResource['status'],
  fields: readonly string[] | undefined,
): CustomResource['status'] {
  if (fields === undefined || status === undefined) return status;
  return Object.fromEntries(fields.map((field) => [field, status[field] ?? null]));
}
