// Per-key exponential backoff with jitter, as client-go's item rate limiter: each failure of a
// key doubles its delay up to a cap; success forgets the key.

export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  /** 0..1: the delay is scaled by a random factor in [1 - jitter, 1]. */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 200, maxMs: 5 * 60_000, jitter: 0.2 };

/**
 * Between attempts of a list, a watch or a discovery read that failed: client-go's reflector
 * (800 ms doubling to 30 s). The cap bounds both the load on a sick API server (one attempt per
 * 24-30 s per informer once the streak is long) and the time to notice it healed.
 */
export const LIST_WATCH_BACKOFF: BackoffOptions = { baseMs: 800, maxMs: 30_000, jitter: 0.2 };

export class Backoff {
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly options: BackoffOptions = DEFAULT_BACKOFF,
    private readonly random: () => number = Math.random,
  ) {}

  /** Records a failure of `key` and returns how long to wait before retrying it. */
  next(key: string): number {
    const count = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, count);
    const raw = Math.min(this.options.maxMs, this.options.baseMs * 2 ** Math.min(count - 1, 30));
    return Math.round(raw * (1 - this.options.jitter * this.random()));
  }

  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }
}

/**
 * The most attempts a run of failures makes within `ms` of its first: the first at once, then one
 * after each delay at its shortest (all jitter taken off). What a fault scenario bounds the
 * requests of one informer by.
 */
export function mostAttemptsWithin(options: BackoffOptions, ms: number): number {
  let attempts = 1;
  for (let at = 0, failures = 1; ; failures++) {
    const delay = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(failures - 1, 30));
    at += delay * (1 - options.jitter);
    if (at > ms) return attempts;
    attempts++;
  }
}
