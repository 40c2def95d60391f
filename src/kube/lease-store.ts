// The leader-election Lease over the API server: GET, POST to create, PUT to update (the
// resourceVersion in the body makes every update conditional: a stale one fails with 409).
import type { Lease, LeaseStore } from '../framework/coordination/leader-election.ts';
import { isClusterError } from '../reconcile/cluster-port.ts';
import type { KubeHttp } from './http.ts';

/** The Leases of a namespace, or one of them. */
export function leasesPath(namespace: string, name?: string): string {
  const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  return name ? `${base}/${encodeURIComponent(name)}` : base;
}

/** One Lease, or undefined when there is none. */
export async function getLease<T extends Lease = Lease>(
  http: KubeHttp,
  namespace: string,
  name: string,
): Promise<T | undefined> {
  try {
    return await http.request<T>({ method: 'GET', path: leasesPath(namespace, name) });
  } catch (error) {
    if (isClusterError(error, 'NotFound')) return undefined;
    throw error;
  }
}

export class KubeLeaseStore implements LeaseStore {
  constructor(
    private readonly http: KubeHttp,
    private readonly namespace: string,
    private readonly name: string,
  ) {}

  private path(name?: string): string {
    return leasesPath(this.namespace, name);
  }

  get(): Promise<Lease | undefined> {
    return getLease(this.http, this.namespace, this.name);
  }

  create(lease: Lease): Promise<Lease> {
    return this.http.request<Lease>({ method: 'POST', path: this.path(), body: lease });
  }

  update(lease: Lease): Promise<Lease> {
    return this.http.request<Lease>({ method: 'PUT', path: this.path(this.name), body: lease });
  }
}
