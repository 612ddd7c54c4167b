/**
 * Which write an object the operator owns needs, decided from what is wanted and what is observed
 * alone (pure). Each object the operator writes carries, in one annotation, a digest of each part
 * of what the operator wanted it to be — its metadata (labels, annotations, owner), and each other
 * top-level field (`spec`, a ConfigMap's `data`) apart from `spec.replicas` — so that:
 *
 * - an object that is missing is created (one POST, the cheapest write there is);
 * - an object whose wanted parts all match their digests is not written, unless its replicas
 *   differ from those wanted (a pause, a resume, or a `kubectl scale` to undo), which a patch of
 *   the replicas alone sets;
 * - otherwise a strategic merge patch sends the parts that changed: the metadata merged (labels
 *   and annotations others add stay), any other part replaced whole (`$patch: replace`), so that
 *   what the operator no longer wants there goes, as server-side apply would remove it.
 *
 * Changes by hand to fields the operator sets (other than replicas) are undone with the engine's
 * next change of that part. An object being deleted is left alone: its deletion's event brings
 * the engine back, and the object is created again once it is gone.
 */
import { createHash } from 'node:crypto';
import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';
import { GROUP } from '../../../shared/resources.ts';

export const APPLIED_DIGEST_ANNOTATION = `${GROUP}/applied-digest`;
/** The part of the digests that stands for the metadata the operator sets. */
const METADATA = 'metadata';
/** Top-level fields that are no part of what the operator wants: identity, and what others report. */
const NOT_PARTS = new Set(['apiVersion', 'kind', 'metadata', 'status']);

/** What to send for an owned object. */
export type OwnedWrite<T extends KubernetesObject> =
  /** The whole object, to create. */
  | { create: T }
  /**
   * A strategic merge patch: `patch` holds the object's identity and the fields to write;
   * `replace` names its top-level fields that replace what is there whole.
   */
  | { patch: KubernetesObject; replace: string[] };

type Json = Record<string, unknown>;

const isJson = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function hash(value: unknown): string {
  // In an array, so that a value JSON cannot write (undefined) still makes a text.
  return createHash('sha256')
    .update(JSON.stringify([value]))
    .digest('hex')
    .slice(0, 16);
}

/** The metadata the operator sets, its own digest annotation aside. */
function ownMetadata(metadata: V1ObjectMeta | undefined): Json {
  const { [APPLIED_DIGEST_ANNOTATION]: _digest, ...annotations } = metadata?.annotations ?? {};
  return { labels: metadata?.labels, annotations, ownerReferences: metadata?.ownerReferences };
}

/** `spec.replicas` apart from the rest of the spec: replicas are compared with what is observed, not digested. */
function withoutReplicas(key: string, value: unknown): { value: unknown; replicas?: unknown } {
  if (key !== 'spec' || !isJson(value) || !Object.hasOwn(value, 'replicas')) return { value };
  const { replicas, ...rest } = value;
  return { value: rest, replicas };
}

/** The parts of a wanted object, each by name with its value; and the replicas it wants, if any. */
function partsOf(object: KubernetesObject): { parts: Map<string, unknown>; replicas?: unknown } {
  const parts = new Map<string, unknown>([[METADATA, ownMetadata(object.metadata)]]);
  let replicas: unknown;
  for (const [key, field] of Object.entries(object)) {
    if (NOT_PARTS.has(key)) continue;
    const split = withoutReplicas(key, field);
    parts.set(key, split.value);
    if (split.replicas !== undefined) replicas = split.replicas;
  }
  return { parts, ...(replicas === undefined ? {} : { replicas }) };
}

/** The digest annotation of `parts`: `name=digest`, comma-separated, in name order. */
export function digestsText(object: KubernetesObject): string {
  return [...partsOf(object).parts]
    .map(([name, value]) => `${name}=${hash(value)}`)
    .sort()
    .join(',');
}

/** The digests an object carries, by part; none when it carries none (or an older form). */
function carriedDigests(object: KubernetesObject): Map<string, string> {
  const text = object.metadata?.annotations?.[APPLIED_DIGEST_ANNOTATION] ?? '';
  return new Map(
    text
      .split(',')
      .map((entry) => entry.split('='))
      .filter((pair): pair is [string, string] => pair.length === 2),
  );
}

/** `object` carrying the digests of `wanted` in its annotations; the object itself is left as it was. */
export function withDigests<T extends KubernetesObject>(object: T, wanted: KubernetesObject): T {
  const metadata = object.metadata ?? {};
  const annotations = { ...metadata.annotations, [APPLIED_DIGEST_ANNOTATION]: digestsText(wanted) };
  return Object.assign({}, object, { metadata: Object.assign({}, metadata, { annotations }) });
}

/** The parts of `wanted` whose digests `existing` does not carry, and whether its replicas differ. */
function differences(
  wanted: KubernetesObject,
  existing: KubernetesObject,
): { changed: string[]; replicas?: unknown } {
  const { parts, replicas } = partsOf(wanted);
  const carried = carriedDigests(existing);
  const changed = [...parts]
    .filter(([name, value]) => carried.get(name) !== hash(value))
    .map(([name]) => name);
  const rescale = replicas !== undefined && partsOf(existing).replicas !== replicas;
  return { changed, ...(rescale ? { replicas } : {}) };
}

/**
 * The write that makes `existing` what `wanted` asks for, or `undefined` when none is needed.
 * `sent` is what to write of it when that differs from `wanted` (a StatefulSet keeps its volume
 * claim templates, which cannot change); digests are always those of `wanted`.
 */
export function ownedWrite<T extends KubernetesObject>(
  wanted: T,
  existing: T | undefined,
  sent: T = wanted,
): OwnedWrite<T> | undefined {
  if (existing === undefined) return { create: withDigests(sent, wanted) };
  if (existing.metadata?.deletionTimestamp !== undefined) return undefined;
  const { changed, replicas } = differences(wanted, existing);
  if (changed.length === 0 && replicas === undefined) return undefined;
  return patchOf(sent, wanted, { changed, replicas });
}

/** The patch that writes the `changed` parts of `sent` (recording the digests of `wanted`), and `replicas` if set. */
function patchOf(
  sent: KubernetesObject,
  wanted: KubernetesObject,
  { changed, replicas }: { changed: string[]; replicas?: unknown },
): { patch: KubernetesObject; replace: string[] } {
  const replace = changed.filter((name) => name !== METADATA);
  const metadata: V1ObjectMeta = {
    name: sent.metadata?.name ?? '',
    ...(changed.includes(METADATA) ? ownMetadata(sent.metadata) : {}),
  };
  // Whenever a part changes, so does the annotation that records the parts.
  if (changed.length > 0)
    metadata.annotations = { ...metadata.annotations, [APPLIED_DIGEST_ANNOTATION]: digestsText(wanted) };
  const fields = Object.fromEntries(Object.entries(sent));
  const patch: KubernetesObject = Object.assign(
    { apiVersion: sent.apiVersion, kind: sent.kind, metadata },
    Object.fromEntries(replace.map((name) => [name, fields[name]])),
  );
  if (replicas !== undefined && !replace.includes('spec')) Object.assign(patch, { spec: { replicas } });
  return { patch, replace };
}
