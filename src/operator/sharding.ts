// Sharded reconciliation across replicas (SPEC §9, ADR 0015): which namespaces this replica
// reconciles. `--shards auto` follows the member Leases (framework/shard-membership.ts);
// `--shard-index i --shard-count n` is a fixed split with no coordination at all. Either way a
// namespace's owner is the rendezvous-hash winner of its name, so one namespace (its instances,
// its Templates, the sources its instances read) stays on one replica.
import { Assignment } from '../framework/rendezvous.ts';
import { ShardMembership, type ShardHooks } from '../framework/shard-membership.ts';
import type { KubeConnection } from '../kube/connection.ts';
import { KubeMemberLeaseStore } from '../kube/shard-lease-store.ts';
import type { Logger } from '../log.ts';

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
