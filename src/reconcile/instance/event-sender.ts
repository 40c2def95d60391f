// Sends Kubernetes Events beside the reconciles instead of inside them: a pass does not wait for
// the API server to store a record that nothing in the pass reads. The Events of one instance
// keep their order (one chain per instance); past a bound on the Events waiting, new ones are
// dropped and counted, as client-go's event broadcaster drops when its buffer is full.
//
// At most a few are in flight at once (client-go's broadcaster sends one at a time). They share
// the HTTP client's sockets with the reconciles, whose requests queue behind them: a thousand
// instances' Applied Events sent at once put every tenant's next request behind a thousand
// POSTs, and a quiet tenant's pass waited seconds for them during a wave (bench fairness row).

export class EventSender {
  private readonly chains = new Map<string, Promise<void>>();
  private waiting = 0;
  private sending = 0;
  /** Sends waiting for a lane, oldest first; each is handed the lane of one that finished. */
  private readonly lanesWanted: (() => void)[] = [];

  constructor(
    private readonly limit = 1_000,
    private readonly onDrop: () => void = () => undefined,
    /** Events in flight at most. */
    private readonly lanes = 4,
  ) {}

  /** Queues `send` after the earlier Events of `key`; `send` must not reject. */
  enqueue(key: string, send: () => Promise<void>): void {
    if (this.waiting >= this.limit) {
      this.onDrop();
      return;
    }
    this.waiting++;
    const next = (this.chains.get(key) ?? Promise.resolve())
      .then(() => this.inLane(send))
      .finally(() => {
        this.waiting--;
        if (this.chains.get(key) === next) this.chains.delete(key);
      });
    this.chains.set(key, next);
  }

  private async inLane(send: () => Promise<void>): Promise<void> {
    if (this.sending < this.lanes) this.sending++;
    else await new Promise<void>((resolve) => this.lanesWanted.push(resolve));
    try {
      await send();
    } finally {
      const next = this.lanesWanted.shift();
      if (next) next();
      else this.sending--;
    }
  }

  /** Resolves once every queued Event was sent, or after `timeoutMs` (shutdown is bounded). */
  async drain(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.all(this.chains.values()), timeout]);
    clearTimeout(timer);
  }
}
