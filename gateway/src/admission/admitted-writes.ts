/**
 * What the mutating review admitted, remembered briefly so that the validating review of the same
 * write need not run the API's handler a second time.
 *
 * The apiserver gives every webhook call a fresh `request.uid` (apiserver's
 * admission/plugin/webhook/request/admissionreview.go: `uuid.NewUUID()` per call), so the two
 * reviews of one write cannot be paired by it. They are paired by everything the decision rests
 * on instead: the caller as the apiserver authenticated it, the operation, the stored object the
 * write changes (uid and resourceVersion) and the object itself, as the mutating review's patch
 * left it. A client controls the object but not the caller nor the stored version, and a record
 * exists only for an object the handler, run as that caller on that version, produced itself:
 * submitting that object again is asking for the change the handler already admitted. Anything
 * else (another webhook changed the object after ours, another replica answered the mutating
 * review, the record expired) finds no record, and the validating review runs the handler in
 * full, as before.
 */
import { createHash } from 'node:crypto';
import type { CustomResource } from '../store/objects.ts';
import type { AdmissionRequest, PatchOperation } from './review.ts';

/** How long a record waits for its validating review: the apiserver sends it within the write. */
const RECORD_MS = 30_000;
/** Records kept at most: the oldest go first (a burst of writes that never reached validation). */
const MAX_RECORDS = 10_000;

export class AdmittedWrites {
  /** Digest → when the record expires; insertion order is age order. */
  private readonly records = new Map<string, number>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** Remembers that the mutating review of `request` admitted it changed by `patch`. */
  remember(request: AdmissionRequest, patch: readonly PatchOperation[]): void {
    if (request.object == null) return;
    const now = this.now();
    for (const [key, expires] of this.records) {
      if (expires > now && this.records.size < MAX_RECORDS) break;
      this.records.delete(key);
    }
    // What the validating review will see of the object: the submitted one, changed by the patch.
    const produced = decisiveOf(request.object);
    applyPatch(produced, patch);
    this.records.set(digestOf(request, produced), now + RECORD_MS);
  }

  /**
   * Whether the validating review of `request` sees exactly what a mutating review of this
   * gateway admitted for the same caller and stored version; the record is used up.
   */
  recalls(request: AdmissionRequest): boolean {
    if (request.object == null || this.records.size === 0) return false;
    const key = digestOf(request, decisiveOf(request.object));
    const expires = this.records.get(key);
    if (expires === undefined) return false;
    this.records.delete(key);
    return expires > this.now();
  }
}

/** The digest of what decides a review of `request` whose object reads as `object` (decisiveOf). */
function digestOf(request: AdmissionRequest, object: object): string {
  const old = request.oldObject?.metadata;
  const decisive = {
    operation: request.operation,
    kind: request.kind,
    namespace: request.namespace ?? '',
    dryRun: request.dryRun === true,
    user: request.userInfo,
    old: old === undefined ? null : { uid: old.uid ?? '', resourceVersion: old.resourceVersion ?? '' },
    object,
  };
  return createHash('sha256').update(canonical(decisive)).digest('base64url');
}

/**
 * What a review reads of an object, in the object's own shape so that the review's patch applies
 * to it: all but what the apiserver itself sets between the two reviews (uid, creation time,
 * generation, managed fields) and status, which no review decides. Its maps and lists are copies.
 */
function decisiveOf(object: CustomResource): object {
  const { name, namespace, labels, annotations, finalizers, deletionTimestamp } = object.metadata;
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: {
      name,
      namespace,
      labels: labels === undefined ? undefined : { ...labels },
      annotations: annotations === undefined ? undefined : { ...annotations },
      finalizers: finalizers === undefined ? undefined : [...finalizers],
      deletionTimestamp: String(deletionTimestamp ?? ''),
    },
    spec: { ...object.spec },
  };
}

/** JSON with object keys sorted, so that equal values have equal text whatever their key order. */
export function canonical(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const members = new Map(Object.entries(value));
  let text = '';
  for (const key of [...members.keys()].sort()) {
    const member: unknown = members.get(key);
    if (member !== undefined) text += `${text === '' ? '' : ','}${JSON.stringify(key)}:${canonical(member)}`;
  }
  return `{${text}}`;
}

/**
 * Changes `target` as the apiserver does with the review's patch, in the forms patchTo writes
 * (review.ts): add, replace or remove a member; append to a list.
 */
export function applyPatch(target: object, patch: readonly PatchOperation[]): void {
  for (const operation of patch) apply(target, operation);
}

function apply(root: object, operation: PatchOperation): void {
  const tokens = operation.path
    .split('/')
    .slice(1)
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = tokens.pop();
  let parent: unknown = root;
  for (const token of tokens) parent = memberOf(parent, token);
  if (last === undefined || typeof parent !== 'object' || parent === null) return;
  const { value } = operation;
  if (Array.isArray(parent)) {
    if (operation.op === 'remove') parent.splice(Number(last), 1);
    else if (last === '-') parent.push(value);
    else parent.splice(Number(last), operation.op === 'add' ? 0 : 1, value);
  } else if (operation.op === 'remove') Reflect.deleteProperty(parent, last);
  else Reflect.set(parent, last, value);
}

function memberOf(parent: unknown, token: string): unknown {
  if (typeof parent !== 'object' || parent === null) return undefined;
  return Reflect.get(parent, token);
}
