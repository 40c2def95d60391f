// The client-side rate limit of requests to the API server (--kube-qps / --kube-burst): a token
// bucket that hands out waits in arrival order, so a burst of reconciles queues instead of failing.

export interface RateLimit {
  /** Sustained requests per second; 0 turns the limit off. */
  qps: number;
  /** Requests that may go at once after a quiet spell (at least 1). */
  burst: number;
}

export class TokenBucket {
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = Math.max(1, limit.burst);
    this.refilledAt = now();
  }

  /**
   * Takes one token and says how long (ms) the caller must wait before sending. The token is
   * reserved at once (the count may go negative), so later callers wait behind earlier ones.
   */
  reserve(): number {
    if (this.limit.qps <= 0) return 0;
    const now = this.now();
    const burst = Math.max(1, this.limit.burst);
    this.tokens = Math.min(burst, this.tokens + ((now - this.refilledAt) / 1000) * this.limit.qps);
    this.refilledAt = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.limit.qps) * 1000;
  }
}
