/**
 * A lock that every gateway replica honours: one coordination.k8s.io Lease per key, taken and
 * given back with compare-and-swap on its resourceVersion, so that two replicas never hold it
 * at once. A holder that dies keeps it for at most the lease's duration; after that the next
 * caller takes it over.
 *
 * The lease also carries what the last holder wrote (the resourceVersion of its write), so the
 * next holder, on any replica, can wait until its cache has seen that write before it counts —
 * the guarded decision (a quota) is then taken on data no older than the previous decision's.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { statusCode } from '../../../shared/watched-collection.ts';
import { storeError } from './store-errors.ts';
import { microTime } from '../../../shared/micro-time.ts';

/** The annotation with the resourceVersion of the last write made under the lock. */
export const LAST_WRITE_ANNOTATION = 'engine.h2o.ai/last-write';
const KEY_ANNOTATION = 'engine.h2o.ai/lock-key';

/** What the holder learns when it takes the lock. */
export interface Held {
  /** The resourceVersion the previous holder wrote, if it said. */
  lastWrite: string | undefined;
  /** Whether the previous holder never gave the lock back (it died or hung): trust no cache. */
  tookOver: boolean;
}

export interface LeaseLockOptions {
  /** Seconds a holder keeps the lock without giving it back. */
  leaseSeconds?: number;
  /** How long a caller waits for the lock before the call fails with UNAVAILABLE. */
  waitMs?: number;
}

export class LeaseLock {
  private readonly api: CoordinationV1Api;
  private readonly namespace: string;
  private readonly holder: string;
  private readonly leaseSeconds: number;
  private readonly waitMs: number;

  constructor(kubeConfig: KubeConfig, namespace: string, holder: string, options: LeaseLockOptions = {}) {
    this.api = kubeConfig.makeApiClient(CoordinationV1Api);
    this.namespace = namespace;
    this.holder = holder;
    this.leaseSeconds = options.leaseSeconds ?? 15;
    this.waitMs = options.waitMs ?? 20_000;
  }

  /**
   * Runs `action` holding the lock of `key`; `action` returns its result and the resourceVersion
   * it wrote (if any), which the next holder is told.
   */
  async run<T>(key: string, action: (held: Held) => Promise<{ result: T; wrote?: string }>): Promise<T> {
    const { lease, held } = await this.acquire(key);
    let wrote: string | undefined;
    try {
      const outcome = await action(held);
      wrote = outcome.wrote;
      return outcome.result;
    } finally {
      await this.release(lease, wrote ?? held.lastWrite);
    }
  }

  private async acquire(key: string): Promise<{ lease: V1Lease; held: Held }> {
    const name = leaseName(key);
    const deadline = Date.now() + this.waitMs;
    for (let attempt = 0; ; attempt++) {
      const taken = await this.tryTake(name, key);
      if (taken !== undefined) return taken;
      if (Date.now() > deadline) {
        throw new ApiError(Code.UNAVAILABLE, 'Too many calls are changing these engines at once; retry', {
          reason: 'LOCK_BUSY',
        });
      }
      // Holders keep it for one create: a few milliseconds. Jitter spreads the retries.
      await sleep(Math.min(5 * 2 ** Math.min(attempt, 4), 80) * (0.5 + Math.random()));
    }
  }

  /** The lease and what it tells, if this call took it; `undefined` when someone else holds it. */
  private async tryTake(name: string, key: string): Promise<{ lease: V1Lease; held: Held } | undefined> {
    const now = new Date();
    const current = await this.api.readNamespacedLease({ name, namespace: this.namespace }).catch(absent);
    if (current === undefined) return this.create(name, key, now);
    const holder = current.spec?.holderIdentity ?? '';
    if (holder !== '' && !this.expired(current, now)) return undefined;
    const annotations = current.metadata?.annotations ?? {};
    const taken = await this.api
      .replaceNamespacedLease({
        name,
        namespace: this.namespace,
        body: this.lease(name, annotations, now, current.metadata?.resourceVersion),
      })
      .catch(conflict);
    if (taken === undefined) return undefined;
    return { lease: taken, held: { lastWrite: annotations[LAST_WRITE_ANNOTATION], tookOver: holder !== '' } };
  }

  /** The first holder of a key makes its Lease. */
  private async create(
    name: string,
    key: string,
    now: Date,
  ): Promise<{ lease: V1Lease; held: Held } | undefined> {
    const body = this.lease(name, { [KEY_ANNOTATION]: key }, now);
    const created = await this.api.createNamespacedLease({ namespace: this.namespace, body }).catch(conflict);
    return created === undefined
      ? undefined
      : { lease: created, held: { lastWrite: undefined, tookOver: false } };
  }

  private expired(lease: V1Lease, now: Date): boolean {
    // Read back, the time is a string (the client library does not parse MicroTime).
    const renewed = lease.spec?.renewTime === undefined ? 0 : new Date(lease.spec.renewTime).getTime();
    return renewed + (lease.spec?.leaseDurationSeconds ?? this.leaseSeconds) * 1000 < now.getTime();
  }

  /** The Lease held by this replica from `now` (no holder without `now`), guarded by `resourceVersion`. */
  private lease(
    name: string,
    annotations: Record<string, string>,
    now: Date | undefined,
    resourceVersion?: string,
  ): V1Lease {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name,
        namespace: this.namespace,
        annotations,
        ...(resourceVersion === undefined ? {} : { resourceVersion }),
      },
      spec:
        now === undefined
          ? { holderIdentity: '', leaseDurationSeconds: this.leaseSeconds }
          : {
              holderIdentity: this.holder,
              leaseDurationSeconds: this.leaseSeconds,
              acquireTime: microTime(now),
              renewTime: microTime(now),
            },
    };
  }

  /** Gives the lock back, telling the next holder what was written. */
  private async release(lease: V1Lease, lastWrite: string | undefined): Promise<void> {
    const annotations = {
      ...(lease.metadata?.annotations ?? {}),
      ...(lastWrite === undefined ? {} : { [LAST_WRITE_ANNOTATION]: lastWrite }),
    };
    const name = lease.metadata?.name ?? '';
    const body = this.lease(name, annotations, undefined, lease.metadata?.resourceVersion);
    // A conflict means the lease expired and another caller took it over: nothing to give back.
    await this.api.replaceNamespacedLease({ name, namespace: this.namespace, body }).catch(conflict);
  }
}

/** A Lease name for any key: a DNS label. */
function leaseName(key: string): string {
  return `aiem-lock-${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;
}

/** 404 as `undefined`; other failures as API errors (the cluster unavailable…). */
function absent(error: unknown): undefined {
  if (statusCode(error) === 404) return undefined;
  throw storeError(error, 'the engine quota lock', 'get');
}

/** 409 (someone else was first) as `undefined`; other failures as API errors. */
function conflict(error: unknown): undefined {
  if (statusCode(error) === 409) return undefined;
  throw storeError(error, 'the engine quota lock', 'update');
}
