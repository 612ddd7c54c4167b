/**
 * What the operator keeps of each object it watches: the fields a reconcile reads, and nothing
 * else. Ten thousand engines are forty thousand watched objects and more; as the apiserver sends
 * them each carries managedFields, ownerReferences, every label and annotation, and (a
 * StatefulSet) a whole pod template, none of which the operator reads back — it compares the
 * digest it applied (desired/digest.ts) instead. Pure functions, one per kind of object.
 *
 * Kept of every owned object's metadata: its name and resourceVersion (the copy's key, and
 * read-your-writes), whether it is being deleted, the engine-kind and engine-uid labels (which
 * engine it belongs to), and the engine and applied-digest annotations. A pod also keeps when it
 * was created (a resume replaces pods older than it).
 */
import type {
  KubernetesObject,
  V1ObjectMeta,
  V1PersistentVolumeClaim,
  V1Pod,
  V1StatefulSet,
} from '@kubernetes/client-node';
import { ENGINE_KIND_LABEL, ENGINE_UID_LABEL } from '../../../shared/resources.ts';
import { APPLIED_DIGEST_ANNOTATION } from '../desired/digest.ts';
import { ENGINE_ANNOTATION } from '../desired/workload.ts';
import { QUEUE_LABELS } from '../queueing/kueue-objects.ts';

/** The labels of an owned object a reconcile reads (a StatefulSet's queue, which it keeps for life). */
export const KEPT_LABELS: readonly string[] = [ENGINE_KIND_LABEL, ENGINE_UID_LABEL, ...QUEUE_LABELS];
/** The annotations of an owned object a reconcile reads. */
export const KEPT_ANNOTATIONS: readonly string[] = [ENGINE_ANNOTATION, APPLIED_DIGEST_ANNOTATION];

/** The entries of `record` under `keys`; undefined when it has none of them. */
function picked(
  record: Readonly<Record<string, string>> | undefined,
  keys: readonly string[],
): Record<string, string> | undefined {
  if (record === undefined) return undefined;
  let kept: Record<string, string> | undefined;
  for (const key of keys) {
    const value = record[key];
    if (value === undefined) continue;
    kept ??= {};
    kept[key] = value;
  }
  return kept;
}

/** The metadata of an owned object as reconciles read it; `created` keeps its creation time. */
export function ownedMetadata(metadata: V1ObjectMeta | undefined, created = false): V1ObjectMeta {
  const m = metadata ?? {};
  const labels = picked(m.labels, KEPT_LABELS);
  const annotations = picked(m.annotations, KEPT_ANNOTATIONS);
  return {
    ...(m.name !== undefined ? { name: m.name } : {}),
    ...(m.resourceVersion !== undefined ? { resourceVersion: m.resourceVersion } : {}),
    ...(created && m.creationTimestamp !== undefined ? { creationTimestamp: m.creationTimestamp } : {}),
    ...(m.deletionTimestamp !== undefined ? { deletionTimestamp: m.deletionTimestamp } : {}),
    ...(labels !== undefined ? { labels } : {}),
    ...(annotations !== undefined ? { annotations } : {}),
  };
}

/**
 * A StatefulSet's wanted replicas (scaling by hand is undone) and its volume claim templates,
 * which an apply sends back unchanged since they cannot change, and its uid (Kueue's Workload of
 * a queued set names it); not its pod template, status or selector (the type asks for a selector
 * and a template: empty ones, shared).
 */
const NO_SELECTOR = Object.freeze({});
const NO_TEMPLATE = Object.freeze({});
export function trimStatefulSet(set: V1StatefulSet): V1StatefulSet {
  const templates = set.spec?.volumeClaimTemplates;
  const uid = set.metadata?.uid;
  return {
    metadata: Object.assign(ownedMetadata(set.metadata), uid === undefined ? {} : { uid }),
    spec: {
      replicas: set.spec?.replicas ?? 1,
      selector: NO_SELECTOR,
      template: NO_TEMPLATE,
      ...(templates !== undefined ? { volumeClaimTemplates: templates.map(trimClaimTemplate) } : {}),
    },
  };
}

/** A volume claim template as an apply sends it back: its name, labels, annotations and spec. */
function trimClaimTemplate(template: V1PersistentVolumeClaim): V1PersistentVolumeClaim {
  const metadata = template.metadata ?? {};
  return {
    metadata: {
      ...(metadata.name !== undefined ? { name: metadata.name } : {}),
      ...(metadata.labels !== undefined ? { labels: metadata.labels } : {}),
      ...(metadata.annotations !== undefined ? { annotations: metadata.annotations } : {}),
    },
    ...(template.spec !== undefined ? { spec: template.spec } : {}),
  };
}

/** A pod's status, which the state, failures and probes read, and when it was created. */
export function trimPod(pod: V1Pod): V1Pod {
  return {
    metadata: ownedMetadata(pod.metadata, true),
    ...(pod.status ? { status: pod.status } : {}),
  };
}

/** A claim's requested storage (growth), its phase (bound, lost) and its capacity. */
export function trimClaim(claim: V1PersistentVolumeClaim): V1PersistentVolumeClaim {
  return {
    metadata: ownedMetadata(claim.metadata),
    ...(claim.spec ? { spec: { resources: claim.spec.resources ?? {} } } : {}),
    ...(claim.status
      ? { status: { phase: claim.status.phase ?? '', capacity: claim.status.capacity ?? {} } }
      : {}),
  };
}

/** Services, ConfigMaps and NetworkPolicies: their metadata alone (the digest says what they hold). */
export function trimToMetadata(object: KubernetesObject): KubernetesObject {
  return { metadata: ownedMetadata(object.metadata) };
}
