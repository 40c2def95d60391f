// Sends Kubernetes Events beside the reconciles instead of inside them: a pass does not wait for
// the API server to store a record that nothing in the pass reads. The Events of one instance
// keep their order (one chain per instance); past a bound on the Events waiting, new ones are
// dropped and counted, as client-go's event broadcaster drops when its buffer is full.

export class EventSender {
  private readonly chains = new Map<string, Promise<void>>();
  private waiting = 0;

  constructor(
    private readonly limit = 1_000,
    private readonly onDrop: () => void = () => undefined,
  ) {}

  /** Queues `send` after the earlier Events of `key`; `send` must not reject. */
  enqueue(key: string, send: () => Promise<void>): void {
    if (this.waiting >= this.limit) {
      this.onDrop();
      return;
    }
    this.waiting++;
    const next = (this.chains.get(key) ?? Promise.resolve()).then(send).finally(() => {
      this.waiting--;
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
    this.chains.set(key, next);
  }

  /** Resolves once every queued Event was sent, or after `timeoutMs` (shutdown is bounded). */
  async drain(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.all(this.chains.values()), timeout]);
    clearTimeout(timer);
  }
}
