// Sharded reconciliation across replicas (SPEC §9, ADR 0015): which namespaces this replica
// reconciles. `--shards auto` follows the member Leases
// (framework/coordination/shard-membership.ts); `--shard-index i --shard-count n` is a fixed split
// with no coordination at all. Either way a namespace's owner is the rendezvous-hash winner of its
// name, so one namespace (its instances, its Templates, the sources its instances read) stays on
// one replica. ShardHandoff is what a change of the namespaces owned does to the controllers.
import type { Controller } from '../../framework/controller.ts';
import { parseRequestKey, requestKey } from '../../framework/reconciler.ts';
import { Assignment } from '../../framework/coordination/rendezvous.ts';
import { ShardMembership, type ShardHooks } from '../../framework/coordination/shard-membership.ts';
import type { KubeConnection } from '../../kube/connection.ts';
import { KubeMemberLeaseStore } from '../../kube/shard-lease-store.ts';
import type { Logger } from '../../log.ts';

export type ShardingOptions =
  | {
      mode: 'auto';
      identity: string;
      /** Where the member Leases live (the operator's namespace). */
      namespace: string;
      /** Replicas of one group share the keyspace; also the Lease name prefix. */
      group?: string;
      leaseDurationMs?: number;
      renewDeadlineMs?: number;
      retryPeriodMs?: number;
      /** Membership was lost: the process should exit so it restarts clean. */
      onLost: () => void;
    }
  | { mode: 'static'; index: number; count: number };

export interface Shard {
  /** How logs name this shard. */
  readonly name: string;
  owns(namespace: string): boolean;
  members(): number;
  /** Joins; `hooks.widened` has announced the first namespaces before this resolves. */
  start(hooks: ShardHooks): Promise<void>;
  /** Leaves after the caller drained its work, so the others take over at once. */
  leave(): Promise<void>;
}

class StaticShard implements Shard {
  private readonly assignment: Assignment;
  readonly name: string;

  constructor(
    private readonly index: number,
    count: number,
  ) {
    this.assignment = new Assignment(Array.from({ length: count }, (_, i) => String(i)));
    this.name = `${index}/${count}`;
  }

  owns(namespace: string): boolean {
    return this.assignment.owner(namespace) === String(this.index);
  }

  members(): number {
    return this.assignment.members.length;
  }

  start(hooks: ShardHooks): Promise<void> {
    hooks.widened((namespace) => this.owns(namespace));
    return Promise.resolve();
  }

  leave(): Promise<void> {
    return Promise.resolve();
  }
}

class MemberShard implements Shard {
  private membership: ShardMembership | undefined;
  readonly name: string;

  constructor(
    private readonly options: Extract<ShardingOptions, { mode: 'auto' }>,
    private readonly connection: KubeConnection,
    private readonly log: Logger,
  ) {
    this.name = options.identity;
  }

  owns(namespace: string): boolean {
    return this.membership?.owns(namespace) ?? false;
  }

  members(): number {
    return this.membership?.members().length ?? 0;
  }

  async start(hooks: ShardHooks): Promise<void> {
    const { options } = this;
    const membership = new ShardMembership({
      identity: options.identity,
      store: new KubeMemberLeaseStore(
        this.connection.http,
        options.namespace,
        options.group ?? 'stencil',
      ),
      // Not a spread of `hooks`: a class's methods live on its prototype, which a spread drops.
      hooks: {
        narrowed: () => hooks.narrowed(),
        widened: (gained) => hooks.widened(gained),
        lost: (why) => {
          hooks.lost(why);
          options.onLost();
        },
      },
      leaseDurationMs: options.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs,
      log: (level, message, fields) => this.log[level](message, fields),
    });
    this.membership = membership;
    // The write fence: nothing is written once this replica's Lease may have expired for the
    // others, whatever is still in flight.
    this.connection.cluster.fenceWrites(() => membership.writeRefusal());
    await membership.start();
  }

  async leave(): Promise<void> {
    await this.membership?.leave();
  }
}

export function createShard(
  options: ShardingOptions,
  connection: KubeConnection,
  log: Logger,
): Shard {
  return options.mode === 'static'
    ? new StaticShard(options.index, options.count)
    : new MemberShard(options, connection, log);
}

/** What the hand-off needs of a controller whose keys follow the owner of their namespace. */
export type ShardedController = Pick<
  Controller,
  'requests' | 'enqueue' | 'abortWhere' | 'abortNow'
>;

export interface ShardHandoffOptions {
  /** Whether this replica owns `namespace` now (Shard.owns). */
  owns(namespace: string): boolean;
  /** Every controller; a cluster-scoped key (namespace "") goes with the owner of "". */
  controllers: readonly ShardedController[];
  /** The instance controller, one of them: its keys are what the logs and `handedOff` count. */
  instances: ShardedController;
  /** Whether an instance has source or drift watches, which `release` drops when it leaves. */
  tracks(instanceKey: string): boolean;
  release(instanceKey: string): void;
  /** The cluster-scoped key came here: this replica now writes the webhook's configuration. */
  clusterScopeGained(): void;
  /** Instances handed over to other replicas (`out`) or taken over from them (`in`). */
  handedOff?(direction: 'in' | 'out', instances: number): void;
  log: Logger;
}

/**
 * The shard hooks of the operator: what this replica stops owning is aborted and drained before
 * it lets go (and the instances' source watches are dropped); what it gains is enqueued at once.
 */
export class ShardHandoff implements ShardHooks {
  /** Set once the first namespaces were taken: later ones are handoffs. */
  private sharded = false;

  constructor(private readonly options: ShardHandoffOptions) {}

  /** Stops and drains the keys of namespaces no longer owned, and drops their source watches. */
  async narrowed(): Promise<void> {
    const { controllers, instances } = this.options;
    const owns = (namespace: string): boolean => this.options.owns(namespace);
    const disowned = (key: string): boolean => !owns(parseRequestKey(key).namespace);
    await Promise.all(controllers.map((controller) => controller.abortWhere(disowned)));
    let released = 0;
    for (const request of instances.requests()) {
      const key = requestKey(request);
      if (owns(request.namespace) || !this.options.tracks(key)) continue;
      this.options.release(key);
      released++;
    }
    if (released === 0) return;
    this.options.handedOff?.('out', released);
    this.options.log.info('shard handed instances over', { instances: released });
  }

  /** Enqueues everything in the namespaces just gained. */
  widened(gained: (namespace: string) => boolean): void {
    const { controllers, instances } = this.options;
    let taken = 0;
    for (const controller of controllers)
      for (const request of controller.requests()) {
        if (!gained(request.namespace)) continue;
        controller.enqueue(request);
        if (controller === instances) taken++;
      }
    // The cluster-scoped key came here: this replica now runs the Sets (enqueued above, as keys
    // of namespace "") and writes the webhook's configuration.
    if (gained('')) this.options.clusterScopeGained();
    if (taken > 0) this.options.log.info('shard took instances over', { instances: taken });
    // The first namespaces a replica takes are its start, not a handoff.
    if (this.sharded && taken > 0) this.options.handedOff?.('in', taken);
    this.sharded = true;
  }

  /** The member Lease was not renewed in time: no drain may outlive it, work stops at once. */
  lost(why: string): void {
    this.options.log.warn('left the shard group', { why });
    for (const controller of this.options.controllers) void controller.abortNow();
  }
}
