/**
 * The admission.k8s.io/v1 AdmissionReview the apiserver sends its webhooks, what the gateway
 * answers, and the pure parts of the answer: who the caller is and the JSON Patch that turns the
 * submitted object into the one the API would have stored.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Caller } from '../auth/authorizer.ts';
import type { ApiError } from '../errors/api-error.ts';
import { ENGINE_FINALIZER } from '../../../shared/resources.ts';
import type { CustomResource } from '../store/objects.ts';
import { OWNED_ANNOTATIONS, OWNED_LABELS } from './calls.ts';

/** The part of an AdmissionReview request the gateway reads. */
export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  name?: string;
  namespace?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo: { username?: string; groups?: string[] };
  object?: CustomResource | null;
  oldObject?: CustomResource | null;
  dryRun?: boolean;
}

export interface AdmissionReview {
  apiVersion: string;
  kind: string;
  request?: AdmissionRequest;
}

/** One JSON Patch (RFC 6902) operation. */
export interface PatchOperation {
  op: 'add' | 'replace' | 'remove';
  path: string;
  value?: unknown;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code: number; message: string; reason?: string };
  patchType?: 'JSONPatch';
  patch?: string;
  warnings?: string[];
}

/** The review's answer. */
export function answer(response: AdmissionResponse): AdmissionReview & { response: AdmissionResponse } {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

/** Admits, changed by `patch` when it has operations. */
export function allow(uid: string, patch: readonly PatchOperation[] = []): AdmissionResponse {
  if (patch.length === 0) return { uid, allowed: true };
  return {
    uid,
    allowed: true,
    patchType: 'JSONPatch',
    patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
  };
}

/** Refuses with the API's message; kubectl prints it after "denied the request: ". */
export function deny(uid: string, error: ApiError): AdmissionResponse {
  return {
    uid,
    allowed: false,
    status: { code: error.httpStatus, message: error.message, reason: error.reason },
  };
}

/** How Kubernetes user names and groups become API callers (see the README's configuration). */
export interface UserMapping {
  /** Stripped from user names, e.g. `oidc:` when the apiserver prefixes the issuer's users. */
  usernamePrefix: string;
  /** Only groups with this prefix are roles, without it; groups of Kubernetes itself (`system:`) never are. */
  groupsPrefix: string;
}

/**
 * The caller a Kubernetes user is: `users/<name>` with the user name as the API maps a token's
 * subject, and the user's groups as roles.
 */
export function callerOf(user: AdmissionRequest['userInfo'], mapping: UserMapping): Caller {
  const username = user.username ?? '';
  const name = username.startsWith(mapping.usernamePrefix)
    ? username.slice(mapping.usernamePrefix.length)
    : username;
  const roles = (user.groups ?? [])
    .filter((group) => !group.startsWith('system:') && group.startsWith(mapping.groupsPrefix))
    .map((group) => group.slice(mapping.groupsPrefix.length));
  return { subject: `users/${name}`, displayName: name, roles };
}

/** A JSON Pointer token (RFC 6901). */
function token(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * The JSON Patch from the submitted object to the wanted one, in what the API decides: the spec
 * (defaults filled, references resolved), the identity labels, the recorded output fields and
 * an engine's finalizer, which the API writes with it. Everything else the submitter wrote
 * (other labels and annotations, other finalizers) stays.
 */
export function patchTo(submitted: CustomResource, wanted: CustomResource): PatchOperation[] {
  const operations: PatchOperation[] = [];
  if (!isDeepStrictEqual(submitted.spec, wanted.spec))
    operations.push({
      // A manifest may leave spec out altogether.
      op: Object.hasOwn(submitted, 'spec') ? 'replace' : 'add',
      path: '/spec',
      value: wanted.spec,
    });
  operations.push(
    ...mapPatch('labels', submitted.metadata.labels, wanted.metadata.labels, OWNED_LABELS),
    ...mapPatch(
      'annotations',
      submitted.metadata.annotations,
      wanted.metadata.annotations,
      OWNED_ANNOTATIONS,
    ),
    ...finalizerPatch(submitted.metadata.finalizers, wanted.metadata.finalizers),
  );
  return operations;
}

/** The operation that adds the engine finalizer the wanted object has, after the submitter's. */
function finalizerPatch(
  submitted: readonly string[] | undefined,
  wanted: readonly string[] | undefined,
): PatchOperation[] {
  if (!(wanted ?? []).includes(ENGINE_FINALIZER) || (submitted ?? []).includes(ENGINE_FINALIZER)) return [];
  if (submitted === undefined)
    return [{ op: 'add', path: '/metadata/finalizers', value: [ENGINE_FINALIZER] }];
  return [{ op: 'add', path: '/metadata/finalizers/-', value: ENGINE_FINALIZER }];
}

/** Operations that make the `keys` of metadata.<field> what `wanted` has. */
function mapPatch(
  field: 'labels' | 'annotations',
  submitted: Readonly<Record<string, string>> | undefined,
  wanted: Readonly<Record<string, string>> | undefined,
  keys: readonly string[],
): PatchOperation[] {
  const target = Object.fromEntries(
    keys.flatMap((key) => (wanted?.[key] === undefined ? [] : [[key, wanted[key]]])),
  );
  if (submitted === undefined) {
    return Object.keys(target).length === 0 ? [] : [{ op: 'add', path: `/metadata/${field}`, value: target }];
  }
  return keys.flatMap((key): PatchOperation[] => {
    const path = `/metadata/${field}/${token(key)}`;
    const value = target[key];
    if (value === submitted[key]) return [];
    if (value === undefined) return [{ op: 'remove', path }];
    return [{ op: key in submitted ? 'replace' : 'add', path, value }];
  });
}
