// A request that failed is not sent again, for the same key, until its backoff has passed: the
// caller gets the failure it already had. During an outage, a hundred passes that each want the
// same discovery document send one request per backoff step, not a hundred per round.
import { Backoff, LIST_WATCH_BACKOFF, type BackoffOptions } from './backoff.ts';

export class RetryGate {
  private readonly held = new Map<string, { error: unknown; until: number }>();
  private readonly backoff: Backoff;

  constructor(
    options: BackoffOptions = LIST_WATCH_BACKOFF,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.backoff = new Backoff(options);
  }

  /** Throws the last failure of `key` while its backoff runs; returns when it may be sent. */
  check(key: string): void {
    const held = this.held.get(key);
    if (held && this.now() < held.until) throw held.error;
  }

  failed(key: string, error: unknown): void {
    this.held.set(key, { error, until: this.now() + this.backoff.next(key) });
  }

  succeeded(key: string): void {
    if (!this.held.delete(key)) return;
    this.backoff.forget(key);
  }

  /** Runs `send` unless `key` is held back; records how it went. */
  async run<T>(
    key: string,
    send: () => Promise<T>,
    isFailure: (error: unknown) => boolean,
  ): Promise<T> {
    this.check(key);
    try {
      const result = await send();
      this.succeeded(key);
      return result;
    } catch (error) {
      if (isFailure(error)) this.failed(key, error);
      throw error;
    }
  }
}
