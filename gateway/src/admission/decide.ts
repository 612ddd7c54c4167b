/**
 * The gateway's answer to one admission review: the write becomes the API call it stands for
 * (calls.ts), which runs through the API's own handler inside an {@link Admission}, so that
 * kubectl gets exactly the API's checks, defaults and messages.
 *
 * - `mutate` (CREATE, UPDATE) admits the object changed into what the API would have stored:
 *   defaults filled, references resolved, identity labels and the recorded fields (creator,
 *   snapshots) added. What must wait until the apiserver has stored it (a quota lock's release,
 *   status fields) is returned as `settle`.
 * - `validate` (CREATE, UPDATE, DELETE) runs last, as a dry run: the object must be exactly what
 *   the API admits (no later webhook or edit changed it), and a delete must be one the API
 *   allows (the caller's permission, the engine's owner). When this gateway's mutating review
 *   of the same write produced exactly the object under review, that review's decision stands
 *   and the handler does not run again (admitted-writes.ts).
 */
import { GROUP, RESOURCE_KINDS, type ResourceKind } from '../../../shared/resources.ts';
import type { Handlers } from '../call/handler.ts';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { log } from '../log.ts';
import { Admission, admissions } from '../store/admission.ts';
import type { Caller } from '../auth/authorizer.ts';
import type { AdmittedWrites } from './admitted-writes.ts';
import { callOf, type ApiCall, type Write } from './calls.ts';
import {
  allow,
  callerOf,
  deny,
  patchTo,
  type AdmissionRequest,
  type AdmissionResponse,
  type PatchOperation,
  type UserMapping,
} from './review.ts';

export type Mode = 'mutate' | 'validate';

export interface DecideDeps {
  handlers: Handlers;
  /** The namespace the API keeps its resources in. */
  namespace: string;
  mapping: UserMapping;
  /** What this gateway's mutating reviews admitted, for the validating reviews that follow them. */
  admitted?: AdmittedWrites | undefined;
}

/** The answer, and for an admitted change that will be written, what to do once it lands. */
export interface Decision {
  response: AdmissionResponse;
  settle?: { admission: Admission; kind: ResourceKind; objectName: string; previous: string | undefined };
}

const KINDS: readonly ResourceKind[] = Object.values(RESOURCE_KINDS);

/** Decides one review; an ApiError from the checks becomes a refusal carrying its message. */
export async function decide(mode: Mode, request: AdmissionRequest, deps: DecideDeps): Promise<Decision> {
  try {
    return await decideOrThrow(mode, request, deps);
  } catch (error: unknown) {
    const refusal = ApiError.from(error);
    // A refusal of the caller's change is an answer; anything else is a fault of ours, kept in the log.
    if (refusal.code === Code.INTERNAL)
      log.error(
        { err: error, kind: request.kind.kind, name: request.name, operation: request.operation },
        'admission review failed',
      );
    return { response: deny(request.uid, refusal) };
  }
}

async function decideOrThrow(mode: Mode, request: AdmissionRequest, deps: DecideDeps): Promise<Decision> {
  const write = writeOf(request);
  // Only the product's kinds are registered; anything else is none of its business.
  if (write === undefined) return { response: allow(request.uid) };
  checkNamespace(request.namespace, deps.namespace);
  if (mode === 'validate' && deps.admitted?.recalls(request) === true)
    return { response: allow(request.uid) };
  const call = callOf(write);
  if (call === undefined) return { response: allow(request.uid, unchangedSpec(write)) };
  const admission = new Admission({
    dryRun: mode === 'validate' || request.dryRun === true,
    kind: write.kind.kind,
    objectName: (write.object ?? write.oldObject)?.metadata.name ?? '',
    current: write.oldObject,
  });
  await run(deps, admission, call, callerOf(request.userInfo, deps.mapping));
  return answerOf(mode, request, write, { admission, admitted: deps.admitted });
}

/** The write under review, when it is of one of the product's kinds. */
function writeOf(request: AdmissionRequest): Write | undefined {
  const kind = KINDS.find((k) => k.kind === request.kind.kind && request.kind.group === GROUP);
  if (kind === undefined || request.operation === 'CONNECT') return undefined;
  return {
    operation: request.operation,
    kind,
    object: request.object ?? undefined,
    oldObject: request.oldObject ?? undefined,
  };
}

/** The answer once the call ran: the object as the API would have written it. */
function answerOf(
  mode: Mode,
  request: AdmissionRequest,
  write: Write,
  ran: { admission: Admission; admitted: AdmittedWrites | undefined },
): Decision {
  const { admission, admitted } = ran;
  const written = admission.written?.object;
  if (write.object === undefined || written === undefined) return { response: allow(request.uid) };
  const patch = patchTo(write.object, written);
  if (mode === 'validate') return validated(request.uid, patch);
  admitted?.remember(request, patch);
  const response = allow(request.uid, patch);
  if (admission.dryRun) return { response };
  const previous = write.oldObject?.metadata.resourceVersion;
  return { response, settle: { admission, kind: write.kind, objectName: admission.objectName, previous } };
}

/** The validating answer: the object must need no change to be what the API admits. */
function validated(uid: string, patch: readonly PatchOperation[]): Decision {
  if (patch.length === 0) return { response: allow(uid) };
  throw changedAfterAdmission(patch[0]?.path ?? '');
}

/**
 * A write that is no API change may still spell the spec differently (a version named by the
 * alias it was created from, an intent left out): the stored spec stays as it is, so that the
 * write changes nothing.
 */
function unchangedSpec(write: Write): PatchOperation[] {
  const { object, oldObject } = write;
  if (object === undefined || oldObject === undefined) return [];
  return patchTo(object, { ...object, spec: oldObject.spec });
}

/** Runs the API call's handler inside the admission, as `caller`. */
async function run(deps: DecideDeps, admission: Admission, call: ApiCall, caller: Caller): Promise<void> {
  const handler = deps.handlers[call.rpc];
  if (handler === undefined) throw new TypeError(`No handler for ${call.rpc}`);
  await admissions.run(admission, () => handler(call.request, { caller }));
}

function checkNamespace(namespace: string | undefined, expected: string): void {
  if (namespace === expected) return;
  throw new ApiError(
    Code.FAILED_PRECONDITION,
    `AI Engine Manager keeps its resources in the namespace "${expected}"; ` +
      `create them there, not in "${namespace ?? ''}"`,
    { reason: 'WRONG_NAMESPACE' },
  );
}

/** Something after the mutating review (another webhook) changed what the API admitted. */
function changedAfterAdmission(path: string): ApiError {
  return new ApiError(
    Code.INVALID_ARGUMENT,
    `The object was changed after AI Engine Manager admitted it (at ${path}): ` +
      'another admission webhook may be changing resources of engine.h2o.ai, which it must not',
    { reason: 'CHANGED_AFTER_ADMISSION' },
  );
}
