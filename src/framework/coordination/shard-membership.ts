// Dynamic shard membership (`--shards auto`, ADR 0015). Every replica holds its own member Lease
// and lists the others'; the live members split the namespaces by rendezvous hashing. A view is
// the sorted list of live members, and each replica publishes on its Lease the view it has
// *drained to*: it publishes only after every namespace that view takes from it has stopped.
// A replica reconciles a namespace only while it owns it under both the view it is moving to
// and the last view that every live member had published (settled). So a namespace changes
// hands only after its old owner said it let go: the fence is the Lease, not a timer. A member
// that dies is dropped once its Lease has not been renewed for a lease duration; its own write
// fence stopped its writes a renew deadline after its last renewal, which is earlier.
import { createHash } from 'node:crypto';
import { FailureStreak } from '../failure-streak.ts';
import { microTime } from './leader-election.ts';
import { Assignment } from './rendezvous.ts';

/** One member's Lease as the membership reads it. */
export interface MemberLease {
  identity: string;
  /** undefined once released */
  renewTime?: string;
  leaseDurationSeconds?: number;
  /** The view this member has drained to (its published acknowledgement). */
  view?: string;
  resourceVersion?: string;
}

/** The member Leases of one shard group, over the API server. */
export interface MemberLeaseStore {
  /** Creates or renews this replica's own Lease, publishing `view`. */
  renew(
    identity: string,
    renewTime: string,
    leaseDurationSeconds: number,
    view: string,
  ): Promise<void>;
  list(): Promise<MemberLease[]>;
  /**
   * Removes a member's Lease (ours on shutdown, or one long expired); with `resourceVersion`,
   * only if it is still that version (a member that came back keeps its Lease).
   */
  remove(identity: string, resourceVersion?: string): Promise<void>;
}

export interface ShardHooks {
  /**
   * The namespaces this replica may reconcile may have narrowed (`owns` already answers the new
   * way): stop and drain the in-flight work of those it no longer owns before resolving.
   */
  narrowed(): Promise<void>;
  /** The namespaces this replica may reconcile widened: start the ones it gained. */
  widened(gained: (namespace: string) => boolean): void;
  /** This replica's own Lease could not be renewed in time: it is no member any more. */
  lost(why: string): void;
}

export interface ShardMembershipOptions {
  identity: string;
  store: MemberLeaseStore;
  hooks: ShardHooks;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  log?: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
  now?: () => number;
}

/** A short, stable name of a member list, published on the Leases. */
export function viewId(members: readonly string[]): string {
  return createHash('sha256')
    .update([...members].sort().join('\n'))
    .digest('hex')
    .slice(0, 16);
}

/** Leases expired this many lease durations ago are removed by whichever member sees them. */
const GARBAGE_AFTER_DURATIONS = 10;

export class ShardMembership {
  /** The view being moved to: namespaces it takes away are no longer reconciled here. */
  private target = new Assignment([]);
  /** The last view every live member had drained to. */
  private settled = new Assignment([]);
  /** The view id on our Lease. */
  private published = '';
  /** The view whose losses have been stopped and drained (published only after that). */
  private drained = '';
  private lastRenew = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  /** When (our clock) each member's renewTime last changed: expiry never compares clocks. */
  private readonly seen = new Map<string, { renewTime: string; at: number }>();
  private ticking: Promise<void> | undefined;
  /** Failed rounds, said once when they start and once when they end. */
  private readonly streak: FailureStreak;

