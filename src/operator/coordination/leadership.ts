// Leader election for the operator (SPEC §9 --leader-elect): a Lease in the operator's
// namespace; only its holder reconciles and writes (fenced), and a replica that loses it stops
// and tells the process.
import { LeaderElector } from '../../framework/coordination/leader-election.ts';
import type { KubeConnection } from '../../kube/connection.ts';
import { KubeLeaseStore } from '../../kube/lease-store.ts';
import type { Logger } from '../../log.ts';

export interface LeaderElectionOptions {
  identity: string;
  namespace: string;
  name?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Leadership was lost: the process should exit so it restarts clean (client-go's choice). */
  onLost: () => void;
}

export interface LeadershipHooks {
  onStartedLeading(): void;
  /** Called before `onLost`: stop reconciling at once. */
  onStoppedLeading(): void;
}

/** Campaigns for the Lease until stopped; the hooks follow its holder. */
export function campaign(
  options: LeaderElectionOptions,
  connection: KubeConnection,
  log: Logger,
  hooks: LeadershipHooks,
): LeaderElector {
  const name = options.name ?? 'stencil-leader';
  const elector = new LeaderElector({
    ...options,
    name,
    store: new KubeLeaseStore(connection.http, options.namespace, name),
    onStartedLeading: () => hooks.onStartedLeading(),
    onStoppedLeading: () => {
      hooks.onStoppedLeading();
      options.onLost();
    },
    log: (level, message, fields) => log[level](message, fields),
  });
  // The write fence: any write later than the renew deadline after the last renewal is refused,
  // whatever is still in flight when the Lease is lost.
  connection.cluster.fenceWrites(() => elector.writeRefusal());
  elector.start();
  return elector;
}
