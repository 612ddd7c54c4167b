/**
 * Writes that an admission review makes instead of the API call's own. A resource written with
 * kubectl reaches the gateway as an admission review: the apiserver asks whether (and how
 * changed) it may store the object. The gateway answers by running the API's own handler for the
 * same change inside an {@link Admission}: the store then records the object it would have
 * written instead of writing it (the apiserver writes it, after the review), reads the object
 * under review as the apiserver gave it, and refuses a second object (kubectl writes one at a
 * time). What cannot travel with the object (status fields, a lock's release) waits until the
 * object has landed; see gateway/src/admission/.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import type { CustomResource } from './objects.ts';

/** What the store would have written for the object under review. */
export interface AdmittedWrite {
  object: CustomResource;
  /** Status fields the write sets, which the apiserver does not take from an admission. */
  status: Readonly<Record<string, unknown>>;
}

/** Runs once the admitted object has landed (with its resourceVersion), or never will (undefined). */
export type AfterLanding = (resourceVersion: string | undefined) => Promise<void>;

/** One admission review's view of the store. */
export class Admission {
  /** A dry run (`kubectl --dry-run=server`): nothing is written, no lock is taken. */
  readonly dryRun: boolean;
  /** The kind and Kubernetes name of the object under review. */
  readonly kind: string;
  readonly objectName: string;
  /** The object as stored before the change (updates and deletes). */
  readonly current: CustomResource | undefined;
  /** What the handler would have written. */
  written: AdmittedWrite | undefined;
  /** Whether the handler would have deleted the object. */
  deleted = false;
  private readonly landing: AfterLanding[] = [];

  constructor(options: {
    dryRun: boolean;
    kind: string;
    objectName: string;
    current?: CustomResource | undefined;
  }) {
    this.dryRun = options.dryRun;
    this.kind = options.kind;
    this.objectName = options.objectName;
    this.current = options.current;
  }

  /** Records the write of `object`; a write of any other object is refused. */
  write(object: CustomResource, status: Readonly<Record<string, unknown>>): void {
    this.confineTo(object.kind, object.metadata.name);
    this.written = { object, status };
  }

  /**
   * The object under review as the handler reads it, if `objectName` of `kind` is that object:
   * what it has written so far (a create followed by a change), else the object as stored.
   */
  before(kind: string, objectName: string): CustomResource | undefined {
    if (kind !== this.kind || objectName !== this.objectName) return undefined;
    return this.written?.object ?? this.current;
  }

  /** Refuses a change that would reach another object than the one under review. */
  confineTo(kind: string, objectName: string): void {
    if (kind === this.kind && objectName === this.objectName) return;
    throw new ApiError(
      Code.FAILED_PRECONDITION,
      `This change would also change the object "${objectName}", and a Kubernetes write changes one ` +
        'object: change that object first, or make the change through the API',
      { reason: 'CHANGES_OTHER_OBJECTS' },
    );
  }

  /** Something to do once the object has landed (or is known never to). */
  afterLanding(step: AfterLanding): void {
    this.landing.push(step);
  }

  /** Runs the steps waiting for the object to land, in the order they were asked for. */
  async landed(resourceVersion: string | undefined): Promise<void> {
    for (const step of this.landing.splice(0)) await step(resourceVersion);
  }
}

/** The admission the current call runs in, if any. */
export const admissions = new AsyncLocalStorage<Admission>();

/** The admission the current call runs in, if any. */
export function currentAdmission(): Admission | undefined {
  return admissions.getStore();
}
