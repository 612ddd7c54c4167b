/**
 * Leader election on a coordination.k8s.io Lease, so several operator replicas may run and only
 * one reconciles. The holder renews the lease well inside its duration; a candidate takes it over
 * only once it has gone unrenewed for the whole duration. Every write carries the resourceVersion
 * read, so two candidates can never both win. A replica that restarts under the same identity
 * takes its own lease back at once.
 */
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { statusCode } from '../kube/client.ts';
import { microTime } from '../../../shared/micro-time.ts';

export interface LeaderElectionOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** The Lease's name, shared by all replicas. */
  name: string;
  /** This replica, e.g. its pod name. */
  identity: string;
  leaseDurationMs?: number;
  renewEveryMs?: number;
  now?: () => Date;
}

export interface Leadership {
  /** Resolves when leadership is lost (renewals failed for a whole lease duration). */
  lost: Promise<void>;
  /** Stops renewing and gives the lease up, so a successor need not wait. */
  release(): Promise<void>;
}

const delay = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });

/** True once the write is done; false when another replica wrote first (409); else throws. */
async function wonUnlessRaced(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error: unknown) {
    if (statusCode(error) === 409) return false;
    throw error;
  }
}

function versionOf(lease: V1Lease | undefined): { resourceVersion?: string } {
  const resourceVersion = lease?.metadata?.resourceVersion;
  return resourceVersion === undefined ? {} : { resourceVersion };
}

export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private readonly options: Required<Omit<LeaderElectionOptions, 'kubeConfig'>>;

  constructor(options: LeaderElectionOptions) {
    this.api = options.kubeConfig.makeApiClient(CoordinationV1Api);
    this.options = {
      namespace: options.namespace,
      name: options.name,
      identity: options.identity,
      leaseDurationMs: options.leaseDurationMs ?? 15_000,
      renewEveryMs: options.renewEveryMs ?? 5_000,
      now: options.now ?? (() => new Date()),
    };
  }

  /** Waits until this replica holds the lease, then keeps renewing it. */
  async acquire(): Promise<Leadership> {
    while (!(await this.tryAcquireOrRenew())) await delay(this.options.renewEveryMs);
    const state = { renewing: true };
    let lastRenewal = this.options.now().getTime();
    const lost = (async (): Promise<void> => {
      for (;;) {
        await delay(this.options.renewEveryMs);
        if (!state.renewing) return;
        const renewed = await this.tryAcquireOrRenew().catch(() => false);
        if (renewed) lastRenewal = this.options.now().getTime();
        else if (this.options.now().getTime() - lastRenewal >= this.options.leaseDurationMs) return;
      }
    })();
    return {
      lost,
      release: async () => {
        state.renewing = false;
        await this.release().catch(() => undefined);
      },
    };
  }

  private lease(current: V1Lease | undefined, now: Date): V1Lease {
    const spec = current?.spec ?? {};
    const mine = spec.holderIdentity === this.options.identity;
    // A change of holder counts as a transition; renewals and the first holder do not.
    const transition = mine || current === undefined ? 0 : 1;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      // The resourceVersion read makes the write fail if another replica wrote in between.
      metadata: { name: this.options.name, namespace: this.options.namespace, ...versionOf(current) },
      spec: {
        holderIdentity: this.options.identity,
        leaseDurationSeconds: Math.ceil(this.options.leaseDurationMs / 1000),
        acquireTime: mine ? (spec.acquireTime ?? microTime(now)) : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + transition,
      },
    };
  }

  /** True when this replica holds the lease after the call. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name } = this.options;
    const now = this.options.now();
    const current = await this.api.readNamespacedLease({ name, namespace }).catch((error: unknown) => {
      if (statusCode(error) === 404) return undefined;
      throw error;
    });
    if (current === undefined)
      return wonUnlessRaced(this.api.createNamespacedLease({ namespace, body: this.lease(undefined, now) }));
    if (!this.isFree(current, now)) return false;
    return wonUnlessRaced(
      this.api.replaceNamespacedLease({ name, namespace, body: this.lease(current, now) }),
    );
  }

  private isFree(lease: V1Lease, now: Date): boolean {
    const holder = lease.spec?.holderIdentity ?? '';
    if (holder === '' || holder === this.options.identity) return true;
    const renewed = lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0;
    const duration = (lease.spec?.leaseDurationSeconds ?? 0) * 1000;
    return now.getTime() - renewed >= duration;
  }

  private async release(): Promise<void> {
    const { namespace, name } = this.options;
    const current = await this.api.readNamespacedLease({ name, namespace });
    if (current.spec?.holderIdentity !== this.options.identity) return;
    const released = current;
    if (released.spec) released.spec.holderIdentity = '';
    await this.api.replaceNamespacedLease({ name, namespace, body: released });
  }
}
