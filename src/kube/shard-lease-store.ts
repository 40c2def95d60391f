// The member Leases of `--shards auto` over the API server: one Lease per replica, named after
// it and labelled with the shard group, carrying the view the replica has drained to. Renewals
// are PUTs carrying the resourceVersion last written, so two processes claiming one identity
// conflict instead of overwriting each other.
import type { Lease } from '../framework/coordination/leader-election.ts';
import type { MemberLease, MemberLeaseStore } from '../framework/coordination/shard-membership.ts';
import { isClusterError } from '../reconcile/cluster-port.ts';
import type { KubeHttp } from './http.ts';
import { getLease, leasesPath } from './lease-store.ts';

export const SHARD_GROUP_LABEL = 'stencil.dev/shard-group';
export const SHARD_VIEW_ANNOTATION = 'stencil.dev/shard-view';

interface LabelledLease extends Lease {
  metadata: Lease['metadata'] & {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

/** A Lease name for a replica identity: a DNS subdomain, however the identity is spelled. */
export function memberLeaseName(group: string, identity: string): string {
  const safe = identity.toLowerCase().replace(/[^a-z0-9.-]+/g, '-');
  return `${group}-shard-${safe}`.slice(0, 253).replace(/[^a-z0-9]+$/, '');
}

export class KubeMemberLeaseStore implements MemberLeaseStore {
  private own: LabelledLease | undefined;

  constructor(
    private readonly http: KubeHttp,
    private readonly namespace: string,
    private readonly group: string,
  ) {}

  private path(name?: string): string {
    return leasesPath(this.namespace, name);
  }

  async renew(
    identity: string,
    renewTime: string,
    leaseDurationSeconds: number,
    view: string,
  ): Promise<void> {
    const name = memberLeaseName(this.group, identity);
    const current = this.own ?? (await getLease<LabelledLease>(this.http, this.namespace, name));
    const lease: LabelledLease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name,
        namespace: this.namespace,
        resourceVersion: current?.metadata.resourceVersion,
        labels: { [SHARD_GROUP_LABEL]: this.group },
        annotations: { [SHARD_VIEW_ANNOTATION]: view },
      },
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: current?.spec.acquireTime ?? renewTime,
        renewTime,
      },
    };
    try {
      this.own = await this.http.request<LabelledLease>(
        current
          ? { method: 'PUT', path: this.path(name), body: lease }
          : { method: 'POST', path: this.path(), body: lease },
      );
    } catch (error) {
      // Read it afresh next round (someone removed it, or wrote it since).
      this.own = undefined;
      throw error;
    }
  }

  async list(): Promise<MemberLease[]> {
    const list = await this.http.request<{ items: LabelledLease[] }>({
      method: 'GET',
      path: this.path(),
      query: { labelSelector: `${SHARD_GROUP_LABEL}=${this.group}` },
    });
    return list.items.flatMap((lease) =>
      lease.spec.holderIdentity
        ? [
            {
              identity: lease.spec.holderIdentity,
              renewTime: lease.spec.renewTime ?? undefined,
              leaseDurationSeconds: lease.spec.leaseDurationSeconds,
              view: lease.metadata.annotations?.[SHARD_VIEW_ANNOTATION],
              resourceVersion: lease.metadata.resourceVersion,
            },
          ]
        : [],
    );
  }

  async remove(identity: string, resourceVersion?: string): Promise<void> {
    const name = memberLeaseName(this.group, identity);
    if (this.own?.metadata.name === name) this.own = undefined;
    const preconditions = resourceVersion ? { preconditions: { resourceVersion } } : {};
    try {
      await this.http.request({
        method: 'DELETE',
        path: this.path(name),
        body: { apiVersion: 'v1', kind: 'DeleteOptions', ...preconditions },
      });
    } catch (error) {
      // Gone already, or renewed since it was listed (the member is back): both fine.
      if (!isClusterError(error, 'NotFound') && !isClusterError(error, 'Conflict')) throw error;
    }
  }
}
