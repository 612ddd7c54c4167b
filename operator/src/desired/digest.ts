/**
 * Whether an object the operator owns needs applying: each applied object carries a digest of
 * what the operator wanted it to be, so that a reconcile that wants the same again writes
 * nothing. Changes by hand to fields the operator sets are undone with the engine's next change
 * (the reconciler also compares a StatefulSet's replicas, which `kubectl scale` changes).
 */
import { createHash } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
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
export function upToDate(current: KubernetesObject | undefined, digest: string): current is KubernetesObject {
  if (current?.metadata === undefined || current.metadata.deletionTimestamp !== undefined) return false;
  return current.metadata.annotations?.[APPLIED_DIGEST_ANNOTATION] === digest;
}
