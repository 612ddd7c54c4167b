/**
 * The store the API's handlers use when they may run inside an admission review (admission.ts):
 * outside one it is the Kubernetes store it wraps; inside one it records the object the handler
 * would have written instead of writing it, reads the object under review as the apiserver gave
 * it, refuses a change of any other object, and keeps a lock taken for the change until the
 * apiserver has stored it. The handlers are the same for API calls and reviews, so which of the
 * two a call is comes from the review it runs in (admission.ts), not from the handler.
 */
import { ApiError, notFound } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import type { ResourceKind } from '../../../shared/resources.ts';
import { currentAdmission, type Admission } from './admission.ts';
import { sortedRun, type IndexSpec, type OrderedRun } from '../list/ordered-index.ts';
import type { Held } from './lease-lock.ts';
import { earlierObjectNames, objectName } from './names.ts';
import { creation, replacement, stored } from './object-writes.ts';
import { identityOf, splitName, toCustomResource, type CustomResource } from './objects.ts';
import { storeError, unstorableName } from './store-errors.ts';
import type { Located, ResourceStore } from './store.ts';
import type { ClusterPlacement, Locks, Store, Stored, WriteOptions } from './store-interface.ts';

/**
 * Status fields the operator reports itself on seeing an admitted change (see update): a late
 * write of the state a lifecycle call moves to could overwrite the state the operator has moved
 * on to meanwhile.
 */
const REPORTED_AFTER_ADMISSION: ReadonlySet<string> = new Set(['state', 'reconciling']);

export class AdmittingStore implements Store, ClusterPlacement {
  private readonly inner: ResourceStore;
  readonly locks: Locks;

  constructor(inner: ResourceStore) {
    this.inner = inner;
    this.locks = new AdmittedLocks(inner.locks);
  }

  get kubeConfig(): ResourceStore['kubeConfig'] {
    return this.inner.kubeConfig;
  }

  get namespace(): string {
    return this.inner.namespace;
  }

  /**
   * A create under review: recorded, not written. The apiserver stores the object after the
   * review, so everything must travel with it in one write.
   */
  async create(kind: ResourceKind, message: { name: string }, options: WriteOptions = {}): Promise<Stored> {
    const admission = currentAdmission();
    if (admission === undefined) return this.inner.create(kind, message, options);
    const { workspace, id } = splitName(kind, message.name);
    if (objectName(workspace, id) === undefined) throw unstorableName(message.name);
    // An object of an earlier release may hold the identity under another name.
    if (
      earlierObjectNames(workspace, id).length > 0 &&
      (await this.find(admission, kind, message.name)) !== undefined
    ) {
      throw storeError({ code: 409 }, message.name, 'create');
    }
    const { body, statusLeft } = creation(
      toCustomResource(kind, message, this.inner.namespace, options.intent),
    );
    if (statusLeft !== undefined) {
      throw new ApiError(
        Code.INVALID_ARGUMENT,
        'The fields this resource records at creation (profile and version snapshots) are too large for ' +
          'one Kubernetes write; create it through the API',
        { reason: 'TOO_LARGE_FOR_ADMISSION' },
      );
    }
    admission.write(body, {});
    return stored(kind, body);
  }

  async get(kind: ResourceKind, name: string): Promise<Stored> {
    const admission = currentAdmission();
    if (admission === undefined) return this.inner.get(kind, name);
    return (await this.locate(admission, kind, name)).stored;
  }

  /** Outside a review, the wrapped store's; inside, the list the handler sees, sorted. */
  async ordered(
    kind: ResourceKind,
    workspace: string,
    spec: IndexSpec<Stored>,
    group: string,
  ): Promise<OrderedRun<Stored>> {
    if (currentAdmission() === undefined) return this.inner.ordered(kind, workspace, spec, group);
    return sortedRun(await this.list(kind, workspace), spec, group);
  }

  async list(kind: ResourceKind, workspace: string): Promise<Stored[]> {
    return withAdmitted(kind, workspace, await this.inner.list(kind, workspace));
  }

  async listHeld(kind: ResourceKind, workspace: string, held: Held): Promise<Stored[]> {
    return withAdmitted(kind, workspace, await this.inner.listHeld(kind, workspace, held));
  }

  /**
   * An update under review: recorded, not written. The status fields it sets follow in a status
   * write once the apiserver has stored the object, except those the operator reports itself on
   * seeing the change (the state a lifecycle change moves to).
   */
  async update(
    kind: ResourceKind,
    message: { name: string },
    resourceVersion: string,
    options: WriteOptions = {},
  ): Promise<Stored> {
    const admission = currentAdmission();
    if (admission === undefined) return this.inner.update(kind, message, resourceVersion, options);
    const resource = toCustomResource(kind, message, this.inner.namespace, options.intent);
    const current = await this.locate(admission, kind, message.name);
    const { body, status = {} } = replacement(resource, {
      current: current.metadata,
      resourceVersion,
      statusFields: options.statusFields,
    });
    admission.write(body, status);
    const later = Object.fromEntries(
      Object.entries(status).filter(([field]) => !REPORTED_AFTER_ADMISSION.has(field)),
    );
    if (!admission.dryRun && Object.keys(later).length > 0) {
      admission.afterLanding(async (landed) => {
        if (landed !== undefined) await this.inner.writeStatus(kind, message.name, body.metadata.name, later);
      });
    }
    return stored(kind, body);
  }