  constructor(private readonly options: ShardMembershipOptions) {
    this.streak = new FailureStreak(
      'shard membership round',
      options.log,
      { identity: options.identity },
      () => this.now(),
    );
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  private get leaseDurationMs(): number {
    return this.options.leaseDurationMs ?? 15_000;
  }

  private get renewDeadlineMs(): number {
    return this.options.renewDeadlineMs ?? 10_000;
  }

  get identity(): string {
    return this.options.identity;
  }

  /** Whether this replica may reconcile `namespace` now. */
  owns(namespace: string): boolean {
    return this.ownsUnder(this.target, this.settled, namespace);
  }

  private ownsUnder(target: Assignment, settled: Assignment, namespace: string): boolean {
    const me = this.options.identity;
    return target.owner(namespace) === me && settled.owner(namespace) === me;
  }

  /**
   * Moves to a new (target, settled) pair: what this replica lost stops and drains first, then
   * what it gained starts. A namespace can be regained on a target change alone (a member that
   * joined and died before anyone settled): it was this replica's in the settled view, and the
   * only member that could have taken it meanwhile is one whose Lease expired, so whose writes
   * its own fence has already stopped.
   */
  private async move(target: Assignment, settled: Assignment): Promise<void> {
    const [oldTarget, oldSettled] = [this.target, this.settled];
    this.target = target;
    this.settled = settled;
    await this.options.hooks.narrowed();
    this.drained = viewId(target.members);
    this.options.hooks.widened((ns) => this.owns(ns) && !this.ownsUnder(oldTarget, oldSettled, ns));
  }

  /** The live members of the view being moved to. */
  members(): readonly string[] {
    return this.target.members;
  }

  /** Why this replica may not write now (its Lease may be about to expire for the others). */
  writeRefusal(): string | undefined {
    if (this.stopped) return 'this replica left its shard group';
    const since = this.now() - this.lastRenew;
    if (since > this.renewDeadlineMs)
      return `the shard member Lease was last renewed ${since} ms ago (renew deadline ${this.renewDeadlineMs} ms)`;
    return undefined;
  }

  /** Joins: the first round runs before this resolves, so a lone replica starts at once. */
  async start(): Promise<void> {
    await this.round();
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.round().finally(() => this.schedule());
    }, this.options.retryPeriodMs ?? 2_000);
    this.timer.unref();
  }

  /** One renewal and one look at the others; never two at once. */
  round(): Promise<void> {
    this.ticking ??= this.tick().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async tick(): Promise<void> {
    try {
      await this.renew();
      const leases = await this.options.store.list();
      await this.follow(leases);
      this.streak.succeeded();
    } catch (error) {
      // A member renews every period whatever happens: it must before its renew deadline.
      this.streak.failed(error);
      if (!this.stopped && this.now() - this.lastRenew > this.renewDeadlineMs) this.lose();
    }
  }

  private async renew(): Promise<void> {
    if (this.stopped) return;
    const at = this.now();
    await this.options.store.renew(
      this.options.identity,
      microTime(at),
      Math.ceil(this.leaseDurationMs / 1000),
      this.published,
    );
    this.lastRenew = at;
  }

  /** Moves towards the view the Leases show, draining before acknowledging it. */
  private async follow(leases: MemberLease[]): Promise<void> {
    if (this.stopped) return;
    const live = this.live(leases);
    const members = [...new Set([...live.map((l) => l.identity), this.options.identity])].sort();
    const id = viewId(members);
    const changed = id !== viewId(this.target.members);
    if (changed) this.options.log?.('info', 'shard members changed', { members });
    // A drain that failed in an earlier round is retried before anything is published.
    if (changed || this.drained !== id)
      await this.move(changed ? new Assignment(members) : this.target, this.settled);
    if (this.published !== id) {
      this.published = id;
      await this.renew();
    }
    const everyoneThere = live.every(
      (lease) => lease.identity === this.options.identity || lease.view === id,
    );
    if (everyoneThere && viewId(this.settled.members) !== id) {
      this.options.log?.('info', 'shard view settled', { members });
      await this.move(this.target, this.target);
    }
    await this.collectGarbage(leases);
  }

  /** The members whose Leases were renewed within a lease duration (as this replica saw it). */
  private live(leases: MemberLease[]): MemberLease[] {
    const now = this.now();
    return leases.filter((lease) => {
      if (!lease.renewTime) return false;
      const seen = this.seen.get(lease.identity);
      if (!seen || seen.renewTime !== lease.renewTime) {
        // First sight of this renewal: a Lease renewed long ago (a crashed replica's) is not
        // waited for; otherwise the renewal counts from now, on our clock.
        const age = now - Date.parse(lease.renewTime);
        const duration = (lease.leaseDurationSeconds ?? 15) * 1000;
        this.seen.set(lease.identity, {
          renewTime: lease.renewTime,
          at: !seen && age > duration ? now - age : now,
        });
      }
      return now - this.seen.get(lease.identity)!.at <= this.leaseDurationMs;
    });
  }

  private async collectGarbage(leases: MemberLease[]): Promise<void> {
    const limit = GARBAGE_AFTER_DURATIONS * this.leaseDurationMs;
    for (const lease of leases) {
      const seen = this.seen.get(lease.identity);
      const expiredLongAgo = !lease.renewTime || (seen && this.now() - seen.at > limit);
      if (lease.identity !== this.options.identity && expiredLongAgo) {
        this.seen.delete(lease.identity);
        await this.options.store
          .remove(lease.identity, lease.resourceVersion)
          .catch(() => undefined);
      }
    }
  }

  private lose(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.target = new Assignment([]);
    this.options.log?.('warn', 'lost shard membership', { identity: this.options.identity });
    this.options.hooks.lost(
      'the shard member Lease could not be renewed within the renew deadline',
    );
  }

  /**
   * Leaves the group after the caller drained its work: the Lease goes, so the others take the
   * namespaces over at their next round instead of after a lease duration.
   */
  async leave(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking?.catch(() => undefined);
    this.target = new Assignment([]);
    await this.options.store.remove(this.options.identity);
    this.options.log?.('info', 'left the shard group', { identity: this.options.identity });
  }
}
