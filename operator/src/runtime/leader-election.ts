/**
 * Leader election on a coordination.k8s.io Lease, so several operator replicas may run and only
 * one acts, with client-go's timing (leaseDuration > renewDeadline > retryPeriod):
 *
 * - A candidate tries every retryPeriod. It takes the lease over only once the lease record has
 *   not changed for a whole leaseDuration as measured by its own clock from when it first saw
 *   the record (not from the renewTime written in it, so clock skew between nodes does not
 *   matter).
 * - The holder renews every retryPeriod, and may act only while its last successful renewal is
 *   less than renewDeadline old ({@link Leadership.mayAct}). Past that it stops acting at once —
 *   even a process that was paused and wakes up with a stale lease sees the time that passed —
 *   and `lost` resolves. Since a rival needs a whole leaseDuration after the last renewal it saw,
 *   the old holder has stopped before anyone else can start; the difference is the margin for a
 *   request already on its way.
 * - Every write carries the resourceVersion read, so two candidates can never both win. A replica
 *   that restarts under the same identity takes its own lease back at once.
 * - A standby can take over only while it reaches the apiserver: {@link LeaderElector.reachable}
 *   says whether its last attempt got an answer (within renewDeadline), for its readiness, and
 *   `onReachableChange` hears of each change once, for its log.
 */
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { statusCode } from '../../../shared/watched-collection.ts';
import { microTime } from '../../../shared/micro-time.ts';

export interface LeaderElectionOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** The Lease's name, shared by all replicas. */
  name: string;
  /** This replica, e.g. its pod name. */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  now?: () => Date;
  /**
   * Called when attempts start or stop getting answers from the apiserver (not on every
   * attempt): `false` with the error of the first failed attempt, `true` on the first answer
   * after failures. Not called for the first answer of all.
   */
  onReachableChange?: (reachable: boolean, error?: unknown) => void;
}

/** client-go's defaults. */
export const LEASE_TIMING = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** Why the timing cannot keep two leaders apart, if it cannot. Pure. */
function timingProblem(timing: typeof LEASE_TIMING): string | undefined {
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = timing;
  if (!(retryPeriodMs > 0)) return 'the retry period must be positive';
  if (!(renewDeadlineMs > retryPeriodMs)) return 'the renew deadline must be longer than the retry period';
  if (!(leaseDurationMs > renewDeadlineMs))
    return 'the lease duration must be longer than the renew deadline';
  return undefined;
}

export interface Leadership {
  /** Whether this replica may act now: its last renewal is less than renewDeadline old. */
  mayAct(): boolean;
  /** Resolves once renewals have failed for renewDeadline: the replica must stop acting. */
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

/** What identifies one state of the lease record: any write changes its resourceVersion. */
function recordOf(lease: V1Lease): string {
  return `${lease.spec?.holderIdentity ?? ''}@${lease.metadata?.resourceVersion ?? ''}`;
}

function versionOf(lease: V1Lease | undefined): { resourceVersion?: string } {
  const resourceVersion = lease?.metadata?.resourceVersion;
  return resourceVersion === undefined ? {} : { resourceVersion };
}

export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private readonly options: Required<Omit<LeaderElectionOptions, 'kubeConfig' | 'onReachableChange'>>;
  private readonly onReachableChange: ((reachable: boolean, error?: unknown) => void) | undefined;
  /** Whether the last attempt got an answer; undefined before the first one ends. */
  private answered: boolean | undefined;
  /** The lease record (its resourceVersion) last seen held by another, and when it was first seen. */
  private observed: { record: string; at: number } | undefined;

  /** @throws TypeError when the timing cannot keep two leaders apart (see timingProblem) */
  constructor(options: LeaderElectionOptions) {
    this.api = options.kubeConfig.makeApiClient(CoordinationV1Api);
    this.options = {
      namespace: options.namespace,
      name: options.name,
      identity: options.identity,
      leaseDurationMs: options.leaseDurationMs ?? LEASE_TIMING.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs ?? LEASE_TIMING.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs ?? LEASE_TIMING.retryPeriodMs,
      now: options.now ?? (() => new Date()),
    };
    this.onReachableChange = options.onReachableChange;
    const problem = timingProblem(this.options);
    if (problem !== undefined) throw new TypeError(`leader election: ${problem}`);
  }

  private time(): number {
    return this.options.now().getTime();
  }

  /**
   * Whether the apiserver answered this replica's last lease read or write: a standby that cannot
   * reach it could not take over, so it is not ready. False before the first answer.
   */
  reachable(): boolean {
    return this.answered === true;
  }

  /** Records an attempt's outcome, telling `onReachableChange` when it differs from the last. */
  private noteAnswer(answered: boolean, error?: unknown): void {
    const before = this.answered;
    this.answered = answered;
    if (before === answered || (before === undefined && answered)) return;
    this.onReachableChange?.(answered, error);
  }

  /**
   * One attempt that never hangs past renewDeadline: true when this replica holds the lease
   * after it; the apiserver's answer (or its absence) is noted either way.
   */
  private async attempt(): Promise<boolean> {
    const { renewDeadlineMs } = this.options;
    const timeout = new Error(`no answer from the apiserver within ${renewDeadlineMs} ms`);
    try {
      const won = await Promise.race([
        this.tryAcquireOrRenew(),
        delay(renewDeadlineMs).then(() => Promise.reject(timeout)),
      ]);
      this.noteAnswer(true);
      return won;
    } catch (error: unknown) {
      this.noteAnswer(false, error);
      return false;
    }
  }

  /** Waits until this replica holds the lease, then keeps renewing it. */
  async acquire(): Promise<Leadership> {
    const { retryPeriodMs, renewDeadlineMs } = this.options;
    let renewedAt: number;
    for (;;) {
      const attempt = this.time();
      if (await this.attempt()) {
        renewedAt = attempt;
        break;
      }
      await delay(retryPeriodMs);
    }
    const state = { renewing: true };
    // A function: release() may end the renewals during any await.
    const renewing = (): boolean => state.renewing;
    // Counted from when the renewal was sent: the apiserver wrote it no earlier than that.
    const mayAct = (): boolean => renewing() && this.time() - renewedAt < renewDeadlineMs;
    const lost = (async (): Promise<void> => {
      while (renewing()) {
        await delay(retryPeriodMs);
        const attempt = this.time();
        const left = renewedAt + renewDeadlineMs - attempt;
        if (!renewing() || left <= 0) return;
        // A renewal that hangs must not hold the deadline back.
        const renewed = await Promise.race([this.attempt(), delay(left).then(() => false)]);
        if (renewed) renewedAt = attempt;
        else if (!mayAct()) return;
      }
    })();
    return {
      mayAct,
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

  /**
   * Whether the lease may be taken: free, ours, or unchanged for its whole duration since this
   * replica first saw it as it is.
   */
  private isFree(lease: V1Lease, now: Date): boolean {
    const holder = lease.spec?.holderIdentity ?? '';
    if (holder === '' || holder === this.options.identity) return true;
    const record = recordOf(lease);
    if (this.observed?.record !== record) this.observed = { record, at: now.getTime() };
    const duration = (lease.spec?.leaseDurationSeconds ?? 0) * 1000;
    return now.getTime() - this.observed.at >= duration;
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
