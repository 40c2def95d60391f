// The failures of one thing the operator keeps asking the API server for (an informer, a Lease,
// a discovery document), told once when they start and once when they end: a warning per retry
// hides an outage's shape as well as silence does, and floods the log while it lasts.

export type StreakLog = (
  level: 'info' | 'warn',
  message: string,
  fields: Record<string, unknown>,
) => void;

/** The message of an error as a log field: never the error object (it may hold a request). */
export function errorText(error: unknown): string {
  return String((error as Error | undefined)?.message ?? error);
}

export class FailureStreak {
  #since: number | undefined;
  #failures = 0;
  #endedAt = Number.NEGATIVE_INFINITY;

  /**
   * `what` names the thing in both lines (e.g. "list/watch"); `fields` go on both (its path,
   * its Lease).
   */
  constructor(
    private readonly what: string,
    private readonly log: StreakLog | undefined,
    private readonly fields: Record<string, unknown> = {},
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** When the current streak started (ms since the epoch), undefined while healthy. */
  get since(): number | undefined {
    return this.#since;
  }

  /** Failures in the current streak. */
  get failures(): number {
    return this.#failures;
  }

  /** How long it has been healthy since its last streak ended (infinite if it never failed). */
  healthyFor(): number {
    return this.#since === undefined ? this.now() - this.#endedAt : 0;
  }

  /**
   * Records one failure; the first of a streak is logged as a warning with `extra` (the delay
   * before the next attempt, say). Returns whether this failure started the streak.
   */
  failed(error: unknown, extra: Record<string, unknown> = {}): boolean {
    this.#failures++;
    if (this.#since !== undefined) return false;
    this.#since = this.now();
    this.log?.('warn', `${this.what} failing; retrying with backoff, said again when it recovers`, {
      ...this.fields,
      error: errorText(error),
      ...extra,
    });
    return true;
  }

  /** Records a success; ends the streak (logged once, with its length) if there was one. */
  succeeded(): boolean {
    if (this.#since === undefined) return false;
    this.log?.('info', `${this.what} recovered`, {
      ...this.fields,
      failures: this.#failures,
      failingForMs: this.now() - this.#since,
    });
    this.#since = undefined;
    this.#failures = 0;
    this.#endedAt = this.now();
    return true;
  }
}
