/**
 * A client-side rate limit on the operator's calls to the apiserver, as client-go's QPS and
 * burst: a bucket of `burst` tokens refilled at `qps` per second; each call takes one, waiting
 * for it when the bucket is empty. It keeps a burst of reconciles (an operator start, a thousand
 * engines created at once) from crowding out everyone else's requests. Calls are served in the
 * order they asked.
 */
export interface BucketState {
  tokens: number;
  /** When `tokens` was last brought up to date, in ms. */
  at: number;
}

/** The bucket at `now` after one call takes a token, and how long that call must wait first. Pure. */
export function take(
  state: BucketState,
  now: number,
  qps: number,
  burst: number,
): { state: BucketState; waitMs: number } {
  const refilled = Math.min(burst, state.tokens + ((now - state.at) / 1000) * qps);
  const tokens = refilled - 1;
  // A negative balance is a debt the caller pays by waiting: later callers wait behind it.
  const waitMs = tokens >= 0 ? 0 : Math.ceil((-tokens / qps) * 1000);
  return { state: { tokens, at: now }, waitMs };
}

export class TokenBucket {
  private state: BucketState;
  private readonly qps: number;
  private readonly burst: number;

  /** A non-positive `qps` means no limit. */
  constructor(qps: number, burst: number) {
    this.qps = qps;
    this.burst = Math.max(1, burst);
    this.state = { tokens: this.burst, at: Date.now() };
  }

  /** Resolves when the caller may make its call. */
  async acquire(): Promise<void> {
    if (this.qps <= 0) return;
    const { state, waitMs } = take(this.state, Date.now(), this.qps, this.burst);
    this.state = state;
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}
