// Lease-based leader election (coordination.k8s.io/v1), in the manner of client-go: acquire a
// free or expired Lease, renew it every retry period, give up leadership (and let the process
// restart) when renewal keeps failing past the renew deadline, release the Lease on shutdown.
// Expiry is judged on the local clock from when a renewal was last observed, never by comparing
// clocks across machines. Failures are said once when they start and once when they end; a
// candidate backs off between failed attempts (a leader cannot: it must renew in time).
import { Backoff } from '../backoff.ts';
import { FailureStreak } from '../failure-streak.ts';

export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

export interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaseSpec;
}

/** Reads and writes one Lease; `update` must fail when `resourceVersion` is stale. */
export interface LeaseStore {
  get(): Promise<Lease | undefined>;
  create(lease: Lease): Promise<Lease>;
  update(lease: Lease): Promise<Lease>;
}

export interface LeaderElectorOptions {
  identity: string;
  name: string;
  namespace: string;
  store: LeaseStore;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  /** Leadership was lost (renewal failed past the deadline): stop working now. */
  onStoppedLeading: () => void;
  log?: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
  now?: () => number;
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  private leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private lastRenew = 0;
  /** What we last saw of someone else's lease, and when (our clock). */
  private observed: { holder: string; renewTime: string; at: number } | undefined;
  private lease: Lease | undefined;
  private readonly streak: FailureStreak;
  /** A candidate's waits after failures: the retry period doubling up to the lease duration. */
  private readonly backoff: Backoff;

  constructor(private readonly options: LeaderElectorOptions) {
    this.streak = new FailureStreak(
      'leader Lease renewal',
      options.log,
      { lease: `${options.namespace}/${options.name}` },
      () => this.now(),
    );
    this.backoff = new Backoff({
      baseMs: this.retryPeriodMs,
      maxMs: Math.max(this.retryPeriodMs, this.leaseDurationMs),
      jitter: 0.2,
    });
  }

  private get retryPeriodMs(): number {
    return this.options.retryPeriodMs ?? 2_000;
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  private get leaseDurationMs(): number {
    return this.options.leaseDurationMs ?? 15_000;
  }

  isLeader(): boolean {
    return this.leading;
  }

  /**
   * Why this replica may not write now, or undefined when it may. A leader may write only until
   * the renew deadline after its last successful renewal: that is before its Lease can expire
   * for anyone else (lease duration > renew deadline, both measured from the same renewal), so
   * an old leader has stopped writing before a new one can start, whatever is still in flight.
   */
  writeRefusal(): string | undefined {
    if (!this.leading) return 'this replica does not hold the leader Lease';
    const sinceRenewal = this.now() - this.lastRenew;
    const deadline = this.options.renewDeadlineMs ?? 10_000;
    if (sinceRenewal > deadline)
      return `the leader Lease was last renewed ${sinceRenewal} ms ago (renew deadline ${deadline} ms)`;
    return undefined;
  }

  /** Starts campaigning; returns at once. */
  start(): void {
    void this.tick();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      const held = await this.tryAcquireOrRenew();
      this.streak.succeeded();
      this.backoff.forget('lease');
      if (held) {
        this.lastRenew = this.now();
        if (!this.leading) {
          this.leading = true;
          this.options.log?.('info', 'became leader', {
            lease: `${this.options.namespace}/${this.options.name}`,
            identity: this.options.identity,
          });
          this.options.onStartedLeading();
        }
      } else if (this.leading) {
        this.lose('the lease was taken over');
      }
    } catch (error) {
      // A leader retries every period, to renew before its deadline; a candidate backs off.
      const delay = this.leading ? this.retryPeriodMs : this.backoff.next('lease');
      this.streak.failed(error, { leading: this.leading, delayMs: delay });
      if (this.leading && this.now() - this.lastRenew > (this.options.renewDeadlineMs ?? 10_000))
        this.lose('renewal failed past the renew deadline');
      this.schedule(delay);
      return;
    }
    this.schedule(this.retryPeriodMs);
  }

  /** Leadership ends for good, as in client-go: the process restarts to campaign again clean. */
  private lose(why: string): void {
    this.leading = false;
    this.stopped = true;
    this.options.log?.('warn', 'lost leadership', { why });
    this.options.onStoppedLeading();
  }

  private spec(previous: LeaseSpec | undefined, takeover: boolean): LeaseSpec {
    const now = microTime(this.now());
    return {
      holderIdentity: this.options.identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: takeover || !previous?.acquireTime ? now : previous.acquireTime,
      renewTime: now,
      leaseTransitions:
        (previous?.leaseTransitions ?? 0) + (takeover && previous?.holderIdentity ? 1 : 0),
    };
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { store, name, namespace, identity } = this.options;
    const current = await store.get();
    if (!current) {
      this.lease = await store.create({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace },
        spec: this.spec(undefined, true),
      });
      return true;
    }
    const holder = current.spec.holderIdentity ?? '';
    if (holder === identity) {
      this.lease = await store.update({ ...current, spec: this.spec(current.spec, false) });
      return true;
    }
    if (holder && !this.expired(holder, current.spec.renewTime ?? '')) return false;
    this.lease = await store.update({ ...current, spec: this.spec(current.spec, true) });
    return true;
  }

  /** Another holder's lease is expired once its renewTime has not moved for a lease duration. */
  private expired(holder: string, renewTime: string): boolean {
    if (
      !this.observed ||
      this.observed.holder !== holder ||
      this.observed.renewTime !== renewTime
    ) {
      this.observed = { holder, renewTime, at: this.now() };
      return false;
    }
    return this.now() - this.observed.at > this.leaseDurationMs;
  }

  /** Stops campaigning and, when leading, hands the Lease back so a standby takes over at once. */
  async release(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (!this.leading) return;
    this.leading = false;
    const current = await this.options.store.get();
    if (current?.spec.holderIdentity !== this.options.identity) return;
    await this.options.store.update({
      ...current,
      spec: {
        ...current.spec,
        holderIdentity: null,
        acquireTime: null,
        renewTime: null,
        leaseDurationSeconds: 1,
      },
    });
    this.options.log?.('info', 'released the lease', {
      lease: `${this.options.namespace}/${this.options.name}`,
    });
  }
}
