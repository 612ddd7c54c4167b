/**
 * Whether an object the operator owns needs applying: each applied object carries a digest of
 * what the operator wanted it to be, so that a reconcile that wants the same again writes
 * nothing. A StatefulSet's replicas are compared as they are too, since scaling it by hand
 * (`kubectl scale`) is the change others most often make to what the operator owns; other
 * changes by hand to fields the operator sets are undone with the engine's next change.
 */
import { createHash } from 'node:crypto';
import type { KubernetesObject, V1StatefulSet } from '@kubernetes/client-node';
import { GROUP } from '../../../shared/resources.ts';

export const APPLIED_DIGEST_ANNOTATION = `${GROUP}/applied-digest`;

/** The digest of an object as wanted: its JSON, which the pure desired-state functions build alike each time. */
export function digestOf(object: KubernetesObject): string {
  return createHash('sha256').update(JSON.stringify(object)).digest('hex').slice(0, 32);
}

/** `object` carrying `digest` in its annotations; the object itself is left as it was. */
export function withDigest<T extends KubernetesObject>(object: T, digest: string): T {
  const metadata = object.metadata ?? {};
  const annotations = { ...metadata.annotations, [APPLIED_DIGEST_ANNOTATION]: digest };
  return Object.assign({}, object, { metadata: Object.assign({}, metadata, { annotations }) });
}

/** Whether `current` is what was last applied for the wanted object of `digest`. Pure. */
export function upToDate(
  current: KubernetesObject | undefined,
  digest: string,
  wanted: KubernetesObject,
): boolean {
  if (current?.metadata === undefined || current.metadata.deletionTimestamp !== undefined) return false;
  if (current.metadata.annotations?.[APPLIED_DIGEST_ANNOTATION] !== digest) return false;
  if (wanted.kind !== 'StatefulSet') return true;
  return (current as V1StatefulSet).spec?.replicas === (wanted as V1StatefulSet).spec?.replicas;
}