  /** Annotations are not part of a reviewed change: they are written as they are outside one. */
  annotate(kind: ResourceKind, name: string, annotations: Readonly<Record<string, string>>): Promise<void> {
    return this.inner.annotate(kind, name, annotations);
  }

  /** A delete under review: recorded, if it deletes the object under review. */
  async delete(kind: ResourceKind, name: string, resourceVersion?: string): Promise<void> {
    const admission = currentAdmission();
    if (admission === undefined) return this.inner.delete(kind, name, resourceVersion);
    const { metadata } = await this.locate(admission, kind, name);
    admission.confineTo(kind.kind, metadata.name);
    admission.deleted = true;
  }

  caughtUp(kind: ResourceKind, resourceVersion: string): Promise<boolean> {
    return this.inner.caughtUp(kind, resourceVersion);
  }

  newestWrite(kind: ResourceKind): string | undefined {
    return this.inner.newestWrite(kind);
  }

  /** The object of `name`; NOT_FOUND when there is none. */
  private async locate(admission: Admission, kind: ResourceKind, name: string): Promise<Located> {
    const found = await this.find(admission, kind, name);
    if (found === undefined) throw notFound(name);
    return found;
  }

  /**
   * The object that holds the resource `name`: the object under review as the handler reads it
   * (what it has written so far, else the object as the apiserver gave it), if that is the one;
   * else the stored one.
   */
  private async find(admission: Admission, kind: ResourceKind, name: string): Promise<Located | undefined> {
    const { workspace, id } = splitName(kind, name);
    const current = objectName(workspace, id);
    if (current === undefined) return undefined;
    const underReview = [current, ...earlierObjectNames(workspace, id)]
      .map((candidate) => admission.before(kind.kind, candidate))
      .find((object) => object !== undefined && sameIdentity(object, workspace, id));
    if (underReview !== undefined)
      return { metadata: underReview.metadata, stored: stored(kind, underReview) };
    return this.inner.find(kind, name);
  }
}

/**
 * Locks for calls that may run inside a review. A dry run writes nothing, so there is nothing to
 * serialise; a reviewed change is stored by the apiserver after the review is answered, so the
 * lock is kept until it has landed, and the next holder is told its resourceVersion.
 */
export class AdmittedLocks implements Locks {
  private readonly inner: Locks;

  constructor(inner: Locks) {
    this.inner = inner;
  }

  async run<T>(key: string, action: (held: Held) => Promise<{ result: T; wrote?: string }>): Promise<T> {
    const admission = currentAdmission();
    if (admission === undefined) return this.inner.run(key, action);
    if (admission.dryRun) return (await action({ lastWrite: undefined, tookOver: false })).result;
    const answered = Promise.withResolvers<T>();
    // The lock's holding outlives the call: it ends once the change has landed (or never will).
    const holding = this.inner.run(key, async (held) => {
      const outcome = await action(held);
      answered.resolve(outcome.result);
      const landing = Promise.withResolvers<string | undefined>();
      admission.afterLanding(async (landed) => {
        landing.resolve(landed);
        // A failure to give the lock back is the landing's failure, as it is reported.
        await holding;
      });
      return { result: undefined, wrote: (await landing.promise) ?? held.lastWrite };
    });
    // A failed action has given the lock back by the time its failure is answered.
    holding.catch((error: unknown) => {
      answered.reject(error);
    });
    return answered.promise;
  }
}

/**
 * A list as the handler under review sees it: with what it has written of the object under
 * review (a create followed by a change of the same object reads its own write).
 */
function withAdmitted(kind: ResourceKind, workspace: string, listed: Stored[]): Stored[] {
  const admission = currentAdmission();
  const written = admission?.written?.object;
  if (admission === undefined || written === undefined || admission.kind !== kind.kind) return listed;
  const identity = identityOf(written);
  if (identity === undefined || (workspace !== '-' && identity.workspace !== workspace)) return listed;
  const own = stored(kind, written);
  return [...listed.filter((item) => item.message['name'] !== own.message['name']), own];
}

/** Whether the object's labels name the resource `workspace`/`id`. */
function sameIdentity(object: CustomResource, workspace: string, id: string): boolean {
  const identity = identityOf(object);
  return identity?.workspace === workspace && identity.id === id;
}
